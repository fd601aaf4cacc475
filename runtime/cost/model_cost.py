"""Costing a whole model on top of type and shape inference: every node, the weights, the
activations and their peak, the key/value cache."""
from __future__ import annotations

from dataclasses import fields
from typing import Any, Callable, Iterator, Mapping

from opspec.runtime.inference.api import infer
from opspec.runtime.inference.read_attributes import attribute_values
from opspec.runtime.inference.read_tensors import initializer_data, tensor_type
from opspec.runtime.inference.read_types import DimReader
from opspec.runtime.inference.resolve import EntryKind, OpEntry, normalize_opsets, resolve
from opspec.runtime.ir import ModelSource, load_model
from opspec.runtime.ir.codes import DataLocation
from opspec.runtime.op_set import OpSet, op_set_or_installed
from opspec.runtime.shape import Sym

from .code import CodeContext
from .measures import ZERO, Cost, bind
from .node_cost import node_cost
from .report import CostReport, KVCache, NodeCost, OpTypeCost, ValueSize
from .sizes import Size, element_count, tensor_bytes, value_bytes

__all__ = ["cost"]

#: Subgraphs nested deeper than inference follows are not costed (their cost is unknown).
MAX_NESTING = 64
#: Above this many candidates a symbolic peak is left unknown (it needs the symbols set): a max of
#: more formulas than that reads as noise.
_PEAK_CANDIDATES = 4


class _Walk:
    """State of one model's costing: how each op type resolves, and the main graph's constants."""

    def __init__(self, model: Any, op_set: OpSet) -> None:
        self.op_set = op_set
        self.opsets = normalize_opsets(model.opset_import, op_set.registry)
        self.functions = {(f.domain, f.name): f for f in model.functions}
        self.implied: dict[str, int] = {}
        self.entries: dict[tuple[str, str], OpEntry] = {}
        self.constants: dict[str, Any] = {t.name: t for t in model.graph.initializer}
        for node in model.graph.node:
            if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and len(node.output) == 1:
                for attribute in node.attribute:
                    if attribute.name == "value" and attribute.HasField("t"):
                        self.constants[node.output[0]] = attribute.t

    def entry(self, domain: str, op_type: str) -> OpEntry:
        key = (domain, op_type)
        found = self.entries.get(key)
        if found is None:
            found = self.entries[key] = resolve(self.op_set, domain, op_type, self.opsets, self.functions,
                                                 self.implied)
        return found

    def constant(self, name: str) -> int | None:
        tensor = self.constants.get(name)
        if tensor is None or tensor.data_location == DataLocation.EXTERNAL:
            return None
        data = initializer_data(tensor)
        if data is None or len(data.values) != 1 or type(data.values[0]) is not int:
            return None
        return data.values[0]

    def node(self, node: Any, type_of: Callable[[str], Any], depth: int = 0) -> tuple[Cost, str]:
        entry = self.entry(node.domain, node.op_type)
        inputs, outputs = list(node.input), list(node.output)
        attributes = attribute_values(node.attribute)
        schema = entry.schema if entry.kind is EntryKind.SCHEMA else None

        def context() -> CodeContext:
            return CodeContext(node.name, inputs, outputs, attributes, type_of,
                               lambda graph: self.graph(graph, type_of, depth + 1), self.constant)

        cost, note = node_cost(schema, inputs, outputs, attributes, type_of, context)
        if schema is None:
            note = "a call of a model-local function: its body is not costed" \
                if entry.kind is EntryKind.FUNCTION else (entry.reason or note)
        return cost, note

    def graph(self, graph: Any, outer: Callable[[str], Any], depth: int) -> Cost:
        """One run of a subgraph, its values' types read from what inference wrote into it."""
        if depth > MAX_NESTING:
            return Cost(None, None, None, None, None)
        reader = DimReader()
        types: dict[str, Any] = {t.name: tensor_type(t) for t in graph.initializer}
        for info in (*graph.input, *graph.output, *graph.value_info):
            if info.HasField("type"):
                types[info.name] = reader.type(info.type)

        def type_of(name: str) -> Any:
            found = types.get(name)
            return found if found is not None else outer(name)

        total = ZERO
        for node in graph.node:
            total = total + self.node(node, type_of, depth)[0]
        return total


