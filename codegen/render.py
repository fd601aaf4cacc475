"""Render compiled domains into the files of a registry package: Python modules and docs.

Templates only render; every decision about content is made here or in the model.
The result is a mapping from relative path to text, so writing and freshness checks
share one code path and the output is deterministic.
"""
from __future__ import annotations

import functools
import keyword
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from opspec.codegen.compiler import CompiledDomain, CompiledOp
from opspec.codegen.history import attribute_spec, format_value, param_spec, version_changes
from opspec.codegen.pyliteral import docstring, py
from opspec.runtime.rules.catalog import RULES
from opspec.runtime.schema import Attribute, FormalParameter, FormalParameterOption, OpSchema

TEMPLATES = Path(__file__).resolve().parent / "templates"
SCHEMA_NAMES = ("Attribute", "AttrType", "DifferentiationCategory", "FormalParameter", "FormalParameterOption",
                "OpSchema", "RuleRef", "TypeConstraintParam", "ValueConstraint")
_HOIST_MIN_LENGTH = 60


@dataclass(frozen=True)
class HistoryEntry:
    """One version of one op, with what changed since the version before it."""

    op: CompiledOp
    schema: OpSchema
    previous: OpSchema | None
    changes: tuple[str, ...]
    notes: str


def module_name(name: str) -> str:
    """A safe Python module name for a domain or an op."""
    cleaned = re.sub(r"\W", "_", name)
    if not cleaned.isidentifier() or keyword.iskeyword(cleaned) or cleaned[0] == "_":
        cleaned = "op_" + cleaned
    return cleaned


def docs_folder(domain: CompiledDomain) -> str:
    """The folder (under ``docs/``) of a domain's pages: its name."""
    return domain.decl.name or module_name(domain.decl.node_domain)


def _md_cell(text: Any) -> str:
    """Text safe inside a Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _md_code(text: str) -> str:
    """Text for inside a code span; the empty string is shown as a quoted empty string."""
    return text.replace("`", "'") if text else '""'


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    """The template environment, built once (templates compile on first use)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters.update(py=py, pydoc=docstring, mdcell=_md_cell, mdcode=_md_code)
    env.globals.update(
        signature=signature,
        kind=_kind,
        differentiable=_differentiable,
        default=_default,
        docs_folder=docs_folder,
        rule_summary=lambda name: RULES[name].summary if name in RULES else "",
    )
    return env


def signature(schema: OpSchema) -> str:
    """A readable one-screen signature: call line, then attributes."""
    inputs = ", ".join(f"{p.name}: {param_spec(p)}" for p in schema.inputs)
    outputs = ", ".join(f"{p.name}: {param_spec(p)}" for p in schema.outputs)
    lines = [f"{schema.name}({inputs}) -> ({outputs})"]
    lines += [f"    {a.name}: {attribute_spec(a)}" for a in schema.attributes.values()]
    return "\n".join(lines)


def _kind(param: FormalParameter) -> str:
    if param.option is FormalParameterOption.Variadic:
        arity = f"at least {param.min_arity}"
        return f"variadic ({arity}{', heterogeneous' if not param.is_homogeneous else ''})"
    return param.option.name.lower()


def _differentiable(param: FormalParameter) -> str:
    return {"Differentiable": "yes", "NonDifferentiable": "no"}.get(param.differentiation_category.name, "")


def _default(attribute: Attribute) -> str:
    if attribute.required:
        return "*required*"
    if attribute.default_value is None:
        return ""
    return f"`{format_value(attribute.default_value)}`"


def history(op: CompiledOp) -> list[HistoryEntry]:
    """Every version of ``op``, newest first, with its changes and notes."""
    entries = []
    previous = None
    for schema, decl in zip(op.schemas, op.decl.versions):
        entries.append(HistoryEntry(op, schema, previous, tuple(version_changes(previous, schema)), decl.notes))
        previous = schema
    return entries[::-1]


def _families(domain: CompiledDomain) -> list[tuple[str, list[CompiledOp]]]:
    families: dict[str, list[CompiledOp]] = {}
    for op in domain.ops:
        families.setdefault(op.decl.family, []).append(op)
    return sorted(families.items())


def _changelog(domain: CompiledDomain) -> list[tuple[int, list[HistoryEntry]]]:
    by_opset: dict[int, list[HistoryEntry]] = {}
    for op in domain.ops:
        for entry in history(op):
            by_opset.setdefault(entry.schema.since_version, []).append(entry)
    return [(opset, sorted(entries, key=lambda e: e.op.decl.name)) for opset, entries in sorted(by_opset.items(), reverse=True)]


