"""Resolve declarations into exact per-version schemas, checking their meaning on the way.

Version model: the first version of an op is written in full; each later version states
only what changed. ``inputs``/``outputs``, when present, restate the whole signature;
``attributes`` and ``types`` merge by name (a new name adds, an existing name replaces,
``null`` removes); ``inference`` and ``deprecated`` replace; everything else is inherited.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType
from typing import Any, Mapping, TypeVar

from opspec.codegen.constraints import constraint_problems
from opspec.codegen.convert_block import check_convert, frozen
from opspec.codegen.cost_block import cost_block
from opspec.codegen.diagnostics import Diagnostics
from opspec.codegen.model import (
    AttrDecl,
    CostDecl,
    DomainDecl,
    FunctionDecl,
    OpDecl,
    ParamDecl,
    RuleDecl,
    TypeParamDecl,
    VersionDecl,
)
from opspec.codegen.notation import float32
from opspec.codegen.source import Location
from opspec.runtime.contract.declare import NAMES_ATTRIBUTE, NAMES_INPUT, NAMES_INPUT_OR_ATTRIBUTE, PLAIN_KINDS
from opspec.runtime.schema import (
    UNBOUNDED,
    Attribute,
    AttrType,
    FormalParameter,
    FormalParameterOption,
    FunctionBody,
    NodeDeterminism,
    OpSchema,
    RuleRef,
    SupportType,
    TypeConstraintParam,
)
from opspec.codegen.type_sets import TypeSets
from opspec.runtime.types import TypeStringError, formal_type_string, is_type_string, normalize_type_string

#: An attribute's or a type parameter's declaration.
_Decl = TypeVar("_Decl")


@dataclass
class _State:
    """The accumulated declarations of an op up to some version."""

    inputs: tuple[ParamDecl, ...] = ()
    outputs: tuple[ParamDecl, ...] = ()
    attributes: dict[str, AttrDecl] = field(default_factory=dict)
    types: dict[str, TypeParamDecl] = field(default_factory=dict)
    inference: RuleDecl | None = None
    cost: CostDecl | None = None
    deprecated: bool = False
    support_level: str = "common"
    determinism: str = "deterministic"
    function: FunctionDecl | None = None
    #: Each declared attribute's record, built at the first version that has it and reused by the
    #: versions that inherit it (by the declaration's identity; the declaration is kept with it).
    built_attributes: dict[int, tuple[AttrDecl, Attribute]] = field(default_factory=dict)
    #: Each type parameter's expanded types and constraint, built at the first version that has it and
    #: reused likewise while its declaration stands (only when expanding it reported nothing).
    built_types: dict[int, tuple[TypeParamDecl, frozenset[str], TypeConstraintParam]] = field(default_factory=dict)

    def attribute(self, op: OpDecl, declared: AttrDecl, diagnostics: Diagnostics) -> Attribute:
        found = self.built_attributes.get(id(declared))
        if found is None:
            found = self.built_attributes[id(declared)] = (declared, _attribute(op, declared, diagnostics))
        return found[1]

    def type_constraint(self, op: OpDecl, name: str, declared: TypeParamDecl, type_sets: TypeSets,
                        diagnostics: Diagnostics) -> tuple[frozenset[str], TypeConstraintParam]:
        """The formal type strings a type parameter allows, and its constraint record."""
        found = self.built_types.get(id(declared))
        if found is not None:
            return found[1], found[2]
        reported = len(diagnostics)
        types = type_sets.items(declared.items)
        built = _formal_types(types), TypeConstraintParam(name, types, _doc(op, name, declared.doc))
        if len(diagnostics) == reported:  # a declaration with problems says so again at each version
            self.built_types[id(declared)] = (declared, *built)
        return built


@lru_cache(maxsize=1024)
def _formal_types(types: tuple[str, ...]) -> frozenset[str]:
    """The formal spellings of a type list (the same few lists recur in every op)."""
    return frozenset(map(formal_type_string, types))


def resolve_op(op: OpDecl, domain: DomainDecl, type_sets: TypeSets, diagnostics: Diagnostics,
               rules: Mapping[str, Any]) -> list[OpSchema]:
    """All versions of ``op``, resolved; problems go to ``diagnostics``."""
    state, previous = _State(), None
    schemas: list[OpSchema] = []
    for position, version in enumerate(op.versions):
        if previous is not None and version.since <= previous.since:
            diagnostics.error(
                version.location,
                f"versions must be listed in increasing order: {version.since} comes after {previous.since}",
            )
        if not domain.opset_min <= version.since <= domain.opset_max:
            diagnostics.error(
                version.location,
                f"version {version.since} is outside the opset range {domain.opset_min}..{domain.opset_max} "
                f"of domain {domain.name!r}",
            )
        if position == 0 and (version.inputs is None or version.outputs is None):
            diagnostics.error(version.location, "the first version must declare both inputs and outputs")
        _apply(version, state, diagnostics)
        schema = _build(op, domain, version, state, type_sets, diagnostics, rules)
        if schemas and _same_contract(schemas[-1], schema) and not version.notes:
            diagnostics.error(
                version.location,
                f"version {version.since} changes nothing visible from version {schemas[-1].since_version}; "
                "add 'notes' saying how its behaviour differs",
            )
        schemas.append(schema)
        previous = version
    _check_docs(op, schemas, diagnostics)
    check_convert(op.versions, schemas, diagnostics)
    return schemas


def _same_contract(before: OpSchema, after: OpSchema) -> bool:
    def contract(schema: OpSchema) -> tuple[Any, ...]:
        return (schema.inputs, schema.outputs, dict(schema.attributes), schema.type_constraints,
                schema.deprecated, schema.inference, schema.support_level, schema.node_determinism,
                schema.functions, schema.context_dependent_function_opset_versions, dict(schema.cost))

    return contract(before) == contract(after)


def _apply_changes(table: dict[str, _Decl], changes: Mapping[str, _Decl | None], where: Mapping[str, Location],
                   what: str, diagnostics: Diagnostics) -> None:
    """Add, replace or remove (a ``None`` change) the declarations a version names."""
    for name, declared in changes.items():
        if declared is None:
            if name not in table:
                diagnostics.error(where[name], f"cannot remove {what} {name!r}: the previous version has none")
            table.pop(name, None)
        else:
            table[name] = declared


def _apply(version: VersionDecl, state: _State, diagnostics: Diagnostics) -> None:
    if version.inputs is not None:
        state.inputs = version.inputs
    if version.outputs is not None:
        state.outputs = version.outputs
    _apply_changes(state.attributes, version.attributes, version.attribute_locations, "attribute", diagnostics)
    _apply_changes(state.types, version.types, version.type_locations, "type parameter", diagnostics)
    if version.inference_set:
        state.inference = version.inference
    if version.cost_set:
        state.cost = version.cost
    if version.deprecated is not None:
        state.deprecated = version.deprecated
    if version.type_order is not None:
        where = version.type_order_location or version.location
        if sorted(version.type_order) != sorted(state.types):
            diagnostics.error(where, f"type_order must list every type parameter once: {', '.join(state.types)}")
        else:
            state.types = {name: state.types[name] for name in version.type_order}
    state.support_level = version.support_level or state.support_level
    state.determinism = version.determinism or state.determinism
    if version.function_set:
        state.function = version.function


def _build(op: OpDecl, domain: DomainDecl, version: VersionDecl, state: _State, type_sets: TypeSets,
           diagnostics: Diagnostics,
           rules: Mapping[str, Any]) -> OpSchema:
    constraints = []
    allowed: dict[str, frozenset[str]] = {}
    for name, declared in state.types.items():
        allowed[name], constraint = state.type_constraint(op, name, declared, type_sets, diagnostics)
        constraints.append(constraint)
    exempt: set[str] = set()
    inputs = _params(op, state.inputs, allowed, "input", version, exempt, diagnostics)
    outputs = _params(op, state.outputs, allowed, "output", version, exempt, diagnostics)
    used = {p.spec.type_str for p in state.inputs + state.outputs}
    for name, declared in state.types.items():
        if name in used:
            continue
        if "unused-type-parameter" in version.allow:
            exempt.add("unused-type-parameter")
            continue
        where = version.type_locations.get(name, version.location)
        diagnostics.error(where, f"type parameter {name!r} is declared but no input or output uses it "
                                "(unless the version says `allow: [unused-type-parameter]`)")
    for name, where in version.allow.items():
        if name not in exempt:
            diagnostics.error(where, f"allow: {name!r} is not needed here; remove it so the check applies again")
    attributes = {name: state.attribute(op, declared, diagnostics) for name, declared in state.attributes.items()}
    input_names = [param.name for param in state.inputs]
    kinds = {name: attribute.spec.type for name, attribute in state.attributes.items()}
    for name, attribute in state.attributes.items():
        if attribute.spec.constraint is not None:
            for problem in constraint_problems(attribute.spec.type, attribute.spec.constraint, input_names, kinds):
                diagnostics.error(attribute.location, f"attribute {name!r}: {problem}")
    schema = OpSchema(
        name=op.name,
        domain=domain.node_domain,
        since_version=version.since,
        inputs=inputs,
        outputs=outputs,
        attributes=MappingProxyType(attributes),
        type_constraints=tuple(constraints),
        min_input=_arity(inputs)[0],
        max_input=_arity(inputs)[1],
        min_output=_arity(outputs)[0],
        max_output=_arity(outputs)[1],
        doc=op.doc,
        summary=op.summary,
        deprecated=state.deprecated,
        inference=None,
        support_level=SupportType[state.support_level.upper()],
        node_determinism=_DETERMINISM[state.determinism],
        functions=_functions(state.function, version, domain, attributes, diagnostics),
        context_dependent_function_opset_versions=state.function.context_dependent if state.function else (),
        file=version.location.path,
        line=version.location.line,
        convert=frozen(version.convert),
    )
    if state.inference is not None:
        rule = _rule(state.inference, schema, diagnostics, rules)
        schema = schema._replace(inference=rule)
    if state.cost is not None:
        schema = schema._replace(cost=cost_block(state.cost, schema, diagnostics))
    return schema


_DETERMINISM = {"deterministic": NodeDeterminism.Deterministic,
                "nondeterministic": NodeDeterminism.NonDeterministic, "unknown": NodeDeterminism.Unknown}


def _functions(declared: FunctionDecl | None, version: VersionDecl, domain: DomainDecl,
               attributes: dict[str, Attribute], diagnostics: Diagnostics) -> tuple[FunctionBody, ...]:
    """The version's function bodies, each checked: it parses, its opset fits, its references exist."""
    if declared is None:
        return ()
    from opspec.runtime.function_text import FunctionTextError

    bodies = []
    for opset, text, location in declared.bodies:
        if not domain.opset_min <= opset <= domain.opset_max:
            diagnostics.error(location, f"a body for opset {opset} must lie in the domain's opsets "
                                        f"{domain.opset_min}..{domain.opset_max}")
        try:
            referenced = _body_references(text)
        except FunctionTextError as error:
            diagnostics.error(location, f"function body for opset {opset}: {error}")
            continue
        for name in referenced:
            if name not in attributes:
                diagnostics.error(location, f"function body for opset {opset} refers to @{name}, which is not an "
                                            f"attribute of version {version.since}")
        bodies.append(FunctionBody(opset, text))
    return tuple(bodies)


