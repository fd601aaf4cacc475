"""Resolving a node: which schema version, rule and function it runs, and how its output types bind.

A node is resolved once per ``(domain, op_type)`` and set of opset imports into an
:class:`OpEntry`; the walk keeps the entries. Binding gives each output the type its type
parameter takes from the inputs (or the single type it allows) before the rule runs.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from opspec.runtime.contract import SparseTensorType, TensorType
from opspec.runtime.contract.declare import SPEC_ATTRIBUTE, RuleSpec
from opspec.runtime.contract.positions import FormalPositions
from opspec.runtime.inference.checks import formal_positions
from opspec.runtime.inference.read_types import type_from_string
from opspec.runtime.inference.typeops import type_only
from opspec.runtime.ir.codes import GRAPH_KINDS
from opspec.runtime.op_set import OpSet, SchemaCache
from opspec.runtime.registry import Registry, SchemaError
from opspec.runtime.rulebook import RuleBook
from opspec.runtime.schema import FormalParameterOption, OpSchema
from opspec.runtime.types import TypeStringError

#: ``TensorType(elem, None)`` per element type, shared (what output bindings start from).
ELEM_ONLY = {elem: TensorType(elem, None) for elem in range(64)}
_EMPTY: dict[str, Any] = {}

#: Per output: the actual inputs that share its type parameter, and the type it has when they say nothing.
BindingPlan = tuple[tuple[tuple[int, ...], Any], ...]


class EntryKind(enum.IntEnum):
    """How a node is inferred."""

    SCHEMA = 0  # by its schema's rule
    FUNCTION = 1  # by a model-local function's body
    UNKNOWN = 2  # not at all: no schema (reported as an unknown op)
    BROKEN = 3  # not at all: the model is wrong (reported as the node's error)


class OpEntry:
    """What the walk needs to run one ``(domain, op_type)`` under one set of opset imports."""

    __slots__ = ("kind", "schema", "rule", "args", "opset", "plans", "constant_output", "function", "reason",
                 "memo", "has_graphs", "attributes_unread", "data_unread", "types_only",
                 "recent", "passes_type", "positions")

    def __init__(self, kind: EntryKind, schema: OpSchema | None = None, rule: Callable[..., Any] | None = None,
                 args: dict[str, Any] | None = None, opset: int = 0, function: Any = None, reason: str = "",
                 constant_output: bool = False, plans: dict[tuple[int, int], BindingPlan] | None = None) -> None:
        self.kind, self.schema, self.rule, self.args, self.opset = kind, schema, rule, args or _EMPTY, opset
        self.function, self.reason = function, reason
        #: Binding plans by (input count, output count): a schema's own, possibly shared by entries.
        self.plans: dict[tuple[int, int], BindingPlan] = {} if plans is None else plans
        #: The rule's outputs are the node's own constants: their data is kept without data propagation.
        self.constant_output = constant_output
        #: Whether the op has graph attributes (inferred before its rule runs).
        self.has_graphs = schema is not None and any(a.type in GRAPH_KINDS for a in schema.attributes.values())
        #: Results by (input types, input data, attributes, output count); None when not memoized.
        self.memo: dict[Any, Any] | None = {} if rule is not None and not self.has_graphs else None
        #: The schema declares no attribute and no rule run has looked at a node's: nodes are
        #: inferred without reading theirs (the walk clears this when a rule looks).
        self.attributes_unread = schema is not None and not schema.attributes
        #: No rule run has looked at the data of a node's inputs: nodes are inferred without
        #: gathering it (the walk clears this when a rule looks).
        self.data_unread = self.memo is not None
        #: Both of the above, with memoized results: a node's result follows from its input
        #: types alone (the walk's quickest path).
        self.types_only = self.data_unread and self.attributes_unread
        #: The last single-output result without data the walk found for input types alone:
        #: ``(input types, output type)``, none of them None (runs of nodes alike compare instead
        #: of hashing).
        self.recent: tuple[tuple[Any, ...], Any] | None = None
        #: A node of one input and one output gets the input's tensor type unchanged, when its
        #: element type is known (the rule need not run: see ``RuleSpec.passes_input_type``).
        self.passes_type = False
        #: The schema's input and output names with their positions (see :meth:`formal_positions`).
        self.positions: FormalPositions | None = None

    def formal_positions(self) -> FormalPositions:
        """The schema's names with their positions, built when a rule first names an input or output."""
        positions = self.positions
        if positions is None:
            assert self.schema is not None  # only a schema's rule runs
            positions = self.positions = FormalPositions(self.schema)
        return positions

    def reads_attributes(self) -> None:
        """A rule run looked at a node's attributes: read them with every node from now on."""
        self.attributes_unread = self.types_only = False

    def reads_data(self) -> None:
        """A rule run looked at a node's input data: gather it with every node from now on."""
        self.data_unread = self.types_only = False

    def plan(self, input_count: int, output_count: int) -> BindingPlan:
        """Per actual output: (actual inputs sharing its type parameter, fallback type)."""
        key = (input_count, output_count)
        plan = self.plans.get(key)
        if plan is None:
            assert self.schema is not None
            plan = self.plans[key] = binding_plan(self.schema, input_count, output_count)
        return plan


