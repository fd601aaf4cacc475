"""What changed between two resolved versions of an operator, in readable sentences.

Computed from the schemas themselves, so the version history in the docs can never
disagree with the registry.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

from opspec.codegen.change_class import BREAKING, COMPATIBLE, NARROWING, step_class, widening
from opspec.codegen.memo import by_identity
from opspec.codegen.notation import shortest_float
from opspec.runtime.schema import (Attribute, AttrType, FormalParameter, FormalParameterOption, OpSchema, RuleRef,
                                   ValueConstraint)
from opspec.runtime.types import TypeStringError, is_type_string, normalize_type_string


#: Renders a list of type strings for a sentence.
TypeSetNamer = Callable[[tuple[str, ...] | list[str]], str]


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
    option = _member_name(_OPTION_NAMES, param.option)
    suffix = {"Single": "", "Optional": "?"}.get(option, "+" if param.min_arity else "*")
    words = _shown_type(param.type_str) + suffix
    if not param.is_homogeneous:
        words += " heterogeneous"
    category = _member_name(_CATEGORY_NAMES, param.differentiation_category)
    if category != "Unknown":
        words += " differentiable" if category == "Differentiable" else " non-differentiable"
    return words


#: The names of the option and differentiation members met (an enum's ``name`` is a slow property;
#: onnx's members, which a parameter may also hold, have the same names as ours).
_OPTION_NAMES: dict[Any, str] = {}
_CATEGORY_NAMES: dict[Any, str] = {}


def _member_name(names: dict[Any, str], member: Any) -> str:
    found = names.get(member)
    if found is None:
        found = names[member] = member.name
    return found


#: How the notation spells each attribute type.
SPELLINGS: dict[AttrType, str] = {kind: kind.spelling for kind in AttrType}


@lru_cache(maxsize=4096)
def _shown_type(type_str: str) -> str:
    """A parameter's type as the notation writes it: a type string normalised, a type parameter as is."""
    if is_type_string(type_str):
        try:
            return normalize_type_string(type_str)
        except TypeStringError:  # reported by validation; the text is shown as written
            pass
    return type_str


@by_identity(4096)
def constraint_text(constraint: ValueConstraint) -> str:
    """``constraint`` in the notation (``>= 0 len == rank(X)``), worked out once per constraint
    (a page shows an attribute's in its signature, its table and its history)."""
    return constraint.describe()


def attribute_spec(attribute: Attribute) -> str:
    """An attribute in the compact notation (``int >= 0 = 1``)."""
    words = [SPELLINGS[attribute.type]]
    if attribute.constraint is not None:
        words.append(constraint_text(attribute.constraint))
    if attribute.required:
        words.append("required")
    elif attribute.default is not None:
        words.append(f"= {format_value(attribute.default)}")
    return " ".join(words)


def signature(schema: OpSchema) -> str:
    """A readable one-screen signature: call line, then attributes."""
    inputs = ", ".join(f"{p.name}: {param_spec(p)}" for p in schema.inputs)
    outputs = ", ".join(f"{p.name}: {param_spec(p)}" for p in schema.outputs)
    lines = [f"{schema.name}({inputs}) -> ({outputs})"]
    lines += [f"    {a.name}: {attribute_spec(a)}" for a in schema.attributes.values()]
    return "\n".join(lines)


def rule_text(rule: RuleRef | None) -> str:
    """A rule reference as the YAML writes it: `reduce` or `{rule: slice, negative_axes: false}`."""
    if rule is None:
        return "no rule"
    if not rule.args:
        return f"`{rule.name}`"
    args = ", ".join(f"{key}: {str(value).lower() if isinstance(value, bool) else value}"
                     for key, value in rule.args.items())
    return f"`{{rule: {rule.name}, {args}}}`"


@dataclass(frozen=True)
class Change:
    """One difference between two versions, as a sentence, with its class (None: not
    observable by models); see :mod:`opspec.codegen.change_class`."""

    text: str
    change_class: str | None


def _fewest(param: FormalParameter) -> int:
    """The fewest actual values a formal parameter binds (0 when it may be left out)."""
    return 0 if param.option == FormalParameterOption.Optional else param.min_arity


def _param_class(old: FormalParameter, new: FormalParameter) -> str | None:
    """The class of a change to a formal parameter kept at its place (None when only its
    differentiability changed, which models cannot observe)."""
    classes = []
    if old.option != new.option or old.min_arity != new.min_arity:
        classes.append(BREAKING if _fewest(new) > _fewest(old) else COMPATIBLE)
    if old.is_homogeneous != new.is_homogeneous:
        classes.append(COMPATIBLE if not new.is_homogeneous else NARROWING)
    if old.types != new.types:
        classes.append(widening(old.types, new.types))
    return step_class(classes) if classes else None


def _params(role: str, before: tuple[FormalParameter, ...], after: tuple[FormalParameter, ...],
            moved: set[str]) -> list[Change]:
    """Changes to inputs or outputs; ``moved`` are names that were attributes before."""
    changes = []
    old = {p.name: p for p in before}
    new = {p.name: p for p in after}
    kept = [n for n in old if n in new]
    for position, (name, param) in enumerate(new.items()):
        if name not in old:
            at_end = position >= len(kept)
            cls = COMPATIBLE if _fewest(param) == 0 and at_end and name not in moved else BREAKING
            changes.append(Change(f"New {role} `{name}`: `{param_spec(param)}`.", cls))
        elif old[name] != param and param_spec(old[name]) != param_spec(param):  # most carry over unchanged
            text = f"{role.capitalize()} `{name}`: `{param_spec(old[name])}` → `{param_spec(param)}`."
            changes.append(Change(text, _param_class(old[name], param)))
    for name in old:
        if name not in new:
            changes.append(Change(f"Removed {role} `{name}`.", BREAKING))
    if kept != [n for n in new if n in old]:
        changes.append(Change(f"{role.capitalize()}s were reordered: {', '.join(f'`{n}`' for n in new)}.", BREAKING))
    return changes


