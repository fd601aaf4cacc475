"""Whole-model inference: seed known values from the graph, run the engine, write results back.

Works in place on a model the caller owns (the API hands it a private copy).
"""
from __future__ import annotations

from gc import disable, enable, isenabled
from functools import wraps
from itertools import islice
from math import prod
from typing import Any, Callable, Iterable, Iterator, ParamSpec, TypeVar

from opspec.runtime.inference.deferred_types import DeferredTypes, UnreadType, deferred_types
from opspec.runtime.inference.functions import FunctionCalls, FunctionInfo
from opspec.runtime.inference.input_symbols import with_input_symbols
from opspec.runtime.inference.node_errors import NodeError
from opspec.runtime.inference.options import InferenceOptions
from opspec.runtime.inference.read_tensors import DATA_LIMIT, INITIALIZER_DATA_LIMITS, INT_ELEMS, counted_tensor_data
from opspec.runtime.inference.read_types import DimReader
from opspec.runtime.inference.resolve import normalize_opsets
from opspec.runtime.inference.subgraphs import SubgraphInference
from opspec.runtime.inference.taken_names import taken_names
from opspec.runtime.inference.value_info_entries import Entries, read_entries
from opspec.runtime.inference.typeops import TypeConflict, dim_out_of_range, merge_types, without_bad_dims
from opspec.runtime.inference.walk import GraphWalk, Walker
from opspec.runtime.inference.write_back import write_graph
from opspec.runtime.inference.write_types import TypeEncoder
from opspec.runtime.contract.values import TensorType
from opspec.runtime.ir.codes import DataLocation
from opspec.runtime.op_set import OpSet, op_set_or_installed
from opspec.runtime.shape import Sym, SymbolTable

INPUT, INITIALIZER = "(input)", "(initializer)"



class GraphOutcome:
    """What inference learned about a graph: every value's type and who produced it."""

    __slots__ = ("_types", "_deferred", "origins", "producers", "nodes", "_labels", "errors", "unknown",
                 "unknown_nodes", "node_count", "implied", "op_types", "added_values", "unmerged_value_infos", "notes")

    def __init__(self) -> None:
        self._types: dict[str, Any] = {}
        #: Graph input types not decoded yet (see :mod:`.deferred_types`): decoded when asked for.
        self._deferred: DeferredTypes | None = None
        self.origins: dict[str, str] = {}  # graph inputs and initializers
        self.producers: dict[str, int] = {}  # node outputs -> node index, in node order
        self.nodes: Any = ()  # the graph's nodes, kept (with ``report``) to name producers when asked
        self._labels: list[str] | None = None
        self.errors: list[NodeError] = []
        #: Problems in graphs that may not run (an If's branches): the model fails only if one runs.
        self.notes: list[NodeError] = []
        self.unknown: dict[tuple[str, str], str] = {}
        self.unknown_nodes: list[NodeError] = []
        self.node_count = 0
        #: Domains used without an opset import, inferred at this version (as onnxruntime runs them).
        self.implied: dict[str, int] = {}
        #: The distinct ``(domain, op_type)`` of the graph's nodes (as the walk resolved them).
        self.op_types: list[tuple[str, str]] = []
        #: How many values the write-back added to the graph's ``value_info``, and those
        #: entries serialized when they were left out of the model (``merge_new=False``).
        self.added_values = 0
        self.unmerged_value_infos = b""

    @property
    def types(self) -> dict[str, Any]:
        """Every value's type by name (None or absent: unknown)."""
        if self._deferred is not None:
            self._deferred.resolve()
            self._deferred = None
        return self._types

    def values(self) -> dict[str, tuple[Any, str]]:
        """Every value by name: (type or None, producer), inputs and initializers first."""
        return {name: (value, producer) for name, value, producer in self.iter_values()}

    @property
    def op_labels(self) -> list[str]:
        """Per node: its op type, with the domain unless it is ai.onnx (worked out on first use)."""
        if self._labels is None:
            self._labels = _op_labels(self.nodes)
        return self._labels

    def value_count(self) -> int:
        """How many values :meth:`iter_values` gives."""
        origins = self.origins
        return len(origins) + sum(1 for name in self.producers if name not in origins)

    def iter_values(self) -> Iterator[tuple[str, Any, str]]:
        """Every value once, as :meth:`values` orders them: (name, type or None, producer);
        nothing is built whole (for reports on large models)."""
        labels, types, producers, origins = self.op_labels, self.types, self.producers, self.origins
        for name, origin in origins.items():
            index = producers.get(name)  # a node output named like an input replaces it in place
            yield name, types.get(name), origin if index is None else labels[index]
        for name, index in producers.items():
            if name not in origins:
                yield name, types.get(name), labels[index]