@lru_cache(maxsize=1024)
def _body_references(text: str) -> tuple[str, ...]:
    """The attributes a function body refers to, in first-use order (a body stays the same across the
    versions that inherit it: parsed once)."""
    from opspec.runtime.function_text import parse_nodes, references

    return tuple(references(parse_nodes(text)))


def _doc(op: OpDecl, name: str, own: str | None) -> str:
    return own if own is not None else op.docs.get(name, "")


def _params(op: OpDecl, declared: tuple[ParamDecl, ...], allowed: dict[str, frozenset[str]], role: str,
            version: VersionDecl, exempt: set[str], diagnostics: Diagnostics) -> tuple[FormalParameter, ...]:
    result = []
    seen_optional = None
    for index, param in enumerate(declared):
        spec = param.spec
        type_str = spec.type_str
        if is_type_string(type_str):
            try:
                type_str = normalize_type_string(type_str)
            except TypeStringError as error:
                diagnostics.error(param.type_location, str(error))
            types = frozenset({formal_type_string(type_str)})
        elif type_str in allowed:
            types = allowed[type_str]
        else:
            known = ", ".join(allowed) or "none are declared"
            diagnostics.error(
                param.type_location,
                f"{role} {param.name!r} uses type parameter {type_str!r}, which is not declared in "
                f"'types' (declared: {known})",
            )
            types = frozenset()
        if spec.option is FormalParameterOption.Variadic and index != len(declared) - 1:
            diagnostics.error(param.location, f"variadic {role} {param.name!r} must be the last {role}")
        if spec.option is FormalParameterOption.Optional and seen_optional is None:
            seen_optional = param.name
        if spec.option is FormalParameterOption.Single and seen_optional is not None:
            if "required-after-optional" in version.allow:
                exempt.add("required-after-optional")
            else:
                diagnostics.error(
                    param.location,
                    f"required {role} {param.name!r} cannot follow optional {role} {seen_optional!r} "
                    "(unless the version says `allow: [required-after-optional]`)",
                )
        result.append(
            FormalParameter(
                name=param.name,
                type_str=type_str,
                types=types,
                option=spec.option,
                is_homogeneous=spec.is_homogeneous,
                min_arity=spec.min_arity,
                differentiation_category=spec.differentiation,
                description=_doc(op, param.name, param.doc),
            )
        )
    return tuple(result)


