"""The order the walk visits a graph's nodes in: the data dependencies, whatever the list order.

A graph's nodes should be listed so that each reads only values listed before it, but tools do
not always write them so (a converter appending nodes it inserted at the end of the list), and
onnxruntime sorts such graphs before running them. The walk does the same: a list already in
order is walked as it is (one pass over the names finds that out); otherwise the nodes are
walked in a stable topological order, each as early as its inputs allow and, among those ready,
in list order. A node reads, besides its inputs, what the graphs it holds read from around them.
Nodes on a cycle are walked last, in list order (their inputs from the cycle are then unknown):
never a hang. The list itself is never changed; ``check`` reports the order separately.

The graphs a node holds are not scanned for what they read before the node is inferred: they
are walked expecting that the list is in order there, and a read inside them that finds no type
asks the :class:`ListAhead` of each enclosing list whether a node at or after the one being
inferred gives that value. If one does, :class:`ReadAhead` unwinds to that list's walk, which
keeps nothing of the node and goes on in the data's order. A graph costs nothing more to walk
when every value it reads from around it has a type. Once a node has been given up so, the graphs
of the nodes after it are scanned first (:func:`graphs_read_untyped`): a walk nested in walks that
each give up their node once would otherwise be walked again a number of times exponential in the depth.
"""
from __future__ import annotations

from heapq import heapify, heappop, heappush
from typing import Any, Iterable, Sequence

from opspec.runtime.inference.graph_checks import subgraphs


def walk_order(nodes: Sequence[Any]) -> list[int] | None:
    """None when every node of ``nodes`` reads only values produced before it (or from outside
    the list); else the node positions in a stable topological order (see the module)."""
    produced: set[str] = set()
    unresolved: set[str] = set()
    for node in nodes:
        inputs = node.input[:]  # a list: set operations iterate a repeated field slowly
        if not produced.issuperset(inputs):
            unresolved.update(name for name in inputs if name not in produced)
        if node.attribute:
            inner = list(subgraphs(node))
            if inner:
                unresolved.update(name for name in _read_from_around(inner) if name not in produced)
        produced.update(node.output[:])
    produced.discard("")
    if unresolved.isdisjoint(produced):
        return None
    return _sorted(nodes)


def graphs_read_untyped(node: Any, types: Any) -> bool:
    """Whether the graphs ``node`` holds read a value from around them that ``types`` (the walk's
    types so far, by name) has no type for: only then may the list's order matter to the node."""
    inner = list(subgraphs(node))
    return bool(inner) and any(types.get(name) is None for name in _read_from_around(inner))


class ListAhead:
    """The values a walk's node list gives at or after ``position``, the node whose graphs are being
    inferred, for those graphs to ask about (``around``: the same for the enclosing lists, if any of
    them is being watched too). Each list's first producers are found on the first question."""

    __slots__ = ("nodes", "position", "around", "_first")

    def __init__(self, nodes: Sequence[Any], around: ListAhead | None) -> None:
        self.nodes = nodes
        self.position = 0
        self.around = around
        self._first: dict[str, int] | None = None

    def check(self, names: Iterable[str], types: Any) -> None:
        """Raise :class:`ReadAhead` for the innermost list that gives one of ``names`` (values a
        graph reads, nothing of which has a type in its scope ``types``) at or after its node
        being inferred. A list that gives a name before that node defines it for the lists
        around it (an unknown value, not one read ahead)."""
        for name in names:
            if not name or name in types:  # omitted, or defined in the graph's scope without a type
                continue
            level: ListAhead | None = self
            while level is not None:
                first = level._first_producers().get(name)
                if first is not None:
                    if first >= level.position:
                        raise ReadAhead(level)
                    break
                level = level.around

    def _first_producers(self) -> dict[str, int]:
        first = self._first
        if first is None:
            first = self._first = {}
            for position, node in enumerate(self.nodes):
                for name in node.output[:]:
                    first.setdefault(name, position)
        return first


class ReadAhead(BaseException):
    """A graph read a value that its ``level``'s list gives only at or after the node holding it.

    A ``BaseException``: the handlers that turn a failing rule into the node's error must let it
    pass on its way to that list's walk."""

    def __init__(self, level: ListAhead) -> None:
        super().__init__()
        self.level = level


def _sorted(nodes: Sequence[Any]) -> list[int]:
    """A stable topological order of ``nodes`` (Kahn's algorithm, the lowest position first)."""
    producer: dict[str, int] = {}
    for position, node in enumerate(nodes):
        for name in node.output:
            if name:
                producer.setdefault(name, position)
    waiting = [0] * len(nodes)  # per node: how many producers it still waits for
    readers: list[list[int]] = [[] for _ in nodes]
    for position, node in enumerate(nodes):
        reads = set(node.input)
        inner = list(subgraphs(node)) if node.attribute else []
        if inner:
            reads |= _read_from_around(inner)
        sources = {producer[name] for name in reads if name in producer}
        waiting[position] = len(sources)
        for source in sources:
            readers[source].append(position)
    ready = [position for position, count in enumerate(waiting) if count == 0]
    heapify(ready)
    order: list[int] = []
    while ready:
        position = heappop(ready)
        order.append(position)
        for reader in readers[position]:
            waiting[reader] -= 1
            if waiting[reader] == 0:
                heappush(ready, reader)
    if len(order) < len(nodes):  # a cycle: what is on it (or waits for it) comes last, in list order
        placed = set(order)
        order += [position for position in range(len(nodes)) if position not in placed]
    return order


def _read_from_around(graphs: list[Any]) -> set[str]:
    """Names ``graphs`` (and graphs nested in them) read that none of them defines: values of
    the graph around them (an explicit stack, however deep the nesting)."""
    read: set[str] = set()
    pending = list(graphs)
    while pending:
        graph = pending.pop()
        own = {value_info.name for value_info in graph.input}
        own.update(tensor.name for tensor in graph.initializer)
        nodes = graph.node[:]  # (slices: far quicker than iterating the repeated fields)
        for node in nodes:
            own.update(node.output[:])
        inputs: set[str] = set()
        for node in nodes:
            inputs.update(node.input[:])
            if node.attribute:
                pending.extend(subgraphs(node))
        read |= inputs - own
        read.update(name for value_info in graph.output if (name := value_info.name) not in own)
    read.discard("")
    return read


__all__ = ["ListAhead", "ReadAhead", "graphs_read_untyped", "walk_order"]
