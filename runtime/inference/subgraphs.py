"""Graph-valued attributes (If's branches, Loop's and Scan's bodies), inferred for the rule.

Before the rule of a node with graph attributes runs, each of its graphs is inferred with
its declared input types, the values of every enclosing graph visible by name; the rule
receives the results (``ctx.subgraph(name)``) and may infer a graph again with other input
types (``ctx.infer_subgraph(name, types)``), e.g. until loop-carried types settle. Problems
inside a subgraph are reported against the node that owns it, once its rule has run: a graph
the rule says may not run (``ctx.may_not_run``, an If's branch) turns the problems found in
the values it would compute into notes (see :class:`~.node_errors.Severity`).
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, Mapping

from opspec.runtime.contract import OptionalType, SequenceType, Subgraph, TensorType
from opspec.runtime.inference.fresh_symbols import kept_names, renewed
from opspec.runtime.inference.node_errors import Severity
from opspec.runtime.inference.nesting import MAX_SUBGRAPH_DEPTH, TOO_DEEP_FOR_STACK, out_of_stack, short_chain
from opspec.runtime.inference.node_order import ListAhead
from opspec.runtime.inference.read_tensors import initializer_data
from opspec.runtime.inference.read_types import DimReader
from opspec.runtime.inference.subgraph_reuse import GraphResults, Reusable
from opspec.runtime.inference.typeops import TypeConflict, describe, merge_types, type_only, types_conflict
from opspec.runtime.inference.walk import GraphWalk
from opspec.runtime.inference.write_back import SubgraphRecord
from opspec.runtime.inference.write_types import TypeEncoder
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
#: A graph's scope copies the values around it when they number at most this many per node
#: of the graph: a copied value costs less than the slower lookups of a :class:`Scope`.
COPY_PER_NODE = 8


def inner_scope(outer: Any, node_count: int) -> dict[str, Any]:
    """A scope for a graph of ``node_count`` nodes inside ``outer``: a plain dict holding the
    values around it when they are few (each lookup then runs at dict speed), else a
    :class:`Scope` that reads through to them."""
    levels, size, scope = [], 0, outer
    while type(scope) is Scope:
        levels.append(scope)
        size += dict.__len__(scope)
        scope = scope.outer
    levels.append(scope)
    size += len(scope)
    if size > COPY_PER_NODE * node_count:
        return Scope(outer)
    flat: dict[str, Any] = {}
    for level in reversed(levels):  # the innermost graph's values last: they shadow the others
        flat.update(level)
    return flat


#: A problem found in a graph, as its owner reports it: the message, its severity inside the
#: graph, and whether it is one of a node's form (never lightened: see :class:`~.node_errors.NodeError`).
Problem = tuple[str, Severity, bool]


class GraphProblems:
    """The problems found in one node's graphs, by graph attribute, held until the node's rule
    has said which of its graphs may not run."""

    __slots__ = ("found",)

    def __init__(self) -> None:
        self.found: dict[tuple[str, Problem], None] = {}

    def add(self, attribute: str, problem: Problem) -> None:
        self.found[(attribute, problem)] = None

    def settled(self, unsure: set[str]) -> list[Problem]:
        """Each problem with the weight it has at the node: one found in the values of a graph
        that may not run is a note."""
        return [(message, Severity.NOTE if attribute in unsure and not of_form else severity, of_form)
                for attribute, (message, severity, of_form) in self.found]


class SubgraphInference:
    """Infers the graphs nested in one model's nodes (the walk's hook is :meth:`graphs`)."""

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
        #: Every record made or handed out again, in order, while a graph of the main walk is
        #: inferred: a result kept for reuse carries the records its inference left.
        self._log: list[tuple[int, SubgraphRecord]] = []
        #: The graphs that are part of the model (not of a function body), by id, as first inferred.
        self.in_model: dict[int, None] = {}
        #: The error lists of the graphs being walked, by id: whether each graph is part of the model.
        self._walking: dict[int, bool] = {}
        #: Per list of errors (by id, with the list): the problems reported to it from graphs.
        self._reported: dict[int, tuple[list[Any], set[tuple[int, str]]]] = {}

    def graphs(self, index: int, node: Any, types: Any, datas: Any, opsets: dict[str, int], errors: list[Any],
               strict: bool, around: ListAhead | None = None
               ) -> tuple[Mapping[str, Any] | None, Callable[..., Any] | None, Callable[[set[str]], None]]:
        """The walk's hook (``Walker.subgraphs``): ``node``'s graphs inferred with their declared
        input types, a function that infers one again with other input types, and one that
        reports the problems found in them once the rule has run (given the graphs it said may
        not run). One level of nesting costs four Python frames here (eight when a rule infers
        a graph again).

        The graphs are inferred with their declared types when the rule first asks for one of them
        (every graph then, in the node's order), not before: a rule that infers a body with types of
        its own (Loop, Scan) never needs them so. A graph that nothing inferred by the time the rule
        has run is inferred then, so that its problems are found and its values written all the same.
        ``around`` is asked about what they read from around them and find no type for (see
        :class:`~.node_order.ListAhead`)."""
        graphs = {a.name: a for a in node.attribute if a.type in GRAPH_KINDS}
        if not graphs:
            return None, None, _settle_nothing
        problems = GraphProblems()
        inferred: dict[str, Any] = {}  # the results with the declared types, once asked for
        touched: set[str] = set()  # the graphs inferred in any way so far

        def infer(name: str, input_types: tuple[Any, ...] | None = None) -> Any:
            attribute = graphs.get(name)
            if attribute is None:
                return None
            touched.add(name)
            owner = (index, node, errors, strict, problems, name, around)
            if attribute.type == AttrType.GRAPH:
                return self._infer(attribute.g, input_types, types, datas, opsets, owner)
            return tuple([self._infer(g, input_types, types, datas, opsets, owner) for g in attribute.graphs])

        def as_declared(names: Iterable[str]) -> None:
            for name in names:
                inferred[name] = infer(name)

        def settle(unsure: set[str]) -> None:
            as_declared([name for name in graphs if name not in touched])
            for message, severity, of_form in problems.settled(unsure):
                self._report(errors, index, node, message, strict, severity, of_form)

        return _GraphsOnDemand(graphs, inferred, as_declared), infer, settle

    def _infer(self, graph: Any, input_types: tuple[Any, ...] | None, outer_types: Any, outer_datas: Any,
               opsets: dict[str, int], owner: tuple[Any, ...]) -> Subgraph:
        index, node, errors, strict, problems, attribute, around = owner
        if self.depth >= MAX_SUBGRAPH_DEPTH or out_of_stack():
            bound = f"deeper than {MAX_SUBGRAPH_DEPTH}" if self.depth >= MAX_SUBGRAPH_DEPTH else TOO_DEEP_FOR_STACK
            self.engine.fail(errors, index, node, f"subgraphs nested {bound}", strict)
            return Subgraph(graph.name, (None,) * len(graph.input), (None,) * len(graph.output))
        if errors is self.engine.errors or self._walking.get(id(errors), False):
            self.in_model[id(graph)] = None
        reader = self.reader
        types = inner_scope(outer_types, len(graph.node))
        copied = list(types) if type(types) is dict else []  # the values around it, copied in
        # The enclosing graphs wait while this one is inferred: with no data there, none can appear.
        datas = inner_scope(outer_datas, len(graph.node)) if outer_datas else {}
        declared: dict[str, Any] = {}
        inputs = []
        for position, value_info in enumerate(graph.input):
            value = reader.value_info(value_info)
            given = input_types[position] if input_types is not None and position < len(input_types) else None
            if given is not None:
                value = _as_declared(given, value)
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
                result, records = renewed((found.result, found.records), found.made, self.engine.symbols)
                for graph_id, record in records:  # as inferring it again would leave them
                    self.records[graph_id] = record
                if self.depth:  # an enclosing inference keeps them with its own result
                    self._log += records
                for problem in found.messages:
                    problems.add(attribute, problem)
                return result
        log_before, symbols_before = len(self._log), self.engine.symbols.issued
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
        self._walking[id(inner)] = id(graph) in self.in_model
        try:
            self.engine.run(GraphWalk(graph.node, types, datas, declared, opsets, self.entries, producers, inner, False,
                                      around))
            if around is not None:  # an output read from around it, with no type
                around.check([name for v in graph.output if types.get(name := v.name) is None], types)
        finally:
            self.depth -= 1
            del self._walking[id(inner)]
        where = f"in subgraph '{graph.name}'" if graph.name else "in a subgraph"
        messages: list[Problem] = [(f"{where}: {error}", error.severity, error.of_form) for error in inner]
        if self.depth == 0:
            messages = [(short_chain(message), severity, of_form) for message, severity, of_form in messages]
        outputs = tuple(self._output(types.get(v.name), given, v.name, where, messages)
                        for v, given in zip(graph.output, outputs_declared))
        record = self.records[id(graph)] = SubgraphRecord(
            graph, _own_values(types, copied, graph, producers), producers, value_info_types,
            {v.name: t for v, t in zip(graph.output, outputs_declared)})
        self._log.append((id(graph), record))
        for problem in messages:
            problems.add(attribute, problem)
        result = Subgraph(graph.name, tuple(inputs), outputs)
        if key is not None:
            left = tuple(dict(self._log[log_before:]).items())  # the last record of each graph is what counts
            made = self._made(result, left, symbols_before, messages)
            if made is not None:
                results.keep(key, Reusable(result, left, messages, made))
        if self.depth == 0:  # no enclosing inference to be kept with what this one left
            self._log.clear()
        return result

    def _made(self, result: Subgraph, records: tuple[tuple[int, Any], ...], mark: int,
              messages: list[Problem]) -> tuple[str, ...] | None:
        """The fresh symbols an inference made that its result and records hold, in order (None:
        the result is not kept, as a message may name one of them or a value cannot be renamed)."""
        if messages and self.engine.symbols.issued != mark:
            return None
        return kept_names((result, records), self.engine.symbols, mark)

    def write_back(self) -> None:
        """Write what the last inference of each graph of the model found into it (graphs of
        function bodies are left as written)."""
        encoder = TypeEncoder()
        records = self.records
        for key in self.in_model:
            record = records.get(key)
            if record is not None:
                record.write(encoder)

    def _report(self, errors: list[Any], index: int, node: Any, message: str, strict: bool, severity: Severity,
                of_form: bool) -> None:
        """Report a problem found in a graph of ``node``, once per list of errors: a rule may
        infer a graph several times for one use of its node."""
        seen = self._reported.get(id(errors))
        if seen is None or seen[0] is not errors:
            seen = self._reported[id(errors)] = (errors, set())
        if (index, message) not in seen[1]:
            seen[1].add((index, message))
            self.engine.fail(errors, index, node, message, strict, severity=severity, of_form=of_form)

    def _output(self, inferred: Any, declared: Any, name: str, where: str, problems: list[Problem]) -> Any:
        """A subgraph output's type for the owner's rule: what inference found, refined by the
        declaration (a conflict is a problem of the owner, added to ``problems``). A declared sequence gives only its
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
            problems.append((f"{where}: output '{name}': inferred type {describe(inferred)} "
                             f"conflicts with the declared {describe(declared)} ({conflict})", Severity.ERROR,
                             types_conflict(declared, inferred)))
            return inferred


def _own_values(types: dict[str, Any], copied: list[str], graph: Any, producers: dict[str, int]) -> dict[str, Any]:
    """The values of a graph inferred in the scope ``types`` that are its own, no longer read from
    around: a :class:`Scope`'s own dict; a plain scope itself, once the values ``copied`` in from
    around are taken out of it (not copied: a large graph's scope holds many values)."""
    if type(types) is not dict:
        return dict(types)
    if copied:
        inputs = {value_info.name for value_info in graph.input}
        for name in copied:
            if name not in producers and name not in inputs:  # an initializer gives way to a value around
                del types[name]
    return types


def _as_declared(given: Any, declared: Any) -> Any:
    """The type of a graph input given ``given`` where the graph declares ``declared``: the
    two merged; a plain value where an optional is declared is an optional holding it (a
    loop that starts from "none yet" and carries its element on: the body still reads an
    optional, as the ops it feeds may accept nothing else); the given type where they
    contradict."""
    if type(declared) is OptionalType and type(given) is not OptionalType:
        try:
            return OptionalType(merge_types(given, declared.elem))
        except TypeConflict:
            return given
    try:
        return merge_types(given, declared)
    except TypeConflict:
        return given


class _GraphsOnDemand(Mapping[str, Any]):
    """A node's graphs by attribute name as inferred with their declared input types: every one of
    them, in the node's order, when the first is asked for."""

    __slots__ = ("_graphs", "_inferred", "_infer")

    def __init__(self, graphs: dict[str, Any], inferred: dict[str, Any],
                 infer: Callable[[Iterable[str]], None]) -> None:
        self._graphs, self._inferred, self._infer = graphs, inferred, infer

    def __getitem__(self, name: str) -> Any:
        if name not in self._graphs:
            raise KeyError(name)
        if name not in self._inferred:
            self._infer([other for other in self._graphs if other not in self._inferred])
        return self._inferred[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._graphs)

    def __len__(self) -> int:
        return len(self._graphs)


def _settle_nothing(unsure: set[str]) -> None:
    """What a node without graphs has to report after its rule: nothing."""