def _arity(params: tuple[FormalParameter, ...]) -> tuple[int, int]:
    """Minimum and maximum count of actual values, as onnx computes them."""
    low = high = 0
    for param in params:
        if param.option is FormalParameterOption.Single:
            high += 1
            low = high
        elif param.option is FormalParameterOption.Optional:
            high += 1
        else:
            low, high = high + param.min_arity, UNBOUNDED
    return low, high


_SCALAR_CHECKS = {
    AttrType.FLOAT: lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    AttrType.INT: lambda v: isinstance(v, int) and not isinstance(v, bool),
    AttrType.STRING: lambda v: isinstance(v, str),
}
_LIST_OF = {AttrType.FLOATS: AttrType.FLOAT, AttrType.INTS: AttrType.INT, AttrType.STRINGS: AttrType.STRING}


def _attribute(op: OpDecl, declared: AttrDecl, diagnostics: Diagnostics) -> Attribute:
    spec = declared.spec
    default = spec.default
    if default is not None:
        default = _check_default(declared, diagnostics)
    if spec.constraint is not None and default is not None:
        for problem in spec.constraint.violations(default):
            diagnostics.error(declared.location, f"attribute {declared.name!r}: default {problem}")
    return Attribute(
        name=declared.name,
        type=spec.type,
        description=_doc(op, declared.name, declared.doc),
        required=spec.required,
        default=default,
        constraint=spec.constraint,
    )