def _subgraphs(node: Any) -> Iterator[Any]:
    for attribute in node.attribute:
        if attribute.HasField("g"):
            yield attribute.g
        yield from attribute.graphs


def _graph_reads(graph: Any, depth: int = 0) -> Iterator[str]:
    """Every name the nodes of ``graph`` and of the graphs inside it read (outer values among them)."""
    for node in graph.node:
        yield from node.input
        if depth < MAX_NESTING:
            for inner in _subgraphs(node):
                yield from _graph_reads(inner, depth + 1)


def _initializers(graph: Any, depth: int = 0) -> Iterator[Any]:
    yield from graph.initializer
    for sparse in graph.sparse_initializer:
        yield sparse.values
    if depth < MAX_NESTING:
        for node in graph.node:
            for inner in _subgraphs(node):
                yield from _initializers(inner, depth + 1)


def _at_least(a: Size, b: Size) -> bool | None:
    """Whether ``a >= b`` for every value of the symbols (None: it depends on them)."""
    difference = a - b
    if type(difference) is int:
        return difference >= 0
    return True if difference.never_negative else None


def _peak(steps: Iterator[Size]) -> tuple[Size, str]:
    """The largest of the live totals at each step, or None and why: a live value's size is
    unknown, or the symbolic totals do not reduce to a few candidates."""
    candidates: list[Any] = []
    for total in steps:
        if total is None:
            return None, "the peak of live activations is unknown: a value alive at some node has no known size"
        if any(_at_least(c, total) for c in candidates):
            continue
        candidates = [c for c in candidates if not _at_least(total, c)] + [total]
        if len(candidates) > _PEAK_CANDIDATES:
            return None, ("the peak of live activations depends on which symbols are larger: "
                          "give them values with --set (bindings) to get it")
    if not candidates:
        return 0, ""
    return (candidates[0] if len(candidates) == 1 else Sym.max(*candidates)), ""


def _live_totals(graph: Any, sizes: Mapping[str, Size], inputs: list[str]) -> Iterator[Size]:
    """The bytes of the activations alive while each node runs, in the graph's node order."""
    last_use: dict[str, int] = {}
    for index, node in enumerate(graph.node):
        for name in node.input:
            last_use[name] = index
        for inner in _subgraphs(node):
            for name in _graph_reads(inner):
                last_use[name] = index
    ends = len(graph.node)
    for output in graph.output:
        last_use[output.name] = ends
    live: Size = 0
    unknown = 0
    freed_at: dict[int, list[str]] = {}

    def hold(name: str, index: int) -> None:
        nonlocal live, unknown
        size = sizes.get(name)
        if size is None:
            unknown += 1
        else:
            live = live + size
        freed_at.setdefault(max(last_use.get(name, index), index), []).append(name)

    for name in inputs:
        hold(name, 0)
    for index, node in enumerate(graph.node):
        for name in node.output:
            if name:
                hold(name, index)
        yield None if unknown else live
        for name in freed_at.pop(index, ()):
            size = sizes.get(name)
            if size is None:
                unknown -= 1
            else:
                live = live - size


def _magnitude(value: Size) -> int:
    """A number to order op types by: the value itself, a formula at every symbol 1, 0 when unknown."""
    if type(value) is Sym:
        return value.evaluate({name: 1 for name in value.names()})
    return value if type(value) is int else 0


def _symbols(values: Iterator[Size]) -> tuple[str, ...]:
    names: set[str] = set()
    for value in values:
        if type(value) is Sym:
            names |= value.names()
    return tuple(sorted(names))


def _costs(cost: Cost) -> Iterator[Size]:
    return (getattr(cost, f.name) for f in fields(Cost))


def _sum_known(costs: list[Cost]) -> tuple[Cost, dict[str, int]]:
    totals: dict[str, Size] = {f.name: 0 for f in fields(Cost)}
    unknown = {f.name: 0 for f in fields(Cost)}
    for cost in costs:
        for f in fields(Cost):
            value = getattr(cost, f.name)
            if value is None:
                unknown[f.name] += 1
            else:
                totals[f.name] = totals[f.name] + value
    return Cost(**totals), unknown


