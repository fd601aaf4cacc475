"""Field-by-field comparison of an opspec schema with an ``onnx.defs.OpSchema`` (docs excluded)."""
from __future__ import annotations

from typing import Any

from onnx import helper


def _default(attribute: Any) -> Any:
    """onnx's default as a plain value (None when unset), lists as tuples, bytes decoded."""
    proto = attribute.default_value
    if proto is None or proto.type == 0:
        return None
    value = helper.get_attribute_value(proto)
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, list):
        return tuple(v.decode("utf-8") if isinstance(v, bytes) else v for v in value)
    return value


def _params(params: Any) -> list[tuple[Any, ...]]:
    return [
        (p.name, p.type_str, frozenset(p.types), p.option.name, p.is_homogeneous, p.min_arity,
         p.differentiation_category.name)
        for p in params
    ]


def differences(ours: Any, theirs: Any) -> list[str]:
    """Every field where the two schemas disagree, as readable lines."""
    problems = []

    def compare(field: str, mine: Any, reference: Any) -> None:
        if mine != reference:
            problems.append(f"{theirs.name}-{theirs.since_version} {field}: opspec {mine!r} != onnx {reference!r}")

    for field in ("name", "domain", "since_version", "deprecated", "min_input", "max_input", "min_output",
                  "max_output"):
        compare(field, getattr(ours, field), getattr(theirs, field))
    compare("inputs", _params(ours.inputs), _params(theirs.inputs))
    compare("outputs", _params(ours.outputs), _params(theirs.outputs))
    compare(
        "attributes",
        {n: (a.type.name, a.required, a.default) for n, a in ours.attributes.items()},
        {n: (a.type.name, a.required, _default(a)) for n, a in theirs.attributes.items()},
    )
    compare(
        "type_constraints",
        {t.type_param_str: frozenset(t.allowed_type_strs) for t in ours.type_constraints},
        {t.type_param_str: frozenset(t.allowed_type_strs) for t in theirs.type_constraints},
    )
    compare("type_constraint order", [t.type_param_str for t in ours.type_constraints],
            [t.type_param_str for t in theirs.type_constraints])
    return problems