def _check_default(declared: AttrDecl, diagnostics: Diagnostics) -> Any:
    spec, value = declared.spec, declared.spec.default
    kind = spec.type.spelling
    if spec.type in _SCALAR_CHECKS:
        if not _SCALAR_CHECKS[spec.type](value):
            diagnostics.error(declared.location, f"attribute {declared.name!r}: default {value!r} is not {kind}")
            return None
        return float32(float(value)) if spec.type is AttrType.FLOAT else value
    if spec.type in _LIST_OF:
        item_type = _LIST_OF[spec.type]
        if not isinstance(value, list) or not all(_SCALAR_CHECKS[item_type](item) for item in value):
            diagnostics.error(
                declared.location,
                f"attribute {declared.name!r}: default {value!r} is not a list of {item_type.spelling}",
            )
            return None
        return tuple(float32(float(v)) for v in value) if item_type is AttrType.FLOAT else tuple(value)
    diagnostics.error(declared.location, f"attribute {declared.name!r}: {kind} attributes cannot have a default")
    return None


def _check_operands(found: Any, schema: OpSchema, inputs: set[str], diagnostics: Diagnostics) -> None:
    """Each input or output name the rule uses as a literal must be one of this version's."""
    outputs = {p.name for p in schema.outputs}
    for operand in found.operands:
        if operand.name not in (outputs if operand.output else inputs):
            kind = "output" if operand.output else "input"
            diagnostics.error(operand.location, f"rule {found.spec.name!r} names {kind} {operand.name!r}, which "
                              f"{schema.name} {schema.since_version} does not have")