def binding_plan(schema: OpSchema, input_count: int, output_count: int) -> BindingPlan:
    """How each of ``output_count`` outputs binds its type, given ``input_count`` inputs."""
    inputs, outputs = schema.inputs, schema.outputs
    input_formals = formal_positions(inputs, input_count)
    allowed = {c.type_param_str: c.allowed_type_strs for c in schema.type_constraints}
    plan: list[tuple[tuple[int, ...], Any]] = []
    for formal in formal_positions(outputs, output_count):
        if formal is None:
            plan.append(((), None))
            continue
        output = outputs[formal]
        type_str = output.type_str
        choices: Sequence[str]
        if type_str in allowed:
            sources = tuple(i for i, f in enumerate(input_formals) if f is not None and inputs[f].type_str == type_str)
            if output.option == FormalParameterOption.Variadic and not output.is_homogeneous:
                sources = ()  # each output of a heterogeneous variadic has a type of its own
            choices = allowed[type_str]
        else:
            sources, choices = (), (type_str,)
        fixed = None
        if len(choices) == 1:
            try:
                fixed = type_from_string(choices[0])
            except (TypeStringError, KeyError):
                fixed = None
        plan.append((sources, fixed))
    return tuple(plan)


def bind_output(inputs: Sequence[Any], sources: tuple[int, ...], fixed: Any) -> Any:
    """The output type a type parameter binds to: the first known input's type without its
    shapes (a parameter relates types, not shapes), else ``fixed``."""
    for index in sources:
        value = inputs[index]
        if value is not None:
            kind = type(value)
            if kind is TensorType:
                if value.elem:
                    return ELEM_ONLY.get(value.elem) or TensorType(value.elem, None)
            elif kind is SparseTensorType:
                if value.elem:
                    return SparseTensorType(value.elem, None)
            else:
                return type_only(value)
    return fixed


def normalize_opsets(opset_imports: Iterable[Any], registry: Registry) -> dict[str, int]:
    """Opset imports by ``registry``'s canonical domain (``""`` and ``"ai.onnx"`` are one domain)."""
    opsets = {}
    for entry in opset_imports:
        try:
            domain = registry.canonical_domain(entry.domain)
        except SchemaError:
            domain = entry.domain
        opsets[domain] = entry.version
    return opsets


