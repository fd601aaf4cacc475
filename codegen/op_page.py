"""The parts of an operator's docs page, each built here as one text: the template only places
them (a template call per row or per table costs more than the row; an op may have very many
parameters, attributes and versions)."""
from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

from opspec.codegen.changelog import HistoryEntry, history_section
from opspec.codegen.compiler import CompiledDomain, CompiledOp
from opspec.codegen.docs_function import function_listing
from opspec.codegen.cost_block import cost_text
from opspec.codegen.docs_pages import md_cell, version_anchor
from opspec.codegen.examples import Example
from opspec.codegen.history import SPELLINGS, constraint_text, format_value, signature
from opspec.runtime.schema import (Attribute, DifferentiationCategory, FormalParameter, FormalParameterOption, OpSchema,
                                   RuleRef, TypeConstraintParam)

_DIFFERENTIABLE = {DifferentiationCategory.Differentiable: "yes", DifferentiationCategory.NonDifferentiable: "no"}
_OPTION_WORDS = {option: option.name.lower() for option in FormalParameterOption}


def kind(param: FormalParameter) -> str:
    """How many values a formal parameter binds, in words."""
    if param.option is FormalParameterOption.Variadic:
        arity = f"at least {param.min_arity}"
        return f"variadic ({arity}{', heterogeneous' if not param.is_homogeneous else ''})"
    return _OPTION_WORDS[param.option]


def differentiable(param: FormalParameter) -> str:
    return _DIFFERENTIABLE.get(param.differentiation_category, "")


def param_rows(params: Iterable[FormalParameter]) -> str:
    """The rows of an inputs or outputs table."""
    return "\n".join([f"| `{p.name}` | `{p.type_str}` | {kind(p)} | {differentiable(p)} | {md_cell(p.description)} |"
                      for p in params])


def attribute_rows(attributes: Iterable[Attribute]) -> str:
    """The rows of an attributes table."""
    return "\n".join([f"| `{a.name}` | `{SPELLINGS[a.type]}` | {_default(a)} | "
                      f"{md_cell(constraint_text(a.constraint)) if a.constraint else ''} | {md_cell(a.description)} |"
                      for a in attributes])


def type_rows(constraints: Iterable[TypeConstraintParam], type_list: Callable[[Sequence[str]], str]) -> str:
    """The rows of a type-constraints table, each type list written by ``type_list``."""
    return "\n".join([f"| `{t.type_param_str}` | {type_list(t.allowed_type_strs)} | {md_cell(t.description)} |"
                      for t in constraints])


def version_links(versions: Iterable[int]) -> str:
    """Links to the history entry of each version: ``[1](#version-1), [6](#version-6)``."""
    return ", ".join([f"[{v}](#{version_anchor(v)})" for v in versions])


def _default(attribute: Attribute) -> str:
    if attribute.required:
        return "*required*"
    if attribute.default is None:
        return ""
    return f"`{format_value(attribute.default)}`"


def page_parts(op: CompiledOp, domain: CompiledDomain, history: list[HistoryEntry], examples: list[Example],
               type_list: Callable[[Sequence[str]], str], kernels: str = "") -> dict[str, Any]:
    """The texts ``op.md.j2`` places: the page describes the op's newest version (an empty text: the
    section is left out); ``kernels`` is the table of the runtime kernels that serve the op."""
    latest = op.latest
    decl = op.decl
    return {
        "yaml": decl.path, "name": decl.name, "domain": domain.decl.name,
        "family": f" · {decl.family}" if decl.family else "",
        "versions": version_links(op.versions), "version": latest.since_version, "deprecated": latest.deprecated,
        "summary": decl.summary, "doc": decl.doc.strip(), "signature": signature(latest),
        "inputs": param_rows(latest.inputs), "outputs": param_rows(latest.outputs),
        "attributes": attribute_rows(latest.attributes.values()),
        "type_constraints": type_rows(latest.type_constraints, type_list),
        "inference": _inference(latest.inference, domain), "cost": cost_text(latest.cost),
        "functions": _functions(latest),
        "built_per_node": ", ".join(map(str, latest.context_dependent_function_opset_versions)),
        "examples": "\n".join([_example(example) for example in examples]),
        "history": history_section(history, latest), "kernels": kernels,
    }


def _example(example: Example) -> str:
    """A worked example's line: its version, its call and what inference gives each output."""
    outputs = ", ".join([f"`{name}: {value}`" for name, value in example.outputs])
    return f"- version [{example.version}](#{version_anchor(example.version)}): `{example.call}` → {outputs}"


def _inference(rule: RuleRef | None, domain: CompiledDomain) -> str:
    """The rule a version uses, with its arguments and the rule's summary."""
    if rule is None:
        return "No inference rule: outputs are left untyped."
    args = f" ({', '.join([f'{key}=`{value}`' for key, value in rule.args.items()])})" if rule.args else ""
    declared = domain.catalogue.rules.get(rule.name)
    return f"Rule `{rule.name}`{args}: {declared.spec.summary if declared is not None else ''}"


def _functions(schema: OpSchema) -> str:
    """Each function body as a listing, with the opsets it is for (empty when there is none)."""
    bodies = schema.functions
    listings = [f"For opset {body.opset} and later"
                + (f", up to {bodies[index + 1].opset - 1}" if index + 1 < len(bodies) else "")
                + f":\n\n```text\n{function_listing(schema, body)}\n```" for index, body in enumerate(bodies)]
    choice = "The body for the newest opset not after the model's is used.\n\n" if len(bodies) > 1 else ""
    return choice + "\n\n".join(listings) if listings else ""


__all__ = ["attribute_rows", "differentiable", "kind", "page_parts", "param_rows", "type_rows", "version_links"]
