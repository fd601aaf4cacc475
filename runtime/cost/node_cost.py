"""The cost of one node: its schema's cost block evaluated against what inference knows of it."""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from opspec.runtime.formula import evaluate
from opspec.runtime.schema import OpSchema

from .code import CARRIES_BYTES, CODE, CodeContext
from .kinds import COST_KINDS, Measure
from .measures import Cost
from .node_env import NodeEnv
from .sizes import Size, add_sizes, value_bytes

__all__ = ["io_bytes", "node_cost"]

_UNKNOWN_WORK = {"macs": None, "flops": None, "transcendental": None}


def io_bytes(names: Sequence[str], type_of: Callable[[str], Any]) -> Size:
    """Bytes of the named values (empty names skipped); unknown when any size is."""
    total: Size = 0
    for name in names:
        if name:
            total = add_sizes(total, value_bytes(type_of(name)))
    return total


def node_cost(schema: OpSchema | None, inputs: Sequence[str], outputs: Sequence[str], attributes: Mapping[str, Any],
              type_of: Callable[[str], Any], code_context: Callable[[], CodeContext]) -> tuple[Cost, str]:
    """The node's cost and, when a measure is unknown by declaration, why."""
    read, written = io_bytes(inputs, type_of), io_bytes(outputs, type_of)
    if schema is None:
        return Cost(None, None, None, read, written), "no schema: the op is unknown"
    block = schema.cost
    if not block:
        return Cost(None, None, None, read, written), f"{schema.name}-{schema.since_version} declares no cost"
    if "unknown" in block:
        return Cost(None, None, None, read, written), block["unknown"]
    if "code" in block:
        computed = CODE[block["code"]](code_context())
        if block["code"] in CARRIES_BYTES:
            return computed, ""
        return Cost(computed.macs, computed.flops, computed.transcendental, read, written), ""
    formulas = dict(COST_KINDS.get(block.get("kind", ""), {}))
    formulas.update({measure: text for measure, text in block.items() if measure not in ("kind",)})
    env = NodeEnv(schema, inputs, outputs, attributes, type_of)
    values: dict[str, Size] = {}
    for measure in Measure:
        text = formulas.get(measure.value)
        if text is not None:
            values[measure.value] = evaluate(text, env)
    return Cost(
        macs=values.get("macs", 0), flops=values.get("flops", 0), transcendental=values.get("transcendental", 0),
        bytes_read=values.get("bytes_read", read), bytes_written=values.get("bytes_written", written),
    ), ""