def _constants(op: CompiledOp) -> list[tuple[Any, str]]:
    """Values worth naming once at module level, in definition order.

    The op's doc, long texts and type sets used more than once, then parameter,
    attribute and type-constraint records shared by several versions (so versions that
    did not change them share one object).
    """
    counts: Counter[Any] = Counter()
    records: Counter[Any] = Counter()
    for schema in op.schemas:
        params = schema.inputs + schema.outputs
        counts.update(p.types for p in params)
        counts.update(p.description for p in params)
        counts.update(a.description for a in schema.attributes.values())
        counts.update(t.description for t in schema.type_constraints)
        records.update(params + tuple(schema.attributes.values()) + schema.type_constraints)
    repeated = [value for value, count in counts.items() if count > 1]
    texts = [v for v in repeated if isinstance(v, str) and len(v) >= _HOIST_MIN_LENGTH and v != op.decl.doc]
    sets = [v for v in repeated if isinstance(v, frozenset) and len(v) > 1]
    shared = [value for value, count in records.items() if count > 1]
    named = [(op.decl.doc, "DOC")] if op.decl.doc else []
    named += [(text, f"_TEXT_{index}") for index, text in enumerate(texts)]
    named += [(types, f"_TYPES_{index}") for index, types in enumerate(sets)]
    prefixes = {"FormalParameter": "_PARAM", "Attribute": "_ATTR", "TypeConstraintParam": "_TYPE_PARAM"}
    numbering: Counter[str] = Counter()
    for value in shared:
        prefix = prefixes[type(value).__name__]
        named.append((value, f"{prefix}_{numbering[prefix]}"))
        numbering[prefix] += 1
    return named


def _define(constants: list[tuple[Any, str]]) -> list[tuple[str, str]]:
    """Source for each constant, using only the constants defined before it."""
    defined: dict[Any, str] = {}
    lines = []
    for value, name in constants:
        lines.append((name, py(value, defined)))
        defined[value] = name
    return lines


def render_package(domains: tuple[CompiledDomain, ...], source: str, format_link: str | None = None) -> dict[str, str]:
    """All files of a registry package: ``{relative path: text}``.

    ``format_link`` is a relative link from the docs folder to a description of the
    opdefs format, when the tree has one.
    """
    env = _environment()
    files: dict[str, str] = {}
    modules: dict[tuple[str, str], str] = {}
    for domain in domains:
        package = module_name(domain.decl.name)
        files[f"{package}/__init__.py"] = env.get_template("domain_package.py.j2").render(domain=domain)
        for op in domain.ops:
            module = module_name(op.decl.name)
            modules[op.decl.domain, op.decl.name] = f"{package}.{module}"
            constants = _constants(op)
            body = py(op.schemas, {value: name for value, name in constants})
            definitions = _define(constants)
            module_text = body + "".join(text for _, text in definitions)
            imports = [name for name in SCHEMA_NAMES if re.search(rf"\b{name}\b", module_text)]
            files[f"{package}/{module}.py"] = env.get_template("op_module.py.j2").render(
                op=op, imports=imports, definitions=definitions, body=body
            )
    files["__init__.py"] = env.get_template("registry_index.py.j2").render(
        domains=domains, modules=modules, source=source
    )
    files.update(render_docs(domains, source, env, format_link))
    return files


def render_docs(domains: tuple[CompiledDomain, ...], source: str, env: jinja2.Environment | None = None,
                format_link: str | None = None) -> dict[str, str]:
    """The Markdown reference: an index, and per domain an op list, op pages, a changelog."""
    env = env or _environment()
    files = {}
    for domain in domains:
        folder = f"docs/{docs_folder(domain)}"
        files[f"{folder}/README.md"] = env.get_template("domain_index.md.j2").render(
            domain=domain, families=_families(domain)
        )
        files[f"{folder}/changelog.md"] = env.get_template("changelog.md.j2").render(
            domain=domain, changelog=_changelog(domain)
        )
        op_template = env.get_template("op.md.j2")
        for op in domain.ops:
            files[f"{folder}/{op.decl.name}.md"] = op_template.render(op=op, domain=domain, history=history(op))
    files["docs/README.md"] = env.get_template("docs_index.md.j2").render(domains=domains, source=source,
                                                                           format_link=format_link)
    files["docs/rules.md"] = env.get_template("rules.md.j2").render(rules=_rule_usage(domains))
    return files


@dataclass(frozen=True)
class _RuleUser:
    name: str
    link: str
    versions: tuple[int, ...]


@dataclass(frozen=True)
class _RuleUsage:
    spec: Any
    users: tuple[_RuleUser, ...]


def _rule_usage(domains: tuple[CompiledDomain, ...]) -> list[_RuleUsage]:
    """Every catalog rule with the operator versions that use it."""
    users: dict[str, list[_RuleUser]] = {name: [] for name in RULES}
    for domain in domains:
        for op in domain.ops:
            by_rule: dict[str, list[int]] = {}
            for schema in op.schemas:
                if schema.inference is not None:
                    by_rule.setdefault(schema.inference.name, []).append(schema.since_version)
            for rule, versions in by_rule.items():
                users[rule].append(_RuleUser(op.decl.name, f"{docs_folder(domain)}/{op.decl.name}.md", tuple(versions)))
    return [_RuleUsage(RULES[name], tuple(found)) for name, found in sorted(users.items())]