def resolve(op_set: OpSet, domain: str, op_type: str, opsets: dict[str, int], functions: dict[tuple[str, str], Any],
            implied: dict[str, int]) -> OpEntry:
    """How nodes of ``(domain, op_type)`` are inferred under ``opsets``, from ``op_set``.

    A model-local function in ``functions`` serves when no schema does; a domain of
    onnxruntime's own used without an opset import is taken at its newest version, which
    is recorded in ``implied``.
    """
    registry = op_set.registry
    try:
        canonical: str | None = registry.canonical_domain(domain)
    except SchemaError:
        canonical = None
    function = functions.get((domain, op_type))
    if function is None and canonical is not None:
        function = functions.get((canonical, op_type)) or functions.get(
            ("ai.onnx" if canonical == "" else canonical, op_type))
    if canonical is None:
        if function is not None:
            return OpEntry(EntryKind.FUNCTION, function=function)
        return OpEntry(EntryKind.UNKNOWN, reason=f"unknown domain '{domain}'")
    version = opsets.get(canonical)
    if version is None and function is None and canonical in op_set.implied_domains:
        # onnxruntime runs its own domains' nodes without an opset import, at the domain's
        # newest version; infer them so too, and say so in the report.
        version = implied.setdefault(canonical, registry.domain(canonical).opset_max)
    if version is None:
        if function is not None:
            return OpEntry(EntryKind.FUNCTION, function=function)
        return OpEntry(EntryKind.BROKEN, reason=f"the model imports no opset for domain '{domain or 'ai.onnx'}'")
    try:
        schema = registry.get_schema(op_type, version, canonical)
    except SchemaError as error:
        if function is not None:
            return OpEntry(EntryKind.FUNCTION, function=function)
        return OpEntry(EntryKind.UNKNOWN, reason=str(error))
    return schema_entry(schema, op_set.rules, version, op_set.schema_cache)


def schema_entry(schema: OpSchema, rules: RuleBook, opset: int = 0, cache: SchemaCache | None = None) -> OpEntry:
    """The entry of a schema: its rule (from ``rules``), with the declared defaults of the rule's
    arguments overridden by the schema's own.

    With ``cache``, what follows from the schema and its rule alone (the arguments, the binding
    plans) is kept there and shared by every later entry of the schema, for as long as ``rules``
    gives the same rule and declaration for it."""
    rule = spec = None
    if schema.inference is not None:
        rule = rules.lookup(schema.inference.name)
        spec = rules.spec(schema.inference.name)
    parts: _SchemaParts | None = None
    if cache is not None:
        parts = cache.get(schema)
        if parts is None or parts.rule is not rule or parts.spec is not spec:
            parts = _schema_parts(schema, rule, spec)
            cache.put(schema, parts)
    else:
        parts = _schema_parts(schema, rule, spec)
    entry = OpEntry(EntryKind.SCHEMA, schema, rule, parts.args, opset, constant_output=parts.constant_output,
                    plans=parts.plans)
    # Nothing of the node is checked (no attribute constraints), and the output's type parameter
    # is the input's own: then the type passes unchanged.
    entry.passes_type = parts.passes and entry.types_only and [sources for sources, _ in entry.plan(1, 1)] == [(0,)]
    return entry


@dataclass(frozen=True)
class _SchemaParts:
    """What an entry takes from its schema and rule: the rule's arguments, whether its outputs are
    the node's constants, whether it may pass its input's type on, and the binding plans so far."""

    rule: Callable[..., Any] | None
    spec: RuleSpec | None
    args: dict[str, Any]
    constant_output: bool
    passes: bool
    plans: dict[tuple[int, int], BindingPlan]


def _schema_parts(schema: OpSchema, rule: Callable[..., Any] | None, spec: RuleSpec | None) -> _SchemaParts:
    args, constant_output, passes = _EMPTY, False, False
    if schema.inference is not None and rule is not None and spec is not None:
        args = spec.defaults()
        args.update(schema.inference.args)
        constant_output = spec.constant_output
        # (the function that runs must declare it: the flag speaks for that function alone)
        own = getattr(rule, SPEC_ATTRIBUTE, None)
        passes = isinstance(own, RuleSpec) and own.passes_input_type and all(value is None for value in args.values())
    return _SchemaParts(rule, spec, args, constant_output, passes, {})


__all__ = ["BindingPlan", "ELEM_ONLY", "EntryKind", "OpEntry", "bind_output", "binding_plan",
           "normalize_opsets", "resolve", "schema_entry"]
