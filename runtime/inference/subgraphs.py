"""Graph-valued attributes (If's branches, Loop's and Scan's bodies), inferred for the rule.

Before the rule of a node with graph attributes runs, each of its graphs is inferred with
its declared input types, the values of every enclosing graph visible by name; the rule
receives the results (``ctx.subgraph(name)``) and may infer a graph again with other input
types (``ctx.infer_subgraph(name, types)``), e.g. until loop-carried types settle. Problems
inside a subgraph are reported against the node that owns it.
"""
from __future__ import annotations

from contextlib import nullcontext
from typing import Any, Callable

from opspec.runtime.contract import OptionalType, SequenceType, Subgraph, TensorType
from opspec.runtime.inference.nesting import MAX_SUBGRAPH_DEPTH, stack_room
from opspec.runtime.inference.read_tensors import initializer_data
from opspec.runtime.inference.read_types import DimReader
from opspec.runtime.inference.subgraph_reuse import GraphResults
from opspec.runtime.inference.typeops import TypeConflict, describe, merge_types, type_only
from opspec.runtime.inference.write_back import SubgraphRecord
from opspec.runtime.ir.codes import AttrType, GRAPH_KINDS


class Scope(dict[str, Any]):
    """A graph's own values, with those of the graphs around it visible by name (through
    :meth:`get`, as the walk reads them); writes stay in the graph's own scope. Each lookup
    is one frame per level of nesting, however many values the outer graphs hold."""

    __slots__ = ("outer",)

    def __init__(self, outer: Any) -> None:
        super().__init__()
        self.outer = outer

    def get(self, key: str, default: Any = None) -> Any:
        value = dict.get(self, key, _ABSENT)
        return self.outer.get(key, default) if value is _ABSENT else value

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) or key in self.outer

    def __bool__(self) -> bool:
        return dict.__len__(self) > 0 or bool(self.outer)


_ABSENT = object()


class SubgraphInference:
    """The walk's subgraph hook (``Walker.subgraphs``) for one model."""

    def __init__(self, engine: Any, reader: DimReader | None = None) -> None:
        self.engine = engine
        self.reader = reader or DimReader()
        self.entries: dict[Any, Any] = {}
        #: The last inference of each graph, by id, for writing the results into the model.
        self.records: dict[int, SubgraphRecord] = {}
        #: Nesting depth, bounded so that a hostile model cannot recurse without end.
        self.depth = 0
        #: Per graph inferred (by id): its clean results, for reuse (see :mod:`.subgraph_reuse`).
        self.reuse: dict[int, GraphResults] = {}

    def __call__(self, index: int, node: Any, types: Any, datas: Any, opsets: dict[str, int], errors: list[Any],
                 strict: bool) -> tuple[dict[str, Any] | None, Callable[..., Any] | None]:
        graphs = {a.name: a for a in node.attribute if a.type in GRAPH_KINDS}
        if not graphs:
            return None, None

        def infer(name: str, input_types: tuple[Any, ...] | None = None) -> Any:
            attribute = graphs.get(name)
            if attribute is None:
                return None
            if attribute.type == AttrType.GRAPH:
                return self._infer(attribute.g, input_types, types, datas, opsets, (index, node, errors, strict))
            return tuple(self._infer(g, input_types, types, datas, opsets, (index, node, errors, strict))
                         for g in attribute.graphs)

        return {name: infer(name) for name in graphs}, infer

    def _infer(self, graph: Any, input_types: tuple[Any, ...] | None, outer_types: Any, outer_datas: Any,
               opsets: dict[str, int], owner: tuple[Any, ...]) -> Subgraph:
        index, node, errors, strict = owner
        if self.depth >= MAX_SUBGRAPH_DEPTH:
            self.engine.fail(errors, index, node, f"subgraphs nested deeper than {MAX_SUBGRAPH_DEPTH}", strict)
            return Subgraph(graph.name, (None,) * len(graph.input), (None,) * len(graph.output))
        reader = self.reader
        types = Scope(outer_types)
        # The enclosing graphs wait while this one is inferred: with no data there, none can appear.
        datas: dict[str, Any] = Scope(outer_datas) if outer_datas else {}
        declared: dict[str, Any] = {}
        inputs = []
        for position, value_info in enumerate(graph.input):
            value = reader.value_info(value_info)
            given = input_types[position] if input_types is not None and position < len(input_types) else None
            if given is not None:
                try:
                    value = merge_types(given, value)
                except TypeConflict:
                    value = given
            inputs.append(value)
            # An input shadows an outer value of the same name, known or not.
            types[value_info.name] = value
        results = self.reuse.get(id(graph))
        key = None
        if results is None or results.graph is not graph:
            results = self.reuse[id(graph)] = GraphResults(graph)
        else:  # inferred before: perhaps with the same inputs, in the same scope
            key = results.key(inputs, outer_types, outer_datas)
            found = results.results.get(key) if key is not None else None
            if found is not None:
                self.records[id(graph)] = found[1]
                return found[0]
        errors_before, symbols_before = len(errors), self.engine.symbols.issued
        for tensor in graph.initializer:
            if tensor.name not in types:  # an input of the same name, or an outer value, comes first
                types[tensor.name] = TensorType(tensor.data_type, tuple(tensor.dims))
            data = initializer_data(tensor)
            if data is not None:
                datas[tensor.name] = data
        for value_info in graph.value_info:
            value = reader.value_info(value_info)
            if value is not None:
                declared[value_info.name] = value
        outputs_declared = [reader.value_info(v) for v in graph.output]
        inner: list[Any] = []
        producers: dict[str, int] = {}
        value_info_types = dict(declared)
        self.depth += 1
        try:
            with stack_room() if self.depth == 1 else nullcontext():
                self.engine.run(graph.node, types, datas, declared, opsets, self.entries, producers, inner, False)
        finally:
            self.depth -= 1
        where = f"in subgraph '{graph.name}'" if graph.name else "in a subgraph"
        for error in inner:
            self.engine.fail(errors, index, node, f"{where}: {error}", strict)
        record = self.records[id(graph)] = SubgraphRecord(
            graph, dict(types), producers, value_info_types,
            {v.name: t for v, t in zip(graph.output, outputs_declared)})
        outputs = tuple(self._output(types.get(v.name), given, v.name, where, owner)
                        for v, given in zip(graph.output, outputs_declared))
        result = Subgraph(graph.name, tuple(inputs), outputs)
        if key is not None and len(errors) == errors_before and self.engine.symbols.issued == symbols_before:
            results.keep(key, result, record)
        return result

    def _output(self, inferred: Any, declared: Any, name: str, where: str, owner: tuple[Any, ...]) -> Any:
        """A subgraph output's type for the owner's rule: what inference found, refined by the
        declaration (a conflict is the owner's error). A declared sequence gives only its
        element type: its elements may differ among themselves (a loop's body that grows the
        sequence with vectors while it is declared with the scalar it starts from)."""
        if type(declared) is SequenceType or (type(declared) is OptionalType
                                              and type(declared.elem) is SequenceType):
            declared = type_only(declared)
        if inferred is None or declared is None:
            return inferred if inferred is not None else declared
        try:
            return merge_types(declared, inferred)
        except TypeConflict as conflict:
            index, node, errors, strict = owner
            self.engine.fail(errors, index, node, f"{where}: output '{name}': inferred type {describe(inferred)} "
                             f"conflicts with the declared {describe(declared)} ({conflict})", strict)
            return inferred

