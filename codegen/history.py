"""What changed between two resolved versions of an operator, in readable sentences.

Computed from the schemas themselves, so the version history in the docs can never
disagree with the registry.
"""
from __future__ import annotations

import json

from opspec.codegen.notation import shortest_float
from opspec.runtime.schema import Attribute, FormalParameter, OpSchema, RuleRef
from opspec.runtime.types import is_type_string, normalize_type_string


def format_value(value: object, bare_words: bool = False) -> str:
    """A default value in the YAML notation (floats at float32 precision, strings escaped).

    With ``bare_words``, identifier-like strings stay unquoted (``NOTSET``).
    """
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    if isinstance(value, float):
        return shortest_float(value)
    if isinstance(value, str):
        return value if bare_words and value.isidentifier() else json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_value(item, bare_words) for item in value) + "]"
    return str(value)


def param_spec(param: FormalParameter) -> str:
    """A formal parameter in the compact notation (``T+ differentiable``).

    Reads only attributes that onnx's ``OpSchema.FormalParameter`` shares, so it renders
    those too (the importer relies on that).
    """
    option = param.option.name
    suffix = {"Single": "", "Optional": "?"}.get(option, "+" if param.min_arity else "*")
    type_str = normalize_type_string(param.type_str) if is_type_string(param.type_str) else param.type_str
    words = [type_str + suffix]
    if not param.is_homogeneous:
        words.append("heterogeneous")
    category = param.differentiation_category.name
    if category != "Unknown":
        words.append("differentiable" if category == "Differentiable" else "non-differentiable")
    return " ".join(words)


def attribute_spec(attribute: Attribute) -> str:
    """An attribute in the compact notation (``int >= 0 = 1``)."""
    words = [attribute.type.spelling]
    if attribute.constraint is not None:
        words.append(attribute.constraint.describe())
    if attribute.required:
        words.append("required")
    elif attribute.default_value is not None:
        words.append(f"= {format_value(attribute.default_value)}")
    return " ".join(words)


def rule_text(rule: RuleRef | None) -> str:
    """A rule reference as the YAML writes it: `reduce` or `{rule: slice, negative_axes: false}`."""
    if rule is None:
        return "no rule"
    if not rule.args:
        return f"`{rule.name}`"
    args = ", ".join(f"{key}: {str(value).lower() if isinstance(value, bool) else value}"
                     for key, value in rule.args.items())
    return f"`{{rule: {rule.name}, {args}}}`"


def _params(role: str, before: tuple[FormalParameter, ...], after: tuple[FormalParameter, ...]) -> list[str]:
    changes = []
    old = {p.name: p for p in before}
    new = {p.name: p for p in after}
    for name, param in new.items():
        if name not in old:
            changes.append(f"New {role} `{name}`: `{param_spec(param)}`.")
        elif param_spec(old[name]) != param_spec(param):
            changes.append(f"{role.capitalize()} `{name}`: `{param_spec(old[name])}` → `{param_spec(param)}`.")
    for name in old:
        if name not in new:
            changes.append(f"Removed {role} `{name}`.")
    if [n for n in old if n in new] != [n for n in new if n in old]:
        changes.append(f"{role.capitalize()}s were reordered: {', '.join(f'`{n}`' for n in new)}.")
    return changes


def _attributes(before: OpSchema, after: OpSchema) -> list[str]:
    changes = []
    for name, attribute in after.attributes.items():
        old = before.attributes.get(name)
        if old is None:
            changes.append(f"New attribute `{name}`: `{attribute_spec(attribute)}`.")
        elif attribute_spec(old) != attribute_spec(attribute):
            changes.append(f"Attribute `{name}`: `{attribute_spec(old)}` → `{attribute_spec(attribute)}`.")
    changes.extend(f"Removed attribute `{name}`." for name in before.attributes if name not in after.attributes)
    return changes


def _types(before: OpSchema, after: OpSchema) -> list[str]:
    changes = []
    old = before.type_constraint_map
    for name, constraint in after.type_constraint_map.items():
        if name not in old:
            changes.append(f"New type parameter `{name}`: {_type_list(constraint.allowed_type_strs)}.")
            continue
        added = [t for t in constraint.allowed_type_strs if t not in old[name].allowed_type_strs]
        removed = [t for t in old[name].allowed_type_strs if t not in constraint.allowed_type_strs]
        if added:
            changes.append(f"`{name}` also accepts {_type_list(added)}.")
        if removed:
            changes.append(f"`{name}` no longer accepts {_type_list(removed)}.")
    changes.extend(f"Removed type parameter `{name}`." for name in old if name not in after.type_constraint_map)
    return changes


def _type_list(types: tuple[str, ...] | list[str]) -> str:
    return ", ".join(f"`{t}`" for t in types)


def version_changes(before: OpSchema | None, after: OpSchema) -> list[str]:
    """Sentences describing how ``after`` differs from ``before`` (the first version: none)."""
    if before is None:
        return []
    changes = _params("input", before.inputs, after.inputs)
    changes += _params("output", before.outputs, after.outputs)
    changes += _attributes(before, after)
    changes += _types(before, after)
    if before.inference != after.inference:
        changes.append(f"Inference: {rule_text(before.inference)} → {rule_text(after.inference)}.")
    if before.deprecated != after.deprecated:
        changes.append("The operator is deprecated." if after.deprecated else "The operator is no longer deprecated.")
    if before.support_level != after.support_level:
        changes.append(f"Support level: {before.support_level.name.lower()} → {after.support_level.name.lower()}.")
    if before.node_determinism != after.node_determinism:
        changes.append(f"Determinism: {before.node_determinism.name} → {after.node_determinism.name}.")
    changes += _function_changes(before, after)
    return changes


def _function_changes(before: OpSchema, after: OpSchema) -> list[str]:
    changes = []
    if before.functions != after.functions:
        opsets = ", ".join(map(str, after.function_opset_versions))
        changes.append(f"Function body for opset {opsets}." if opsets else "No function body any more.")
    if before.context_dependent_function_opset_versions != after.context_dependent_function_opset_versions:
        opsets = ", ".join(map(str, after.context_dependent_function_opset_versions))
        changes.append(f"Body built per node for opset {opsets}." if opsets else "No body built per node any more.")
    return changes
