"""Field-by-field comparison of an opspec schema with an ``onnx.defs.OpSchema`` (docs excluded).

Run as a script, it reports how much of onnx's op sets opdefs holds, per domain, and
which schemas are still missing (``python tests/onnx_parity.py``).
"""
from __future__ import annotations

import sys
from collections import Counter
from typing import Any

from onnx import FunctionProto, helper


def _default(attribute: Any) -> Any:
    """onnx's default as a plain value (None when unset), lists as tuples, bytes decoded."""
    return plain_default(attribute.default_value)


def plain_default(proto: Any) -> Any:
    """An ``AttributeProto`` default as a plain value (None when unset), lists as tuples, bytes decoded."""
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
    compare("support_level", ours.support_level.name, theirs.support_level.name)
    if hasattr(theirs, "node_determinism"):  # onnx records it from 1.20 on
        compare("node_determinism", ours.node_determinism.name, theirs.node_determinism.name)
    for field in ("has_function", "has_context_dependent_function"):
        compare(field, getattr(ours, field), getattr(theirs, field))
    compare("function_opset_versions", list(ours.function_opset_versions), list(theirs.function_opset_versions))
    compare("context_dependent_function_opset_versions", list(ours.context_dependent_function_opset_versions),
            list(theirs.context_dependent_function_opset_versions))
    if theirs.has_function:
        compare("function_body", _function(ours.function_body), _function(theirs.function_body))
    for opset in sorted({*theirs.function_opset_versions, *ours.function_opset_versions, 1, ours.since_version}):
        theirs_body = theirs.get_function_with_opset_version(opset)
        mine = ours.get_function_with_opset_version(opset)
        compare(f"function for opset {opset}", _function(mine),
                _function(FunctionProto.FromString(theirs_body) if theirs_body else None))
    return problems


def _function(proto: Any) -> Any:
    """A body's meaning: header names, opsets, and per node its op, domain, values and attributes."""
    if proto is None:
        return None
    return (proto.name, proto.domain, list(proto.input), list(proto.output),
            [(o.domain, o.version) for o in proto.opset_import], [_node(node) for node in proto.node])


def _node(node: Any) -> tuple[Any, ...]:
    return (node.op_type, node.domain, list(node.input), list(node.output),
            sorted(_attribute(a) for a in node.attribute))


def _attribute(attribute: Any) -> tuple[Any, ...]:
    value: Any
    if attribute.ref_attr_name:
        value = "@" + attribute.ref_attr_name
    elif attribute.HasField("g"):
        graph = attribute.g
        value = (graph.name, [i.SerializeToString() for i in graph.input], [o.name for o in graph.output],
                 [_node(n) for n in graph.node])
    elif attribute.HasField("t"):
        tensor = type(attribute.t)()
        tensor.CopyFrom(attribute.t)
        if not tensor.name:
            tensor.ClearField("name")
        value = tensor.SerializeToString()
    else:
        value = repr(helper.get_attribute_value(attribute))
    return (attribute.name, int(attribute.type), value)


def onnx_schemas() -> dict[tuple[str, str, int], Any]:
    """{(domain, name, since_version): onnx OpSchema} for every schema onnx knows."""
    import onnx.defs

    return {(s.domain, s.name, s.since_version): s for s in onnx.defs.get_all_schemas_with_history()}


def report() -> str:
    """Per domain: schemas in opdefs, matching onnx, onnx's total; then every missing schema."""
    import opspec

    theirs = onnx_schemas()
    ours = {(s.domain, s.name, s.since_version): s for s in opspec.get_all_schemas_with_history()}
    totals = Counter(domain for domain, _, _ in theirs)
    present: Counter[str] = Counter()
    matching: Counter[str] = Counter()
    for key, schema in ours.items():
        if key in theirs:
            present[key[0]] += 1
            matching[key[0]] += not differences(schema, theirs[key])
    lines = [f"{'domain':<28}{'present':>8}{'matching':>10}{'onnx':>6}"]
    for domain in sorted(totals):
        lines.append(f"{domain or 'ai.onnx':<28}{present[domain]:>8}{matching[domain]:>10}{totals[domain]:>6}")
    missing = sorted(key for key in theirs if key not in ours)
    lines.append(f"\nnot yet in opdefs ({len(missing)}):")
    by_op: dict[tuple[str, str], list[int]] = {}
    for domain, name, version in missing:
        by_op.setdefault((domain or "ai.onnx", name), []).append(version)
    lines += [f"  {domain} {name} {', '.join(map(str, versions))}" for (domain, name), versions in by_op.items()]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(print(report()))