#: IR versions before this one list every initializer as a graph input as well.
_IR_INITIALIZERS_APART = 4


_Result = TypeVar("_Result")
_Parameters = ParamSpec("_Parameters")


def with_collector_paused(function: Callable[_Parameters, _Result]) -> Callable[_Parameters, _Result]:
    """``function`` run with Python's cycle collector paused, and restored after as it was:
    inference builds many objects and frees them by reference counting, and the collector's
    passes over them would cost about a tenth of the time without freeing anything. (A plain
    ``try``, not a context manager: this wraps every call, and nested calls find it paused.)"""
    @wraps(function)
    def paused(*args: _Parameters.args, **kwargs: _Parameters.kwargs) -> _Result:
        if not isenabled():
            return function(*args, **kwargs)
        disable()
        try:
            return function(*args, **kwargs)
        finally:
            enable()
    return paused


@with_collector_paused  # reading a model's types builds many objects too
def infer_model(model: Any, options: InferenceOptions = InferenceOptions(), *, external: Any = None,
                op_set: OpSet | None = None) -> GraphOutcome:
    """Infer every value of ``model``'s graph as ``options`` say and write the results into it,
    looking operators up in ``op_set`` (None: the installed one).

    ``external`` (a :class:`~opspec.runtime.ir.external.ExternalData`) reads small initializers
    stored in files beside the model. Raises :class:`InferenceError` at the first node problem
    with ``options.strict_mode``. Without ``options.report`` the outcome's ``producers`` stays
    empty; with ``options.merge_new`` False the new ``value_info`` entries are left in
    :attr:`GraphOutcome.unmerged_value_infos`.

    An initializer that is also a graph input is a default the caller may override.
    ``options.overridable_initializers`` says whether inference takes it so (its data and dims are
    then not used): None (the default) follows the model's IR version, as onnx does in
    effect: before IR 4 every initializer had to be listed as an input, so the listing
    says nothing and the initializer counts as a constant; from IR 4 on, listing it is a
    deliberate choice and it counts as overridable. True or False force either reading.
    """
    outcome = GraphOutcome()
    if not model.HasField("graph"):
        return outcome
    graph = model.graph
    reader = DimReader()
    types, datas, declared = outcome._types, {}, {}
    origins = outcome.origins

    inputs_read = read_entries(graph.input)
    input_names = inputs_read.names
    symbols = SymbolTable(reader.names, taken=lambda prefix: taken_names(model, prefix, inputs_read.keys))
    input_values = with_input_symbols(deferred_types(reader, graph.input, inputs_read.keys), symbols)
    origins.update(dict.fromkeys(input_names, INPUT))
    types.update([(name, value) for name, value in zip(input_names, input_values) if value is not None])
    unread = [name for name, value in zip(input_names, input_values) if type(value) is UnreadType]
    deferred = outcome._deferred = DeferredTypes(reader, types, unread)
    overridable_initializers = options.overridable_initializers
    if overridable_initializers is None:
        overridable_initializers = model.ir_version >= _IR_INITIALIZERS_APART
    #: Per element type and dims (weights share few): one type object, cheap to compare, and
    #: whether a tensor of them is small enough to carry its data (shapes, axes, scales).
    constants: dict[tuple[int, tuple[int, ...]], tuple[TensorType, int]] = {}
    data_limits = INITIALIZER_DATA_LIMITS
    for tensor in graph.initializer:
        name = tensor.name
        elem = tensor.data_type
        is_input = name in origins
        if not is_input:
            origins[name] = INITIALIZER
        if is_input and overridable_initializers:
            if name not in types:  # an override may have other dims, not another element type
                types[name] = TensorType(elem, None)
            continue
        if elem in INT_ELEMS and external is not None and tensor.data_location == DataLocation.EXTERNAL:
            inlined = external.inlined(tensor, DATA_LIMIT * 8)
            tensor = tensor if inlined is None else inlined
        dims = tuple(tensor.dims[:])  # a slice first: far quicker than iterating the field
        key = (elem, dims)
        known = constants.get(key)
        if known is None:
            limit = data_limits.get(elem)
            count = prod(dims) if limit is not None else -1
            carries = limit is not None and 0 <= count <= limit
            known = constants[key] = (TensorType(elem, dims), count if carries else -1)
        constant, count = known
        if count >= 0:  # only small tensors carry data
            data = counted_tensor_data(tensor, elem, dims, count)
            if data is not None:
                datas[name] = data
        if is_input:
            if type(types.get(name)) is UnreadType:
                deferred.resolve()  # merged with the tensor: its dims are looked at
            try:
                constant = merge_types(types.get(name), constant)
            except TypeConflict:
                pass  # the tensor itself is what the graph holds
        types[name] = constant
    for sparse in graph.sparse_initializer:
        name = sparse.values.name
        origins.setdefault(name, INITIALIZER)
        types.setdefault(name, TensorType(sparse.values.data_type, tuple(sparse.dims)))

    value_info_types: dict[str, Any] = {}
    for value_info in graph.value_info:
        value = reader.value_info(value_info)
        if value is not None and value_info.name not in origins:
            value_info_types[value_info.name] = value
            declared[value_info.name] = value
            types.setdefault(value_info.name, value)
    outputs_read = read_entries(graph.output)
    output_names = outputs_read.names
    declared_outputs, plain_outputs = reader.value_infos_as_written(graph.output, outputs_read.keys)
    output_types: dict[str, Any] = dict(zip(output_names, declared_outputs))
    if not declared and len(output_types) == len(output_names) and None not in output_types.values() \
            and origins.keys().isdisjoint(output_types):  # nothing to merge with: the declarations as they are
        declared.update(output_types)
    else:
        for name, value in zip(output_names, declared_outputs):
            if value is not None and name not in origins:
                previous = declared.get(name)
                try:
                    declared[name] = value if previous is None else merge_types(previous, value)
                except TypeConflict:
                    declared[name] = value

    op_set = op_set_or_installed(op_set)
    opsets = normalize_opsets(model.opset_import, op_set.registry)
    functions = {(f.domain, f.name): FunctionInfo(f, opsets, op_set.registry) for f in model.functions}
    engine = Walker(op_set, symbols, functions, check_type=options.check_type, data_prop=options.data_prop)
    subgraphs = SubgraphInference(engine, reader)
    engine.subgraphs = subgraphs.graphs
    engine.call_function = FunctionCalls(engine).call
    named = _symbol_names(value_info_types.values()) | _symbol_names(output_types.values())
    if named:  # declared symbols some inferred dims may replace: the inputs' symbols are needed
        deferred.resolve()
        # Only graph inputs carry symbols: an initializer's dims are numbers.
        # Not the symbols made up for unnamed input dims: a name the graph declares for one is kept.
        engine.input_symbols = frozenset(_symbol_names([types.get(value_info.name) for value_info in graph.input])
                                         - set(symbols.names_issued))
        engine.loose_symbols = frozenset(named - engine.input_symbols)
    engine.deferred = deferred if deferred.names else None
    nodes = graph.node
    outcome.node_count = len(nodes)
    entries: dict[tuple[str, str], Any] = {}  # per (domain, op_type): how the walk infers it
    seeded = len(types)  # what the graph gave: the walk adds node outputs after these
    try:
        # Producers are recorded for the report only: the write-back follows ``types``.
        engine.run(GraphWalk(nodes, types, datas, declared, opsets, entries,
                             outcome.producers if options.report else None, engine.errors, options.strict_mode))
        _refuse_unwritable_dims(engine, nodes, outcome, options.strict_mode)
    finally:
        outcome.errors = [error for error in engine.errors if error.is_error]
        outcome.notes = [error for error in engine.errors if not error.is_error]
        outcome.unknown = engine.unknown
        outcome.unknown_nodes = engine.unknown_nodes
        outcome.implied = engine.implied
        outcome.op_types = list(entries)
    if options.report:
        outcome.nodes = nodes
    if options.write_back:
        if deferred.names and _rewrites_unread(graph, types, value_info_types, plain_outputs):
            deferred.resolve()
        _write_back(graph, outcome, seeded, value_info_types, output_types, plain_outputs,
                    TypeEncoder(reader.encoded_dims, reader.encoded_types), options.merge_new, outputs_read)
        subgraphs.write_back()
    # The walker's helpers refer back to it: break the cycle, so that everything the walk and
    # the reader made is freed now, not at the cycle collector's next pass over all of it.
    engine.subgraphs = engine.call_function = engine.deferred = None
    return outcome