def cost(model: ModelSource, bindings: Mapping[str, int] | None = None, *, op_set: OpSet | None = None) -> CostReport:
    """What ``model`` costs (a path, bytes or a ``ModelProto``; never changed): per node of the main
    graph and in total, as formulas of its input symbols, as numbers where ``bindings`` set every
    symbol a formula names (``{"B": 1, "S": 128}``). Operators are looked up in ``op_set`` (None:
    the installed one). Raises ``ModelLoadError`` for unreadable input."""
    bound = dict(bindings or {})
    op_set = op_set_or_installed(op_set)
    result = infer(model, data_prop=True, op_set=op_set)
    inferred = result.model
    if isinstance(inferred, (bytes, bytearray, memoryview)):
        inferred = load_model(bytes(inferred)).model
    walk = _Walk(inferred, op_set)
    graph = inferred.graph
    type_of = result.type_of

    nodes = []
    named: set[str] = set()  # the symbols the counts name before any is bound
    for index, node in enumerate(graph.node):
        node_cost_, note = walk.node(node, type_of)
        named.update(_symbols(_costs(node_cost_)))
        nodes.append(NodeCost(node.name or f"{node.op_type}_{index}", node.op_type, node.domain,
                              node_cost_.bound(bound), note))
    total, unknown_nodes = _sum_known([n.cost for n in nodes])

    by_type: dict[tuple[str, str], list[NodeCost]] = {}
    for n in nodes:
        by_type.setdefault((n.domain, n.op_type), []).append(n)
    op_types = []
    for (domain, op_type), members in by_type.items():
        summed, unknown = _sum_known([n.cost for n in members])
        op_types.append(OpTypeCost(op_type, domain, len(members), summed,
                                   sum(1 for n in members if any(v is None for v in _costs(n.cost)))))
    op_types.sort(key=lambda o: (-_magnitude(o.cost.macs), -_magnitude(o.cost.total_flops), o.op_type))

    parameters = weight_bytes = external_bytes = 0
    for tensor in _initializers(graph):
        count = element_count(tuple(tensor.dims)) or 0
        size = tensor_bytes(tensor.data_type, count) or 0
        parameters += count
        weight_bytes += size
        if tensor.data_location == DataLocation.EXTERNAL:
            external_bytes += size

    initializer_names = {t.name for t in graph.initializer}
    inputs = [i.name for i in graph.input if i.name not in initializer_names]
    activation_names = inputs + [name for node in graph.node for name in node.output if name]
    unbound = {name: value_bytes(type_of(name)) for name in activation_names}
    named.update(_symbols(iter(unbound.values())))
    sizes = {name: bind(size, bound) for name, size in unbound.items()}
    activations = tuple(ValueSize(name, sizes[name]) for name in activation_names)
    activation_total, unknown_sizes = _sum_known([Cost(bytes_read=v.bytes) for v in activations])
    peak, peak_note = _peak(_live_totals(graph, sizes, inputs))

    past = tuple(name for name in inputs if "past" in name.lower())
    present = tuple(o.name for o in graph.output if "present" in o.name.lower())
    past_total, _ = _sum_known([Cost(bytes_read=sizes.get(name)) for name in past])
    present_total, _ = _sum_known([Cost(bytes_read=sizes.get(name)) for name in present])
    kv = KVCache(past, present,
                 past_total.bytes_read if all(sizes.get(n) is not None for n in past) else None,
                 present_total.bytes_read if all(sizes.get(n) is not None for n in present) else None)

    notes = [peak_note] if peak_note else []
    unused = sorted(set(bound) - named)
    if unused:
        notes.append(f"no count names {', '.join(unused)} (the model's symbols: {', '.join(sorted(named)) or 'none'})")
    if result.errors:
        notes.append(f"inference reported {len(result.errors)} node error(s); costs of those nodes may be unknown")
    symbols = _symbols(iter([*(v for n in nodes for v in _costs(n.cost)), *sizes.values(), peak]))
    return CostReport(
        nodes=tuple(nodes), total=total, unknown_nodes=unknown_nodes, by_op_type=tuple(op_types),
        parameters=parameters, weight_bytes=weight_bytes, external_weight_bytes=external_bytes,
        activations=activations, activation_bytes=activation_total.bytes_read,
        unknown_activations=unknown_sizes["bytes_read"], peak_activation_bytes=peak, kv_cache=kv,
        symbols=symbols, bindings=bound, notes=tuple(notes),
    )
