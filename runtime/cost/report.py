"""The records a cost report is made of."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .measures import Cost
from .sizes import Size

__all__ = ["CostReport", "KVCache", "NodeCost", "OpTypeCost", "ValueSize"]


@dataclass(frozen=True)
class NodeCost:
    """One node of the main graph (a control-flow node includes its subgraphs' cost); ``note``
    says why a measure is unknown."""

    name: str
    op_type: str
    domain: str
    cost: Cost
    note: str = ""


@dataclass(frozen=True)
class OpTypeCost:
    """The nodes of one op type together (``unknown``: how many have some unknown measure)."""

    op_type: str
    domain: str
    nodes: int
    cost: Cost
    unknown: int = 0


@dataclass(frozen=True)
class ValueSize:
    """An activation (a graph input or a node's output) and its bytes (None: its size is not known)."""

    name: str
    bytes: Size


@dataclass(frozen=True)
class KVCache:
    """The key/value cache a decoder reads (``past`` inputs) and writes (``present`` outputs)."""

    past_inputs: tuple[str, ...] = ()
    present_outputs: tuple[str, ...] = ()
    past_bytes: Size = 0
    present_bytes: Size = 0


@dataclass(frozen=True)
class CostReport:
    """What a model costs; sizes are ints, symbolic expressions of the input symbols, or None.

    ``total`` sums the nodes whose measure is known; ``unknown_nodes`` counts, per measure, the
    nodes left out of it (the total is then a lower bound). ``peak_activation_bytes`` is the
    largest sum of activations alive at once along the graph's node order (None when a live
    value's size is unknown, or when symbolic sums do not order). ``symbols`` are the input
    symbols the formulas still name; ``bindings`` the values given for symbols."""

    nodes: tuple[NodeCost, ...]
    total: Cost
    unknown_nodes: dict[str, int]
    by_op_type: tuple[OpTypeCost, ...]
    parameters: int
    weight_bytes: int
    external_weight_bytes: int
    activations: tuple[ValueSize, ...]
    activation_bytes: Size
    unknown_activations: int
    peak_activation_bytes: Size
    kv_cache: KVCache
    symbols: tuple[str, ...]
    bindings: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data: numbers where every symbol is bound, formula strings otherwise, null for unknown."""
        def shown(value: Size) -> Any:
            return value if value is None or type(value) is int else str(value)

        def cost(c: Cost) -> dict[str, Any]:
            return {"macs": shown(c.macs), "flops": shown(c.total_flops), "other_flops": shown(c.flops),
                    "transcendental": shown(c.transcendental), "bytes_read": shown(c.bytes_read),
                    "bytes_written": shown(c.bytes_written)}

        return {
            "convention": "flops = 2 * macs + other_flops (one multiply-accumulate is 2 FLOPs); "
                          "transcendental functions are counted apart",
            "bindings": dict(self.bindings),
            "symbols": list(self.symbols),
            "nodes": [{"name": n.name, "op_type": n.op_type, "domain": n.domain, **cost(n.cost),
                       **({"note": n.note} if n.note else {})} for n in self.nodes],
            "by_op_type": [{"op_type": o.op_type, "domain": o.domain, "nodes": o.nodes, "unknown": o.unknown,
                            **cost(o.cost)} for o in self.by_op_type],
            "total": {**cost(self.total), "unknown_nodes": dict(self.unknown_nodes),
                      "parameters": self.parameters, "weight_bytes": self.weight_bytes,
                      "external_weight_bytes": self.external_weight_bytes,
                      "activation_bytes": shown(self.activation_bytes),
                      "unknown_activations": self.unknown_activations,
                      "peak_activation_bytes": shown(self.peak_activation_bytes),
                      "kv_cache": {"past_inputs": list(self.kv_cache.past_inputs),
                                   "present_outputs": list(self.kv_cache.present_outputs),
                                   "past_bytes": shown(self.kv_cache.past_bytes),
                                   "present_bytes": shown(self.kv_cache.present_bytes)}},
            "activations": [{"name": v.name, "bytes": shown(v.bytes)} for v in self.activations],
            "notes": list(self.notes),
        }