def _op_labels(nodes: Any) -> list[str]:
    """Per node: its op type, with the domain unless it is ai.onnx (one string per distinct label)."""
    labels: dict[tuple[str, str], str] = {}
    found = []
    for node in nodes:
        key = (node.domain, node.op_type)
        label = labels.get(key)
        if label is None:
            domain, op_type = key
            label = labels[key] = op_type if not domain or domain == "ai.onnx" else f"{domain}::{op_type}"
        found.append(label)
    return found


def _refuse_unwritable_dims(engine: Walker, nodes: Any, outcome: GraphOutcome, strict: bool) -> None:
    """A dim no model can hold (beyond int64) is its producer's error, and becomes unknown."""
    if not engine.unwritable:
        return
    types = outcome.types
    producers = outcome.producers or {name: index for index, node in enumerate(nodes) for name in node.output if name}
    for name, index in producers.items():
        value = types.get(name)
        dim = dim_out_of_range(value)
        if dim is not None:
            types[name] = without_bad_dims(value)
            engine.fail(engine.errors, index, nodes[index],
                        f"output '{name}': dim {dim} does not fit in a model (dims are int64)", strict)


def _write_back(graph: Any, outcome: GraphOutcome, seeded: int, value_info_types: dict[str, Any],
                output_types: dict[str, Any], plain_outputs: frozenset[int], encoder: TypeEncoder,
                merge_new: bool, outputs_read: Entries) -> None:
    """Outputs get their inferred types, existing value_info is refined in place, new values appended."""
    # ``types`` holds the graph's inputs, initializers and declared values first (``seeded`` of
    # them, none written: a node output of one of their names keeps its place among them), then
    # every other node output with a type, in node order.
    types = outcome._types  # (unread types are written from their bytes)
    outcome.added_values, outcome.unmerged_value_infos = write_graph(
        graph, types, islice(types, seeded, None), outcome.origins, value_info_types,
        output_types, encoder, merge=merge_new, plain_outputs=plain_outputs, outputs_read=outputs_read)


__all__ = ["GraphOutcome", "INITIALIZER", "INPUT", "infer_model", "with_collector_paused"]


def _symbol_names(values: Iterable[Any]) -> set[str]:
    """The names of the single-symbol dims of tensor types."""
    dims: set[Any] = set()  # each distinct dim once (shapes repeat them)
    listed = list(values)
    for value in dict(zip(map(id, listed), listed)).values():  # values share their type objects
        if type(value) is TensorType and value.shape is not None:
            dims.update(value.shape)
    return {dim.name for dim in dims if type(dim) is Sym and dim.name is not None}


def _rewrites_unread(graph: Any, types: dict[str, Any], value_info_types: dict[str, Any],
                     plain_outputs: frozenset[int]) -> bool:
    """Whether the write-back would compare an unread type with what the graph declares beyond
    bytes (an output whose declared type holds more than a writer writes, a value_info entry)."""
    get = types.get
    outputs = graph.output
    return any(type(get(name)) is UnreadType for name in value_info_types) or len(plain_outputs) < len(outputs) and any(
        type(get(value_info.name)) is UnreadType for index, value_info in enumerate(outputs)
        if index not in plain_outputs)
