"""The graph engine: runs each node's inference rule over plain values, in node order.

State lives in dictionaries keyed by value name (``types``, ``datas``); protobuf is read
only for each node's own fields. Schema lookups, rule lookups and output-type bindings
are cached per ``(domain, op_type)`` (per opset scope), so the per-node path is: read the
node, build an :class:`InferenceContext`, bind output element types, call the rule,
merge and store the outputs.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Iterable

from opspec.runtime.contract import (
    InferenceContext,
    InferenceError,
    MapType,
    OptionalType,
    SequenceType,
    SparseTensorType,
    TensorType,
    TensorValue,
)
from opspec.runtime.defs import INFERENCE, REGISTRY

#: Domains whose nodes onnxruntime runs without an opset import: its own (not the standard ones).
IMPLIED_DOMAINS = frozenset(info.node_domain for info in INFERENCE.domains()) - frozenset(
    info.node_domain for info in REGISTRY.domains())
from opspec.runtime.inference.checks import check_node, check_outputs, formal_positions
from opspec.runtime.inference.convert import DimReader, attribute_values, type_from_string
from opspec.runtime.inference.typeops import TypeConflict, describe, merge_types, prefer_inferred, type_only
from opspec.runtime.registry import SchemaError
from opspec.runtime.rulebook import RULES
from opspec.runtime.schema import OpSchema
from opspec.runtime.shape import ShapeError, SymbolTable

_EMPTY: dict = {}
_VALUE_TYPES = frozenset({TensorType, SparseTensorType, SequenceType, OptionalType, MapType})
#: How many distinct results each op remembers for reuse by identical later nodes
#: (0 turns reuse off; the benchmarks measure both ways).
MEMO_LIMIT = 4096
#: ``TensorType(elem, None)`` per element type, shared (what output bindings start from).
_ELEM_ONLY = {elem: TensorType(elem, None) for elem in range(64)}
#: An exception in a rule other than a node error is a bug in the rule: by default it is
#: reported as the node's error (naming the node); with this set (the environment
#: variable ``OPSPEC_DEBUG``, as the test suite does) it propagates, so it can be seen.
RAISE_RULE_BUGS = bool(os.environ.get("OPSPEC_DEBUG"))


class NodeError:
    """One problem found at one node."""

    __slots__ = ("index", "name", "op_type", "domain", "message")

    def __init__(self, index: int, name: str, op_type: str, domain: str, message: str) -> None:
        self.index, self.name, self.op_type, self.domain, self.message = index, name, op_type, domain, message

    @property
    def where(self) -> str:
        """``node 'conv1' (Conv, domain 'ai.onnx')``; unnamed nodes go by their position."""
        who = f"node '{self.name}'" if self.name else f"node #{self.index}"
        return f"{who} ({self.op_type}, domain '{self.domain or 'ai.onnx'}')"

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"

    def __repr__(self) -> str:
        return f"NodeError({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NodeError) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))


# --------------------------------------------------------------------------- per-op entries

_SCHEMA, _FUNCTION, _UNKNOWN, _BROKEN = range(4)


class OpEntry:
    """What the engine needs to run one ``(domain, op_type)`` under one set of opset imports."""

    __slots__ = ("kind", "schema", "rule", "args", "opset", "plans", "is_constant", "function", "reason", "memo",
                 "has_graphs")

    def __init__(self, kind: int, schema: OpSchema | None = None, rule: Callable | None = None,
                 args: dict | None = None, opset: int = 0, function: Any = None, reason: str = "") -> None:
        self.kind, self.schema, self.rule, self.args, self.opset = kind, schema, rule, args, opset
        self.function, self.reason = function, reason
        self.plans: dict = {}
        #: Outputs of the ``constant`` rule are known data even without data propagation.
        self.is_constant = schema is not None and schema.inference is not None and schema.inference.name == "constant"
        #: Whether the op has graph attributes (inferred before its rule runs).
        self.has_graphs = schema is not None and any(
            a.type in (5, 10) for a in schema.attributes.values())  # AttrType.GRAPH, GRAPHS
        #: Results by (input types, input data, attributes, output count); None when not memoized.
        self.memo: dict | None = {} if rule is not None and not self.has_graphs else None

    def plan(self, input_count: int, output_count: int) -> tuple:
        """Per actual output: (actual inputs sharing its type parameter, fallback type)."""
        key = (input_count, output_count)
        plan = self.plans.get(key)
        if plan is None:
            plan = self.plans[key] = _binding_plan(self.schema, input_count, output_count)
        return plan


def _binding_plan(schema: OpSchema, input_count: int, output_count: int) -> tuple:
    inputs, outputs = schema.inputs, schema.outputs
    input_formals = formal_positions(inputs, input_count)
    allowed = {c.type_param_str: c.allowed_type_strs for c in schema.type_constraints}
    plan = []
    for formal in formal_positions(outputs, output_count):
        if formal is None:
            plan.append(((), None))
            continue
        output = outputs[formal]
        type_str = output.type_str
        if type_str in allowed:
            sources = tuple(i for i, f in enumerate(input_formals) if f is not None and inputs[f].type_str == type_str)
            if output.option == 2 and not output.is_homogeneous:
                sources = ()  # each output of a heterogeneous variadic has a type of its own
            choices = allowed[type_str]
        else:
            sources, choices = (), (type_str,)
        fixed = None
        if len(choices) == 1:
            try:
                fixed = type_from_string(choices[0])
            except (ValueError, KeyError):
                fixed = None
        plan.append((sources, fixed))
    return tuple(plan)


def _bind(inputs: list, sources: tuple, fixed: Any) -> Any:
    """The output type a type parameter binds to: the first known input's type without its
    shapes (a parameter relates types, not shapes), else ``fixed``."""
    for index in sources:
        value = inputs[index]
        if value is not None:
            kind = type(value)
            if kind is TensorType:
                if value.elem:
                    return _ELEM_ONLY.get(value.elem) or TensorType(value.elem, None)
            elif kind is SparseTensorType:
                if value.elem:
                    return SparseTensorType(value.elem, None)
            else:
                return type_only(value)
    return fixed


def _freeze(attributes: dict) -> tuple | None:
    """Attributes as a hashable key (lists become tuples, values tagged with their type), or None."""
    items = []
    for name, value in attributes.items():
        kind = type(value)
        if kind is list:
            value = tuple(value)
        elif kind is not int and kind is not float and kind is not str and kind is not TensorValue:
            return None  # graphs and other messages: not worth keying on
        items.append((name, kind, value))
    return tuple(items)


# --------------------------------------------------------------------------- functions

class FunctionInfo:
    """A model-local function, prepared on its first call."""

    __slots__ = ("proto", "key", "inputs", "outputs", "defaults", "has_refs", "opsets", "entries", "declared",
                 "results")

    def __init__(self, proto: Any, model_opsets: dict[str, int]) -> None:
        self.proto = proto
        self.key = (proto.domain, proto.name)
        self.inputs = list(proto.input)
        self.outputs = list(proto.output)
        self.defaults = {a.name: a for a in proto.attribute_proto}
        self.has_refs = any(a.ref_attr_name for node in proto.node for a in node.attribute)
        self.opsets = dict(model_opsets)
        self.opsets.update(normalize_opsets(proto.opset_import))
        self.entries: dict = {}
        self.declared: dict | None = None
        self.results: dict = {}

    def body(self, call: Any) -> Iterable[Any]:
        """The body's nodes, with attributes that refer to the call's attributes filled in."""
        if not self.has_refs:
            return self.proto.node
        given = dict(self.defaults)
        given.update({a.name: a for a in call.attribute})
        nodes = []
        for node in self.proto.node:
            if not any(a.ref_attr_name for a in node.attribute):
                nodes.append(node)
                continue
            copy = type(node)()
            copy.CopyFrom(node)
            del copy.attribute[:]
            for attribute in node.attribute:
                source = given.get(attribute.ref_attr_name) if attribute.ref_attr_name else attribute
                if source is None:
                    continue
                added = copy.attribute.add()
                added.CopyFrom(source)
                added.name = attribute.name
                added.ClearField("ref_attr_name")
            nodes.append(copy)
        return nodes


def normalize_opsets(opset_imports: Iterable[Any]) -> dict[str, int]:
    """Opset imports by canonical domain (``""`` and ``"ai.onnx"`` are one domain)."""
    opsets = {}
    for entry in opset_imports:
        try:
            domain = INFERENCE.canonical_domain(entry.domain)
        except SchemaError:
            domain = entry.domain
        opsets[domain] = entry.version
    return opsets


# --------------------------------------------------------------------------- the engine

class Engine:
    """Runs inference over one model's graph (and the functions it calls).

    ``errors`` collects :class:`NodeError` s (with ``strict``, :meth:`run` raises at the first);
    ``unknown`` maps ``(domain, op_type)`` of ops without a schema to the reason, and
    ``unknown_nodes`` lists the main-graph nodes concerned.
    """

    def __init__(self, symbols: SymbolTable, functions: dict[tuple[str, str], FunctionInfo], *,
                 check_type: bool = False, data_prop: bool = False) -> None:
        self.symbols = symbols
        self.functions = functions
        self.check_type = check_type
        self.data_prop = data_prop
        self.errors: list[NodeError] = []
        self.unknown: dict[tuple[str, str], str] = {}
        self.unknown_nodes: list[NodeError] = []  # main-graph nodes without a schema
        #: Domains used without an opset import and inferred at their newest version.
        self.implied: dict[str, int] = {}
        self._active: set = set()
        #: Infers the graph attributes of a node (set by the graph module: it owns subgraphs).
        self.subgraphs: Callable | None = None
        #: Symbols the main graph declares for values but no input carries (inferred dims of
        #: ``input_symbols`` replace them), and the symbols of its inputs and initializers.
        self.loose_symbols: frozenset[str] = frozenset()
        self.input_symbols: frozenset[str] = frozenset()

    # -- lookups ------------------------------------------------------------------------

    def resolve(self, domain: str, op_type: str, opsets: dict[str, int]) -> OpEntry:
        try:
            canonical = INFERENCE.canonical_domain(domain)
        except SchemaError:
            canonical = None
        function = self.functions.get((domain, op_type))
        if function is None and canonical is not None:
            function = self.functions.get((canonical, op_type)) or self.functions.get(
                ("ai.onnx" if canonical == "" else canonical, op_type))
        if canonical is None:
            if function is not None:
                return OpEntry(_FUNCTION, function=function)
            return OpEntry(_UNKNOWN, reason=f"unknown domain '{domain}'")
        version = opsets.get(canonical)
        if version is None and function is None and canonical in IMPLIED_DOMAINS:
            # onnxruntime runs its own domains' nodes without an opset import, at the domain's
            # newest version; infer them so too, and say so in the report.
            version = self.implied.setdefault(canonical, INFERENCE.domain(canonical).opset_max)
        if version is None:
            if function is not None:
                return OpEntry(_FUNCTION, function=function)
            return OpEntry(_BROKEN, reason=f"the model imports no opset for domain '{domain or 'ai.onnx'}'")
        try:
            schema = INFERENCE.get_schema(op_type, version, canonical)
        except SchemaError as error:
            if function is not None:
                return OpEntry(_FUNCTION, function=function)
            return OpEntry(_UNKNOWN, reason=str(error))
        rule, args = None, _EMPTY
        if schema.inference is not None:
            rule = RULES.lookup(schema.inference.name)
            if rule is not None:
                args = RULES.spec(schema.inference.name).defaults()
                args.update(schema.inference.args)
        return OpEntry(_SCHEMA, schema, rule, args, version)

    # -- errors -------------------------------------------------------------------------
    def fail(self, errors: list, index: int, node: Any, message: str, strict: bool) -> None:
        error = NodeError(index, node.name, node.op_type, node.domain, message)
        errors.append(error)
        if strict:
            raised = InferenceError(str(error))
            raised.errors = [error]  # type: ignore[attr-defined]
            raise raised

    # -- the node loop ------------------------------------------------------------------
    def run(self, nodes: Iterable[Any], types: dict, datas: dict, declared: dict, opsets: dict[str, int],
            entries: dict, producers: dict, errors: list, strict: bool) -> None:
        """Infer every node in order, updating ``types``/``datas``; record producers by node index.

        A node whose op, input types, input data and attributes match an earlier node's
        reuses that node's results (models repeat the same block many times), unless the
        rule failed or made up fresh symbols there.
        """
        get_entry = entries.get
        get_type = types.get
        get_data = datas.get
        get_declared = declared.get
        symbols = self.symbols
        record_data = self.data_prop
        check_type = self.check_type
        context = InferenceContext
        bind = _bind
        elem_only = _ELEM_ONLY
        tensor = TensorType
        fail = self.fail
        freeze = _freeze
        for index, node in enumerate(nodes):
            op_type = node.op_type
            domain = node.domain
            entry = get_entry((domain, op_type))
            if entry is None:
                entry = entries[domain, op_type] = self.resolve(domain, op_type, opsets)
            if entry.kind != _SCHEMA:
                self._other(entry, index, node, types, datas, declared, producers, errors, strict)
                continue
            in_names = node.input[:]  # slicing is the fastest way to a list of a repeated field
            out_names = node.output[:]
            inputs = list(map(get_type, in_names))
            data = list(map(get_data, in_names)) if datas else None
            attribute_protos = node.attribute
            attributes = attribute_values(attribute_protos) if attribute_protos else _EMPTY
            output_count = len(out_names)
            schema = entry.schema
            conforms = True
            if check_type:
                for problem in check_node(schema, in_names, output_count, inputs, attribute_protos, attributes):
                    conforms = False
                    fail(errors, index, node, problem, strict)

            # Reuse the results of an identical earlier node when there is one.
            memo = entry.memo if MEMO_LIMIT else None
            key = None
            if memo is not None:
                frozen = freeze(attributes) if attributes else ()
                if frozen is not None:
                    # An omitted input and a supplied but unknown one both read None: tell them apart.
                    omitted = tuple([not name for name in in_names]) if None in inputs else None
                    key = (tuple(inputs), tuple(data) if data else None, frozen, output_count, omitted)
                    try:
                        found = memo.get(key)
                    except TypeError:  # something unhashable (a float NaN is fine; a message is not)
                        key = found = None
                    if found is not None:
                        outputs, output_data = found
                        if output_count == 1 and output_data[0] is None:  # the common case, stored inline
                            name = out_names[0]
                            if name and get_declared(name) is None:
                                if outputs[0] is not None:
                                    types[name] = outputs[0]
                                producers[name] = index
                                continue
                        self._store(out_names, outputs, output_data, record_data or entry.is_constant, index, node,
                                    types, datas, get_declared, producers, errors, strict)
                        continue

            subgraphs = infer_subgraphs = None
            if entry.has_graphs and self.subgraphs is not None:
                subgraphs, infer_subgraphs = self.subgraphs(index, node, types, datas, opsets, errors, strict)
            ctx = context(schema, inputs, attributes, args=entry.args, data=data, names=in_names, symbols=symbols,
                          node_name=node.name, opset=entry.opset, output_count=output_count,
                          subgraphs=subgraphs, infer_subgraph=infer_subgraphs)
            outputs = ctx._outputs  # the engine's side of the contract: pre-bound output types
            n_in = len(inputs)
            plan = entry.plans.get((n_in, output_count)) or entry.plan(n_in, output_count)
            position = 0
            for sources, fixed in plan:
                if sources:
                    value = inputs[sources[0]]
                    if type(value) is tensor and value.elem:
                        outputs[position] = elem_only.get(value.elem) or bind(inputs, sources, fixed)
                    else:
                        outputs[position] = bind(inputs, sources, fixed)
                else:
                    outputs[position] = fixed
                position += 1
            rule = entry.rule
            failed = False
            if rule is not None:
                fresh_before = symbols.issued
                try:
                    rule(ctx)
                except (InferenceError, ShapeError, TypeConflict) as error:
                    failed = True
                    fail(errors, index, node, str(error) or type(error).__name__, strict)
                except Exception as error:  # noqa: BLE001 - a bug in the rule, reported against the node
                    if RAISE_RULE_BUGS:
                        raise
                    failed = True
                    fail(errors, index, node, _rule_failure(error), strict)
                for position, value in enumerate(outputs):
                    if value is not None and type(value) not in _VALUE_TYPES:
                        if RAISE_RULE_BUGS:
                            raise TypeError(f"rule {schema.inference.name!r} set output {position} to {value!r}")
                        outputs[position] = None
                        failed = True
                        fail(errors, index, node, f"inference gave output {position} a value that is not a type "
                             f"({type(value).__name__})", strict)
                if check_type and conforms and not failed:  # a result memoized below has passed this
                    for problem in check_outputs(schema, outputs):
                        failed = True
                        fail(errors, index, node, problem, strict)
                if key is not None and not failed and symbols.issued == fresh_before and len(memo) < MEMO_LIMIT:
                    memo[key] = (tuple(outputs), tuple(ctx._output_data))
            self._store(out_names, outputs, ctx._output_data, record_data or entry.is_constant, index, node,
                        types, datas, get_declared, producers, errors, strict)

    def _store(self, out_names: list, outputs: Any, output_data: Any, keep_data: bool, index: int, node: Any,
               types: dict, datas: dict, get_declared: Callable, producers: dict, errors: list,
               strict: bool) -> None:
        """Merge a node's outputs with what the graph declares and record them by name."""
        position = 0
        for name in out_names:
            if name:
                value = outputs[position]
                previous = get_declared(name)
                if previous is not None:
                    try:
                        merged = merge_types(previous, value)
                        value = (prefer_inferred(merged, value, self.loose_symbols, self.input_symbols)
                                 if self.loose_symbols else merged)
                    except TypeConflict as conflict:
                        self.fail(errors, index, node, f"output '{name}': inferred type {describe(value)} "
                                  f"conflicts with the declared {describe(previous)} ({conflict})", strict)
                        value = previous
                    except Exception as error:  # noqa: BLE001 - a rule set something that is not a type
                        self.fail(errors, index, node, f"output '{name}': {_rule_failure(error)}", strict)
                        value = previous
                if value is not None:
                    types[name] = value
                producers[name] = index
                if keep_data:
                    value = output_data[position]
                    if value is not None:
                        datas[name] = value
            position += 1

    # -- nodes without a rule-driven schema ----------------------------------------------
    def _other(self, entry: OpEntry, index: int, node: Any, types: dict, datas: dict, declared: dict,
               producers: dict, errors: list, strict: bool) -> None:
        out_names = list(node.output)
        results: list = [None] * len(out_names)
        result_data: list = [None] * len(out_names)
        if entry.kind == _FUNCTION:
            inputs = [types.get(name) for name in node.input]
            data = [datas.get(name) for name in node.input]
            try:
                results, result_data = self.call(entry.function, node, inputs, data, errors, index, strict)
            except InferenceError:
                raise
            except Exception as error:  # noqa: BLE001 - a broken function body is this node's error
                if RAISE_RULE_BUGS:
                    raise
                self.fail(errors, index, node, _rule_failure(error), strict)
        elif entry.kind == _UNKNOWN:
            self.unknown.setdefault((node.domain, node.op_type), entry.reason)
            if errors is self.errors:  # a node of the main graph, not of a function body
                self.unknown_nodes.append(NodeError(index, node.name, node.op_type, node.domain, entry.reason))
        else:
            self.fail(errors, index, node, entry.reason, strict)
        padding = len(out_names) - len(results)
        self._store(out_names, list(results) + [None] * padding, list(result_data) + [None] * padding, True,
                    index, node, types, datas, declared.get, producers, errors, strict)

    def call(self, function: FunctionInfo, node: Any, inputs: list, data: list, errors: list, index: int,
             strict: bool) -> tuple[list, list]:
        """Infer a call of a model-local function: its body over the call's input types."""
        if function.key in self._active:
            self.fail(errors, index, node, f"function '{function.proto.name}' calls itself", strict)
            return [], []
        cache_key = None
        if not function.has_refs:
            try:
                cache_key = (tuple(inputs), tuple(data))
                hash(cache_key)
            except TypeError:
                cache_key = None
        if cache_key is not None and cache_key in function.results:
            return function.results[cache_key]
        if function.declared is None:
            reader = DimReader()
            function.declared = {vi.name: t for vi in function.proto.value_info
                                 if (t := reader.value_info(vi)) is not None}
        types = {name: value for name, value in zip(function.inputs, inputs) if name and value is not None}
        datas = {name: value for name, value in zip(function.inputs, data) if name and value is not None}
        for name, value in function.declared.items():
            types.setdefault(name, value)
        inner: list[NodeError] = []
        symbols_before = self.symbols.issued
        self._active.add(function.key)
        try:
            self.run(function.body(node), types, datas, function.declared, function.opsets, function.entries, {},
                     inner, False)
        finally:
            self._active.discard(function.key)
        for error in inner:
            self.fail(errors, index, node, f"in function '{function.proto.name}': {error}", strict)
        result = ([types.get(name) for name in function.outputs], [datas.get(name) for name in function.outputs])
        if cache_key is not None and not inner and self.symbols.issued == symbols_before:
            function.results[cache_key] = result
        return result


def _rule_failure(error: BaseException) -> str:
    """An exception from a rule as one line: its message, plus the kind when unexpected."""
    text = str(error) or type(error).__name__
    if isinstance(error, (InferenceError, ShapeError, TypeConflict)):
        return text
    return f"inference failed ({type(error).__name__}: {text})"


__all__ = ["Engine", "FunctionInfo", "NodeError", "OpEntry", "normalize_opsets"]
