"""Structural checks of a model's graphs, the ones ``onnx.checker`` makes before any schema.

Every value is defined before it is used (nodes in topological order; a subgraph sees
the names its enclosing graphs defined before its node), every value is assigned once,
graph inputs and initializers are named once each, graph outputs are produced, and
every domain a node uses has an opset import. Problems are collected, never raised.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from opspec.runtime.ir.codes import AttrType

_ONNX_DOMAINS = ("", "ai.onnx")


@dataclass(frozen=True)
class GraphProblem:
    """One structural problem: where it is (a graph or a node), what is wrong, and its kind
    (a stable code scripts can filter on)."""

    where: str
    message: str
    code: str = "graph-structure"

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


def node_label(node: Any, index: int, graph: str) -> str:
    """``node 'conv1' (Conv, domain 'ai.onnx')``, with the graph when it is a subgraph."""
    who = f"node '{node.name}'" if node.name else f"node #{index}"
    where = f"{who} ({node.op_type}, domain '{node.domain or 'ai.onnx'}')"
    return where if not graph else f"{where} in graph '{graph}'"


def subgraphs(node: Any) -> Iterator[Any]:
    """The graphs held by a node's attributes (If branches, Loop and Scan bodies)."""
    for attribute in node.attribute:
        if attribute.type == AttrType.GRAPH:
            yield attribute.g
        elif attribute.type == AttrType.GRAPHS:
            yield from attribute.graphs


def check_graphs(model: Any) -> list[GraphProblem]:
    """Every structural problem of ``model``'s main graph, its subgraphs and its functions."""
    problems: list[GraphProblem] = []
    imported = {_domain(entry.domain) for entry in model.opset_import}
    if model.HasField("graph"):
        _check_graph(model.graph, frozenset(), "", imported, problems)
    for function in model.functions:
        own = imported | {_domain(entry.domain) for entry in function.opset_import}
        label = f"function '{function.name}' (domain '{function.domain}')"
        defined = set(function.input)
        _check_nodes(function.node, defined, frozenset(), label, own, problems)
        for name in function.output:
            if name not in defined:
                problems.append(GraphProblem(label, f"output '{name}' is not produced by any node or input",
                                             "graph-output"))
    return problems


def _domain(domain: str) -> str:
    return "" if domain in _ONNX_DOMAINS else domain


def _check_graph(graph: Any, outer: frozenset[str], label: str, imported: set[str],
                 problems: list[GraphProblem]) -> None:
    where = f"graph '{graph.name}'"
    defined: set[str] = set()
    _once([entry.name for entry in graph.input], "input", where, defined, problems)
    names = [tensor.name for tensor in graph.initializer]
    names += [sparse.values.name for sparse in graph.sparse_initializer]
    _once(names, "initializer", where, defined, problems)
    _check_nodes(graph.node, defined, outer, label, imported, problems)
    for value_info in graph.output:
        name = value_info.name
        if name not in defined:
            problems.append(GraphProblem(where, f"output '{name}' is not produced by any node, input or initializer",
                                         "graph-output"))


def _once(names: list[str], kind: str, where: str, defined: set[str], problems: list[GraphProblem]) -> None:
    """Add ``names`` to ``defined``, reporting each repetition among them."""
    unique = set(names)
    if len(unique) != len(names):
        seen: set[str] = set()
        for name in names:
            if name in seen:
                problems.append(GraphProblem(where, f"{kind} '{name}' is declared more than once", "duplicate-name"))
            seen.add(name)
    defined |= unique


def _check_nodes(nodes: Any, defined: set[str], outer: frozenset[str], graph: str, imported: set[str],
                 problems: list[GraphProblem]) -> None:
    later: set[str] | None = None  # every node output, made only when an input is not yet defined
    defined.add("")  # an omitted optional input or output: set operations below then pass the common case at once
    for index, node in enumerate(nodes):
        domain = node.domain
        if domain and _domain(domain) not in imported or not domain and "" not in imported:
            problems.append(GraphProblem(node_label(node, index, graph),
                                         f"domain '{domain or 'ai.onnx'}' has no opset import", "opset-import"))
        inputs = node.input[:]  # a list: set operations iterate a repeated field slowly
        if not defined.issuperset(inputs):
            later = _check_inputs(nodes, node, index, graph, inputs, defined, outer, later, problems)
        if node.attribute:
            inner = list(subgraphs(node))
            if inner:
                visible = outer | defined  # a copy only for nodes that hold graphs: one at every node is quadratic
                for subgraph in inner:
                    _check_graph(subgraph, visible, subgraph.name, imported, problems)
        outputs = node.output[:]
        if defined.isdisjoint(outputs) and (not outer or outer.isdisjoint(outputs)):
            defined.update(outputs)
            continue
        for name in outputs:
            if not name:
                continue
            if name in defined or name in outer:
                problems.append(GraphProblem(node_label(node, index, graph),
                                             f"output '{name}' is already defined: each value is assigned once",
                                             "duplicate-name"))
            defined.add(name)


def _check_inputs(nodes: Any, node: Any, index: int, graph: str, inputs: Any, defined: set[str],
                  outer: frozenset[str], later: set[str] | None, problems: list[GraphProblem]) -> set[str] | None:
    """Report the node's inputs that nothing defined before it; the set of every node output
    (made on first need) for the next call."""
    for name in inputs:
        if not name or name in defined or name in outer:
            continue
        if later is None:
            later = {name for node in nodes for name in node.output if name}
        if name in later:
            problems.append(GraphProblem(node_label(node, index, graph),
                                         f"input '{name}' is produced by a later node (nodes must be in "
                                         "topological order)", "topological-order"))
        else:
            problems.append(GraphProblem(node_label(node, index, graph),
                                         f"input '{name}' is not defined: no graph input, initializer or earlier "
                                         "node output has that name", "undefined-value"))
    return later


__all__ = ["GraphProblem", "check_graphs", "node_label", "subgraphs"]
