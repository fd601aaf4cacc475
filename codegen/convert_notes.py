"""How a model converts across one version step of an operator, in sentences for the docs.

Computed from the two schemas and the newer version's ``convert`` block by the rules
``opspec convert`` applies (:mod:`opspec.runtime.convert.step`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from opspec.codegen.memo import by_identity
from opspec.runtime.convert.step import moved_attributes
from opspec.runtime.schema import FormalParameterOption, OpSchema

if TYPE_CHECKING:
    from opspec.codegen.compiler import CompiledDomain
    from opspec.codegen.docs_pages import GlanceRow


def _adapter(name: str) -> str:
    from opspec.runtime.convert.adapters import ADAPTERS

    summary = " ".join((ADAPTERS[name].__doc__ or "").strip().split("\n\n")[0].split())
    return f"rewritten by the `{name}` adapter ({summary.rstrip('.')})"


def _code(names: list[str] | set[str]) -> str:
    return ", ".join(f"`{name}`" for name in sorted(names))


def _types_added(older: OpSchema, newer: OpSchema) -> bool:
    before = {c.type_param_str: set(c.allowed_type_strs) for c in older.type_constraints}
    return any(not set(c.allowed_type_strs) <= before.get(c.type_param_str, set()) for c in newer.type_constraints)


def _types_removed(older: OpSchema, newer: OpSchema) -> bool:
    return _types_added(newer, older)


#: Both the op page and the opset page of a step say how it converts: each is worked out once
#: (an op's two pages are rendered far apart in a large tree, hence the size).
_STEPS_KEPT = 8192


@by_identity(_STEPS_KEPT)
def upward(older: OpSchema, newer: OpSchema) -> str:
    """How a node of ``older`` becomes one of ``newer``."""
    how = newer.convert.get("by")
    if newer.deprecated:
        successor = newer.convert.get("replaced_by")
        return f"becomes {successor}" if successor else "refused: the operator is deprecated"
    if how not in (None, "signature"):
        return _adapter(how)
    if how is None and newer.change_class == "breaking":
        return "refused: the meaning changes in a way no conversion states"
    parts = []
    moved = moved_attributes(older, newer)
    if moved:
        parts.append(f"attributes become constant inputs ({_code(set(moved))})")
    removed = set(older.attributes) - set(newer.attributes) - {source for source, _ in moved.values()}
    if removed:
        parts.append(f"when {_code(removed)} is absent or at its default")
    if _types_removed(older, newer):
        parts.append(f"when the types are ones version {newer.since_version} accepts")
    return "; ".join(parts) if parts else "as is"


@by_identity(_STEPS_KEPT)
def downward(older: OpSchema, newer: OpSchema) -> str:
    """How a node of ``newer`` becomes one of ``older``."""
    how = newer.convert.get("by")
    banned = newer.convert.get("new_values", {})
    if how not in (None, "signature"):
        return _adapter(how)
    if how is None and newer.change_class in ("breaking", "semantic") and not banned:
        return f"refused: version {newer.since_version} means something version {older.since_version} does not"
    parts = []
    for name, values in banned.items():
        if isinstance(values, str):
            parts.append(f"negative `{name}` counted from the front where the rank is known")
        else:
            parts.append(f"refused when `{name}` is {_code(set(map(str, values)))}")
    moved = moved_attributes(older, newer)
    if moved:
        parts.append(f"constant inputs become attributes ({_code(set(moved))}; refused when computed at run time)")
    added = set(newer.attributes) - set(older.attributes)
    if added:
        parts.append(f"when {_code(added)} is absent or at its default")
    older_inputs = {formal.name for formal in older.inputs}
    new_inputs = {formal.name for formal in newer.inputs if formal.name not in older_inputs and formal.name not in moved
                  and formal.option == FormalParameterOption.Optional}
    if new_inputs:
        parts.append(f"when {_code(new_inputs)} is absent")
    if _types_added(older, newer):
        parts.append(f"when the types are ones version {older.since_version} accepts")
    return "; ".join(parts) if parts else "as is"


def below_first(schema: OpSchema) -> str:
    """What happens to a node of the first version below the opset it appears in."""
    from opspec.runtime.convert.expand import BUILDERS
    from opspec.runtime.convert.widen import WIDENED

    if schema.functions or (schema.domain, schema.name) in BUILDERS:
        widened = (" (float16 and bfloat16 inputs computed at float32 between Casts)"
                   if (schema.domain, schema.name) in WIDENED else "")
        return f"expanded into its function body{widened}, when every operator of the body exists there"
    return "refused: the operator does not exist there"


def at_opset(domain: CompiledDomain, row: GlanceRow) -> str:
    """How an operator that changed at an opset converts to the opset before, for the opset pages."""
    if not row.schema.file.startswith("opdefs/ai.onnx/"):
        return ""
    if row.previous is None:
        return f"Below it, {below_first(row.schema)}."
    op = domain.ops_by_name[row.op]
    older = next(schema for schema in op.schemas if schema.since_version == row.previous)
    return f"Down to opset {row.schema.since_version - 1}, {downward(older, row.schema)}; up from it, {upward(older, row.schema)}."


__all__ = ["at_opset", "below_first", "downward", "upward"]
