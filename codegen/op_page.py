"""The tables and lines of an operator's docs page, each built as one text (a template call
per table, not per row: an op may have very many parameters, attributes and versions)."""
from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

from opspec.codegen.docs_pages import md_cell, version_anchor
from opspec.codegen.history import format_value
from opspec.runtime.schema import Attribute, FormalParameter, FormalParameterOption, TypeConstraintParam

_DIFFERENTIABLE = {"Differentiable": "yes", "NonDifferentiable": "no"}


def kind(param: FormalParameter) -> str:
    """How many values a formal parameter binds, in words."""
    if param.option is FormalParameterOption.Variadic:
        arity = f"at least {param.min_arity}"
        return f"variadic ({arity}{', heterogeneous' if not param.is_homogeneous else ''})"
    return param.option.name.lower()


def differentiable(param: FormalParameter) -> str:
    return _DIFFERENTIABLE.get(param.differentiation_category.name, "")


def param_rows(params: Iterable[FormalParameter]) -> str:
    """The rows of an inputs or outputs table."""
    return "\n".join([f"| `{p.name}` | `{p.type_str}` | {kind(p)} | {differentiable(p)} | {md_cell(p.description)} |"
                      for p in params])


def attribute_rows(attributes: Iterable[Attribute]) -> str:
    """The rows of an attributes table."""
    return "\n".join([f"| `{a.name}` | `{a.type.spelling}` | {_default(a)} | "
                      f"{md_cell(a.constraint.describe()) if a.constraint else ''} | {md_cell(a.description)} |"
                      for a in attributes])


def type_rows(constraints: Iterable[TypeConstraintParam], type_list: Callable[[Sequence[str]], str]) -> str:
    """The rows of a type-constraints table, each type list written by ``type_list``."""
    return "\n".join([f"| `{t.type_param_str}` | {type_list(t.allowed_type_strs)} | {md_cell(t.description)} |"
                      for t in constraints])


def version_links(versions: Iterable[int]) -> str:
    """Links to the history entry of each version: ``[1](#version-1), [6](#version-6)``."""
    return ", ".join([f"[{v}](#{version_anchor(v)})" for v in versions])


def bullets(items: Iterable[Any]) -> str:
    """A Markdown list of ``items``, one line each."""
    return "\n".join([f"- {item}" for item in items])


def _default(attribute: Attribute) -> str:
    if attribute.required:
        return "*required*"
    if attribute.default is None:
        return ""
    return f"`{format_value(attribute.default)}`"


__all__ = ["attribute_rows", "bullets", "differentiable", "kind", "param_rows", "type_rows",
           "version_links"]