def _attribute_class(old: Attribute, new: Attribute) -> str:
    if old.type != new.type or (not new.required and old.default != new.default):
        return BREAKING
    if new.required and not old.required:
        return BREAKING
    if old.constraint == new.constraint:
        return COMPATIBLE
    if new.constraint is None:
        return COMPATIBLE
    if old.constraint is not None and old.constraint._replace(allowed=None) == new.constraint._replace(allowed=None):
        return widening(old.constraint.allowed or (), new.constraint.allowed or ())
    return NARROWING


def _attributes(before: OpSchema, after: OpSchema) -> list[Change]:
    changes = []
    inputs = {p.name for p in after.inputs}
    for name, attribute in after.attributes.items():
        old = before.attributes.get(name)
        if old is None:
            cls = BREAKING if attribute.required else COMPATIBLE
            changes.append(Change(f"New attribute `{name}`: `{attribute_spec(attribute)}`.", cls))
        elif old != attribute and attribute_spec(old) != attribute_spec(attribute):  # most carry over unchanged
            text = f"Attribute `{name}`: `{attribute_spec(old)}` → `{attribute_spec(attribute)}`."
            changes.append(Change(text, _attribute_class(old, attribute)))
    for name in before.attributes:
        if name not in after.attributes:
            if name in inputs:
                changes.append(Change(f"Attribute `{name}` becomes an input.", BREAKING))
            else:
                changes.append(Change(f"Removed attribute `{name}`.", NARROWING))
    return changes


def _types(before: OpSchema, after: OpSchema, name_set: TypeSetNamer) -> list[Change]:
    changes = []
    old = {constraint.type_param_str: constraint for constraint in before.type_constraints}
    new = {constraint.type_param_str: constraint for constraint in after.type_constraints}
    for name, constraint in new.items():
        if name not in old:
            changes.append(Change(f"New type parameter `{name}`: {name_set(constraint.allowed_type_strs)}.", None))
            continue
        if old[name] == constraint:  # most carry over unchanged
            continue
        was, now = old[name].allowed_type_strs, constraint.allowed_type_strs
        kept_before, kept_after = set(was), set(now)
        added = [t for t in now if t not in kept_before]
        removed = [t for t in was if t not in kept_after]
        if added:
            changes.append(Change(f"`{name}` also accepts {name_set(added)}.", COMPATIBLE))
        if removed:
            changes.append(Change(f"`{name}` no longer accepts {name_set(removed)}.", NARROWING))
    changes.extend(Change(f"Removed type parameter `{name}`.", None) for name in old if name not in new)
    return changes


def plain_type_list(types: tuple[str, ...] | list[str]) -> str:
    """Type strings as code spans, comma separated."""
    return ", ".join(f"`{t}`" for t in types)


def classified_changes(before: OpSchema | None, after: OpSchema,
                       name_set: TypeSetNamer = plain_type_list) -> list[Change]:
    """How ``after`` differs from ``before``, each change with its class (a first version: none).

    ``name_set`` renders a list of types (it may name a type set instead of listing them).
    """
    if before is None:
        return []
    moved = {name for name in before.attributes if name not in after.attributes}
    changes = _params("input", before.inputs, after.inputs, moved)
    changes += _params("output", before.outputs, after.outputs, set())
    changes += _attributes(before, after)
    changes += _types(before, after, name_set)
    if before.inference != after.inference:
        changes.append(Change(f"Inference: {rule_text(before.inference)} → {rule_text(after.inference)}.", None))
    if before.deprecated != after.deprecated:
        changes.append(Change("The operator is deprecated.", BREAKING) if after.deprecated
                       else Change("The operator is no longer deprecated.", COMPATIBLE))
    if before.support_level != after.support_level:
        changes.append(Change(f"Support level: {before.support_level.name.lower()} → "
                              f"{after.support_level.name.lower()}.", None))
    if before.node_determinism != after.node_determinism:
        changes.append(Change(f"Determinism: {before.node_determinism.name} → {after.node_determinism.name}.", None))
    changes += _function_changes(before, after)
    return changes


def _function_changes(before: OpSchema, after: OpSchema) -> list[Change]:
    changes = []
    if before.functions != after.functions:
        opsets = ", ".join(map(str, after.function_opset_versions))
        changes.append(Change(f"Function body for opset {opsets}." if opsets else "No function body any more.", None))
    if before.context_dependent_function_opset_versions != after.context_dependent_function_opset_versions:
        opsets = ", ".join(map(str, after.context_dependent_function_opset_versions))
        changes.append(Change(f"Body built per node for opset {opsets}." if opsets
                              else "No body built per node any more.", None))
    return changes


def change_class(before: OpSchema | None, after: OpSchema) -> str:
    """The class of the step from ``before`` to ``after`` ("" for a first version)."""
    if before is None:
        return ""
    return step_class([change.change_class for change in classified_changes(before, after)])
