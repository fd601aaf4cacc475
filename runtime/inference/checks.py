"""Validating one node against its schema: arity, input types, attributes (``check_type``)."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from opspec.runtime.constraints import Violation, attribute_violations
from opspec.runtime.contract.positions import bind_formals
from opspec.runtime.inference.read_attributes import attribute_kind
from opspec.runtime.contract.values import type_string
from opspec.runtime.schema import UNBOUNDED, AttrType, FormalParameterOption, OpSchema
from opspec.runtime.types import is_type_string

_VARIADIC = FormalParameterOption.Variadic
_SINGLE = FormalParameterOption.Single


def formal_positions(params: Sequence[Any], count: int) -> Sequence[int | None]:
    """For each of ``count`` actual values, the index of the formal parameter it binds to
    (None beyond every formal)."""
    key = (id(params), count)
    found = _POSITIONS.get(key)
    if found is None or found[0] is not params:
        positions: list[int | None] = [None] * count
        for index, bound in enumerate(bind_formals(params, count)):
            for position in bound:
                positions[position] = index
        found = _POSITIONS[key] = (params, tuple(positions))  # holding params keeps its id from being reused
    return found[1]


#: formal_positions by (the formal parameters' identity, count): schemas are few, nodes many.
_POSITIONS: dict[tuple[int, int], tuple[Any, tuple[int | None, ...]]] = {}


def _bound(count: int) -> str:
    return "unbounded" if count >= UNBOUNDED else str(count)


def _arity(kind: str, count: int, low: int, high: int) -> str | None:
    if low <= count <= high:
        return None
    if low == high:
        wanted = f"exactly {low}"
    elif high >= UNBOUNDED:
        wanted = f"at least {low}"
    else:
        wanted = f"{low} to {_bound(high)}"
    return f"takes {wanted} {kind}{'s' if high != 1 else ''}, got {count}"


def _kind_name(kind: int) -> str:
    try:
        return AttrType(kind).spelling
    except ValueError:
        return f"<attribute type {kind}>" if kind else "<no value>"


def check_node(schema: OpSchema, input_names: Sequence[str], output_count: int, inputs: Sequence[Any],
               attributes: Sequence[Any], values: Mapping[str, Any]) -> list[str | Violation]:
    """Every way the node breaks ``schema``, one message or broken attribute constraint
    each (empty when it conforms).

    ``inputs`` are the known input types (None when unknown or absent); ``attributes`` the
    node's ``AttributeProto`` messages and ``values`` their plain values by name. Models
    repeat the same node many times, so a node like one that conformed before is passed at
    once (a schema without a rule checks attribute values here, so its nodes are always checked).
    """
    key = None
    if schema.inference is not None:
        try:
            key = (id(schema), output_count, tuple(inputs), tuple([not name for name in input_names]),
                   tuple([(a.name, a.type or attribute_kind(a), a.ref_attr_name) for a in attributes]))
            if _CONFORMING.get(key) is schema:
                return []
        except TypeError:  # something unhashable in a type
            key = None
    problems = _problems(schema, input_names, output_count, inputs, attributes, values)
    if key is not None and not problems and len(_CONFORMING) < _CONFORMING_LIMIT:
        _CONFORMING[key] = schema  # holding the schema keeps its id from being reused
    return problems


#: Nodes found to conform, by schema identity, output count, input types, which inputs are
#: omitted, and attribute names and kinds.
_CONFORMING: dict[tuple[Any, ...], OpSchema] = {}
_CONFORMING_LIMIT = 16384


def _problems(schema: OpSchema, input_names: Sequence[str], output_count: int, inputs: Sequence[Any],
              attributes: Sequence[Any], values: Mapping[str, Any]) -> list[str | Violation]:
    problems: list[str | Violation] = []
    count = len(input_names)
    problem = _arity("input", count, schema.min_input, schema.max_input)
    if problem:
        problems.append(problem)
    problem = _arity("output", output_count, schema.min_output, schema.max_output)
    if problem:
        problems.append(problem)

    params = schema.inputs
    bindings: dict[str, tuple[str, str]] = {}  # type parameter -> (type string, input that bound it)
    for actual, formal in enumerate(formal_positions(params, count)):
        if formal is None:
            continue
        param = params[formal]
        name = input_names[actual]
        label = f"input {actual} ('{name}', formal '{param.name}')" if name else f"input {actual} ('{param.name}')"
        if not name:
            if param.option == _SINGLE:
                problems.append(f"required {label} is missing")
            elif param.option == _VARIADIC and param.is_homogeneous and not schema.domain:
                problems.append(f"required {label} is missing: a value of a variadic input cannot be omitted")
            continue
        value = inputs[actual]
        if value is None:
            continue
        text = type_string(value)
        if "?" in text:
            continue
        if text not in param.types:
            allowed = ", ".join(sorted(param.types))
            problems.append(f"{label} has type {text}, but {param.type_str} allows only {allowed}")
            continue
        if is_type_string(param.type_str) or (param.option == _VARIADIC and not param.is_homogeneous):
            continue
        previous = bindings.get(param.type_str)
        if previous is None:
            bindings[param.type_str] = (text, name)
        elif previous[0] != text:
            problems.append(f"{label} has type {text}, but type parameter {param.type_str} is already bound to "
                            f"{previous[0]} by '{previous[1]}'")

    declared = schema.attributes
    for attribute in attributes:
        name = attribute.name
        spec = declared.get(name)
        if spec is None:
            problems.append(f"unknown attribute '{name}'")
            continue
        if attribute.ref_attr_name:
            continue
        kind = attribute_kind(attribute)
        if kind != spec.type:
            problems.append(f"attribute '{name}' must be {spec.type.spelling}, got {_kind_name(kind)}")
            continue
    for name, spec in declared.items():
        if spec.required and name not in values:
            problems.append(f"required attribute '{name}' is missing")
    if schema.inference is None:  # otherwise the rule checks them (runtime.rulebook)
        problems.extend(attribute_violations(schema, values, inputs))
    return problems


def check_outputs(schema: OpSchema, outputs: Sequence[Any]) -> list[str]:
    """Every output type the node's rule gave that its formal parameter does not allow: the
    node's attributes asked for it (an Optional whose 'type' names an optional, a Cast to a
    type its version lacks), since its inputs conform."""
    problems = []
    params = schema.outputs
    for actual, formal in enumerate(formal_positions(params, len(outputs))):
        value = outputs[actual]
        if formal is None or value is None:
            continue
        param = params[formal]
        text = type_string(value)
        if "?" not in text and text not in param.types:
            problems.append(f"output {actual} ('{param.name}') would have type {text}, but {param.type_str} "
                            f"allows only {', '.join(sorted(param.types))}")
    return problems


__all__ = ["check_node", "check_outputs", "formal_positions"]