def _rule(declared: RuleDecl, schema: OpSchema, diagnostics: Diagnostics,
          rules: Mapping[str, Any]) -> RuleRef | None:
    """The rule reference, checked against the rule's declaration (a ``DeclaredRule``)."""
    found = rules.get(declared.name)
    if found is None:
        close = difflib.get_close_matches(declared.name, list(rules), n=3)
        hint = (f"did you mean {' or '.join(repr(name) for name in close)}?" if close
                else "the rules reference, docs/rules.md, lists every rule")
        diagnostics.error(declared.location, f"unknown inference rule {declared.name!r} ({hint})")
        return None
    spec = found.spec
    inputs = {p.name for p in schema.inputs}
    _check_operands(found, schema, inputs, diagnostics)
    attributes = set(schema.attributes)
    args = {}
    for name, value in declared.args.items():
        where = declared.arg_locations.get(name, declared.location)
        param = spec.param(name)
        if param is None:
            expected = ", ".join(p.name for p in spec.params) or "no arguments"
            diagnostics.error(where, f"rule {spec.name!r} has no argument {name!r} (it takes: {expected})")
            continue
        if param.kind in PLAIN_KINDS and not isinstance(value, PLAIN_KINDS[param.kind]):
            diagnostics.error(where, f"rule {spec.name!r}: argument {name!r} must be a {param.kind}")
            continue
        if param.choices is not None and value not in param.choices:
            diagnostics.error(
                where, f"rule {spec.name!r}: argument {name!r} is {value!r}, expected one of: "
                f"{', '.join(map(str, param.choices))}",
            )
            continue
        args[name] = value
    for param in spec.params:
        if param.kind not in (NAMES_INPUT, NAMES_ATTRIBUTE, NAMES_INPUT_OR_ATTRIBUTE):
            continue
        target = args.get(param.name, param.default)
        if target is None:
            continue
        found = (param.kind != NAMES_ATTRIBUTE and target in inputs) or (
            param.kind != NAMES_INPUT and target in attributes
        )
        if param.name in args and not found:
            what = {"input": "an input", "attribute": "an attribute"}.get(param.kind, "an input or attribute")
            where = declared.arg_locations.get(param.name, declared.location)
            diagnostics.error(
                where, f"rule {spec.name!r}: argument {param.name!r} names {target!r}, which is not {what} of "
                f"{schema.name} version {schema.since_version}",
            )
        elif param.required and not found:
            what = {"input": "an input", "attribute": "an attribute"}.get(param.kind, "an input or attribute")
            diagnostics.error(
                declared.location,
                f"rule {spec.name!r} needs {what} named {target!r}, which {schema.name} version "
                f"{schema.since_version} does not have",
            )
    return RuleRef(spec.name, MappingProxyType(args))


def _check_docs(op: OpDecl, schemas: list[OpSchema], diagnostics: Diagnostics) -> None:
    names: set[str] = set()
    for schema in schemas:
        names.update(p.name for p in schema.inputs + schema.outputs)
        names.update(schema.attributes)
        names.update(t.type_param_str for t in schema.type_constraints)
    for name, location in op.doc_locations.items():
        if name not in names:
            diagnostics.error(
                location,
                f"docs for {name!r}, which is not an input, output, attribute or type parameter of any version",
            )
