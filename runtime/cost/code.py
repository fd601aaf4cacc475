"""Costs a formula cannot say, computed in code: control flow over subgraphs, and Einsum."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from opspec.runtime.contract.values import TensorType
from opspec.runtime.shape import Sym

from .measures import Cost
from .sizes import Size, element_count

__all__ = ["CARRIES_BYTES", "CODE", "CodeContext", "trip_symbol"]


@dataclass(frozen=True)
class CodeContext:
    """One node, as a cost in code sees it."""

    name: str
    inputs: Sequence[str]
    outputs: Sequence[str]
    attributes: Mapping[str, Any]
    type_of: Callable[[str], Any]
    #: The cost of one run of a graph attribute (a ``GraphProto``), seen from this node's scope.
    graph_cost: Callable[[Any], Cost]
    #: An integer constant's value by name (an initializer or a Constant's output), else None.
    constant: Callable[[str], int | None]

    def shape(self, index: int) -> tuple[Any, ...] | None:
        if index >= len(self.inputs) or not self.inputs[index]:
            return None
        found = self.type_of(self.inputs[index])
        return found.shape if type(found) is TensorType else None


def trip_symbol(node_name: str) -> Sym:
    """The symbol standing for a loop's trip count when the model does not fix it."""
    return Sym("trips_" + (re.sub(r"\W", "_", node_name) or "loop"))


def _if(node: CodeContext) -> Cost:
    branches = [node.graph_cost(node.attributes[name]) for name in ("then_branch", "else_branch")
                if name in node.attributes]
    if len(branches) != 2:
        return Cost(None, None, None, None, None)
    return branches[0].larger(branches[1])


def _loop(node: CodeContext) -> Cost:
    body = node.attributes.get("body")
    if body is None:
        return Cost(None, None, None, None, None)
    trips: Size
    if node.inputs and node.inputs[0]:
        trips = node.constant(node.inputs[0])
        if trips is None:
            trips = trip_symbol(node.name)
    else:
        trips = trip_symbol(node.name)
    return node.graph_cost(body).times(trips)


def _scan(node: CodeContext) -> Cost:
    body = node.attributes.get("body")
    count = node.attributes.get("num_scan_inputs")
    if body is None or type(count) is not int or count < 1 or count > len(node.inputs):
        return Cost(None, None, None, None, None)
    first = len(node.inputs) - count
    axes = node.attributes.get("scan_input_axes") or [0]
    shape = node.shape(first)
    axis = axes[0] if isinstance(axes, list) and axes else 0
    steps: Size = None
    if shape is not None and -len(shape) <= axis < len(shape):
        steps = shape[axis]
    return node.graph_cost(body).times(steps)


def _einsum(node: CodeContext) -> Cost:
    """One MAC per point of the product space of every index, per operand past the first; a
    single operand (a sum or a trace) costs one addition per point."""
    unknown = Cost(None, None, None, None, None)
    equation = node.attributes.get("equation")
    if not isinstance(equation, str):
        return unknown
    terms = equation.replace(" ", "").split("->")[0].split(",")
    if len(terms) != len(node.inputs):
        return unknown
    sizes: dict[str, Any] = {}
    for index, term in enumerate(terms):
        shape = node.shape(index)
        if shape is None:
            return unknown
        named = _index_dims(term, shape)
        if named is None:
            return unknown
        for key, dim in named:
            if sizes.get(key) in (None, 1):  # a broadcast 1 yields to the other operand's size
                sizes[key] = dim
    points = element_count(tuple(sizes.values()))
    if points is None:
        return unknown
    if len(terms) == 1:
        return Cost(flops=points)
    return Cost(macs=points * (len(terms) - 1))


def _index_dims(term: str, shape: tuple[Any, ...]) -> list[tuple[str, Any]] | None:
    """Each index of an operand with its dim; the dims ``...`` covers are keyed by their
    distance from the end of the ellipsis, so operands broadcast them together."""
    if "..." not in term:
        return list(zip(term, shape)) if len(term) == len(shape) else None
    before, after = term.split("...", 1)
    covered = len(shape) - len(before) - len(after)
    if covered < 0 or "..." in after:
        return None
    named = list(zip(before, shape[:len(before)])) + list(zip(after, shape[len(shape) - len(after):]))
    named += [(f"...{covered - axis}", shape[len(before) + axis]) for axis in range(covered)]
    return named


#: Costs in code whose bytes are their subgraphs' (the others take the node's inputs and outputs).
CARRIES_BYTES = frozenset({"if", "loop", "scan"})

CODE: dict[str, Callable[[CodeContext], Cost]] = {"if": _if, "loop": _loop, "scan": _scan, "einsum": _einsum}
