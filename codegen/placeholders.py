"""Find text that still waits for a person: empty descriptions and placeholder markers.

These are warnings, not errors: a draft tree compiles, and says what is left to write.
"""
from __future__ import annotations

import re

from opspec.codegen.diagnostics import Diagnostic
from opspec.codegen.model import DomainDecl, OpDecl
from opspec.runtime.schema import OpSchema

_MARKER = re.compile(r"\b(TODO|FIXME|TBD|XXX)\b|placeholder", re.IGNORECASE)
#: The marker's words: ASCII text holding none of them (in any case) has no marker.
_MARKER_WORDS = ("todo", "fixme", "tbd", "xxx", "placeholder")


def _marker(text: str) -> re.Match[str] | None:
    """The first placeholder marker in ``text`` (the search runs only where a marker word occurs;
    text beyond ASCII is always searched, as a case-blind match may differ from ``lower()``)."""
    if text.isascii():
        lowered = text.lower()
        for word in _MARKER_WORDS:  # a plain loop: most texts hold none, and this runs for every text
            if word in lowered:
                break
        else:
            return None
    return _MARKER.search(text)


def _problem(text: str) -> str | None:
    if not text.strip():
        return "is empty"
    found = _marker(text)
    return f"has a placeholder ({found.group(0)})" if found else None


def placeholder_warnings(op: OpDecl, schemas: tuple[OpSchema, ...]) -> list[Diagnostic]:
    """A located warning for each placeholder or missing description of ``op``."""
    warnings = []

    def check(what: str, text: str, location) -> None:
        problem = _problem(text)
        if problem:
            warnings.append(Diagnostic(location, f"{what} {problem}", "warning"))

    for name, text in (("summary", op.summary), ("doc", op.doc)):
        if name in op.field_locations or not op.field_locations:
            check(name, text, op.field_locations.get(name, op.location))
        else:
            before = _field_before(op, name)
            warnings.append(Diagnostic(op.field_locations[before], f"{name} is missing (it goes after `{before}:`)",
                                       "warning"))
    for name, text in op.docs.items():
        check(f"description of {name!r}", str(text), op.doc_locations[name])
    for version in op.versions:
        if version.notes:
            check(f"notes of version {version.since}", version.notes, version.location)
    described = set(op.docs)
    named: dict[str, None] = {}
    for schema in schemas:
        named.update(dict.fromkeys(p.name for p in schema.inputs + schema.outputs if not p.description))
        named.update(dict.fromkeys(n for n, a in schema.attributes.items() if not a.description))
        named.update(dict.fromkeys(t.type_param_str for t in schema.type_constraints if not t.description))
    for name in named:
        if name not in described:
            where = (op.field_locations.get("docs") or op.field_locations[_field_before(op, "docs")]
                     if op.field_locations else op.location)
            warnings.append(Diagnostic(where, f"{name!r} has no description", "warning"))
    return warnings


def _field_before(op: OpDecl, name: str) -> str:
    """The field present in ``op``'s file that a missing field ``name`` would follow."""
    order = ("op", "summary", "doc", "docs")
    return next(field for field in reversed(order[:order.index(name)]) if field in op.field_locations)


def domain_placeholder_warnings(domain: DomainDecl) -> list[Diagnostic]:
    """A located warning for a placeholder in a domain's summary or doc (both may be left out)."""
    return [Diagnostic(domain.location, f"domain {field} has a placeholder", "warning")
            for field, text in (("summary", domain.summary), ("doc", domain.doc))
            if text and _marker(text)]
