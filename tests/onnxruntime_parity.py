"""Field-by-field comparison of opspec's onnxruntime op set with onnxruntime's own schema export.

onnxruntime exports every schema it registers (``get_all_operator_schema``): names,
versions, formal parameters with their type strings, options and homogeneity, arities,
attribute types and whether they are required, type constraints, deprecation and support
level, and each attribute's default as a serialized ``AttributeProto``. It exports no
differentiability; that comes from its schema sources. Run as a script for per-domain counts (``python tests/onnxruntime_parity.py``).
"""
from __future__ import annotations

import sys
from collections import Counter
from typing import Any

#: Key of a schema: (domain as models write it, name, since-version).
Key = tuple[str, str, int]


def _default(attribute: Any) -> Any:
    """onnxruntime's exported default (a serialized ``AttributeProto``) as a plain value."""
    from onnx import AttributeProto
    from onnx_parity import plain_default

    return plain_default(AttributeProto.FromString(attribute._default_value)) if attribute._default_value else None


def _params(params: Any, ours: bool) -> list[tuple[Any, ...]]:
    if ours:
        return [(p.name, p.type_str, frozenset(p.types), p.option.name, p.is_homogeneous) for p in params]
    return [(p.name, p.typeStr, frozenset(p.types), p.option.name, p.isHomogeneous) for p in params]


def differences(ours: Any, theirs: Any) -> list[str]:
    """Every exported field where the two schemas disagree, as readable lines."""
    problems = []

    def compare(field: str, mine: Any, reference: Any) -> None:
        if mine != reference:
            problems.append(f"{theirs.domain or 'ai.onnx'}::{theirs.name}-{theirs.since_version} {field}: "
                            f"opspec {mine!r} != onnxruntime {reference!r}")

    for field in ("name", "since_version", "deprecated", "min_input", "max_input", "min_output", "max_output"):
        compare(field, getattr(ours, field), getattr(theirs, field))
    compare("domain", ours.domain if ours.domain != "ai.onnx" else "", theirs.domain)
    compare("inputs", _params(ours.inputs, True), _params(theirs.inputs, False))
    compare("outputs", _params(ours.outputs, True), _params(theirs.outputs, False))
    compare("attributes", {n: (a.type.name, a.required, a.default) for n, a in ours.attributes.items()},
            {n: (a.type.name, a.required, _default(a)) for n, a in theirs.attributes.items()})
    compare("type_constraints", {t.type_param_str: frozenset(t.allowed_type_strs) for t in ours.type_constraints},
            {t.type_param_str: frozenset(t.allowed_type_strs) for t in theirs.type_constraints})
    compare("type_constraint order", [t.type_param_str for t in ours.type_constraints],
            [t.type_param_str for t in theirs.type_constraints])
    compare("support_level", ours.support_level.name, theirs.support_level.name)
    return problems


def onnxruntime_extras() -> dict[Key, Any]:
    """Every schema onnxruntime registers that onnx's standard set does not have."""
    import onnx.defs
    from onnxruntime.capi.onnxruntime_pybind11_state import get_all_operator_schema

    standard = {(s.domain, s.name, s.since_version) for s in onnx.defs.get_all_schemas_with_history()}
    return {(s.domain, s.name, s.since_version): s for s in get_all_operator_schema()
            if (s.domain, s.name, s.since_version) not in standard}


def opspec_extras() -> dict[Key, Any]:
    """Every schema of ``opspec.onnxruntime`` that ``opspec`` (the standard set) does not have."""
    import opspec
    import opspec.onnxruntime

    def key(schema: Any) -> Key:
        return ("" if schema.domain == "ai.onnx" else schema.domain, schema.name, schema.since_version)

    standard = {key(s) for s in opspec.get_all_schemas_with_history()}
    return {key(s): s for s in opspec.onnxruntime.get_all_schemas_with_history() if key(s) not in standard}


def report() -> str:
    """Per domain: schemas opspec has, how many match onnxruntime's export, onnxruntime's total."""
    theirs, ours = onnxruntime_extras(), opspec_extras()
    totals = Counter(domain for domain, _, _ in theirs)
    present: Counter[str] = Counter()
    matching: Counter[str] = Counter()
    for key, schema in ours.items():
        if key in theirs:
            present[key[0]] += 1
            matching[key[0]] += not differences(schema, theirs[key])
    lines = [f"{'domain':<28}{'present':>8}{'matching':>10}{'onnxruntime':>13}"]
    for domain in sorted(totals):
        lines.append(f"{domain or 'ai.onnx':<28}{present[domain]:>8}{matching[domain]:>10}{totals[domain]:>13}")
    lines.append(f"{'all':<28}{sum(present.values()):>8}{sum(matching.values()):>10}{sum(totals.values()):>13}")
    missing = sorted(set(theirs) - set(ours))
    unknown = sorted(set(ours) - set(theirs))
    if missing:
        lines.append(f"\nnot in opdefs/onnxruntime ({len(missing)}): " + ", ".join(f"{d}::{n}-{v}" for d, n, v in missing))
    if unknown:
        lines.append(f"\nnot registered by onnxruntime ({len(unknown)}): " + ", ".join(f"{d}::{n}-{v}" for d, n, v in unknown))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(print(report()))
