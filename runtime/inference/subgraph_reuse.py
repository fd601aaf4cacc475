"""Reusing the inference of a nested graph that is inferred again with the same inputs.

A Loop's rule infers its body again until the carried types settle, so Loops nested in
Loops would infer the innermost body a number of times exponential in the depth. The
result of inferring a graph depends only on its own contents, the types given to its
inputs and the types and data of the outer values it reads by name (and on the walk's
settings, fixed for a model), so a result is kept under those and handed out again,
with the problems it found, which are reported again against the graph's node. A result
that made up fresh symbols is kept only when it found no problem, and is handed out with
new fresh symbols in their place (see :mod:`.fresh_symbols`). The outer names a graph reads are worked out on
its second inference, so a graph inferred once costs nothing more.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from opspec.runtime.inference.graph_checks import subgraphs

#: How many distinct results each graph keeps.
RESULTS_PER_GRAPH = 64


def _own_inputs(graph: Any) -> set[str]:
    """The names a graph defines before its first node: inputs and initializers."""
    names = {value_info.name for value_info in graph.input}
    names.update(tensor.name for tensor in graph.initializer)
    names.update(sparse.values.name for sparse in graph.sparse_initializer)
    return names


def _read_anywhere(graphs: Iterable[Any]) -> set[str]:
    """Names that ``graphs``, or graphs nested in them at any depth, may read from outside
    (an explicit stack): a node's input unless its graph's inputs define it, an output
    unless its graph defines it anywhere."""
    read: set[str] = set()
    pending = list(graphs)
    while pending:
        graph = pending.pop()
        own = _own_inputs(graph)
        produced: set[str] = set()
        inputs: set[str] = set()
        for node in graph.node[:]:  # (slices: far quicker than iterating the repeated fields)
            inputs.update(node.input[:])
            produced.update(node.output[:])
            if node.attribute:
                pending.extend(subgraphs(node))
        read |= inputs - own
        read.update(name for value_info in graph.output
                    if (name := value_info.name) not in own and name not in produced)
    return read


def outer_names(graph: Any) -> tuple[str, ...]:
    """The names ``graph`` may read from the graphs around it.

    A name counts unless the graph defines it before reading it (as an input, an
    initializer or an earlier node's output); names read by graphs nested inside are
    counted unless this graph defined them before their node. Counting too many only
    makes reuse rarer, never wrong."""
    defined = _own_inputs(graph)
    outer: dict[str, None] = {}
    for node in graph.node[:]:  # (slices: far quicker than iterating the repeated fields)
        inputs = node.input[:]
        if not defined.issuperset(inputs):
            for name in inputs:
                if name not in defined:
                    outer[name] = None
        if node.attribute:
            for name in sorted(_read_anywhere(subgraphs(node))):
                if name not in defined:
                    outer[name] = None
        defined.update(node.output[:])
    for value_info in graph.output:
        if value_info.name not in defined:
            outer[value_info.name] = None
    outer.pop("", None)
    return tuple(outer)


@dataclass(frozen=True, slots=True)
class Reusable:
    """One inference of a graph: its result, the records for the write-back it left (its
    own and those of the graphs nested in it, by graph id, in order) and the problems it
    reported against the graph's node (each as message, severity, whether of a node's form)."""

    result: Any
    records: tuple[tuple[int, Any], ...]
    messages: list[tuple[str, Any, bool]]
    #: The fresh symbols the inference made up, in order: renewed each time it is handed out
    #: (see :mod:`.fresh_symbols`).
    made: tuple[str, ...] = ()


class GraphResults:
    """What one nested graph gave, by its inputs and the outer values it reads."""

    __slots__ = ("graph", "outer", "results")

    def __init__(self, graph: Any) -> None:
        self.graph = graph  # held, so that the id the results are filed under stays this graph's
        self.outer: tuple[str, ...] | None = None
        self.results: dict[Any, Reusable] = {}

    def key(self, inputs: list[Any], outer_types: Any, outer_datas: Any) -> Any:
        """The key of an inference with these input types in this scope (None: not reusable)."""
        if self.outer is None:
            self.outer = outer_names(self.graph)
        names = self.outer
        get_type = outer_types.get
        key: Any = (tuple(inputs), tuple([get_type(name) for name in names]),
                    tuple([outer_datas.get(name) for name in names]) if outer_datas else None)
        try:
            hash(key)
        except TypeError:  # something unhashable in a type or in data: inferred every time
            return None
        return key

    def keep(self, key: Any, reusable: Reusable) -> None:
        if len(self.results) < RESULTS_PER_GRAPH:
            self.results[key] = reusable


__all__ = ["GraphResults", "RESULTS_PER_GRAPH", "Reusable", "outer_names"]
