"""Content of the docs pages beyond one operator: the inference status page, the
"opset N at a glance" pages, and the change-class badges every version carries."""
from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable

from opspec.codegen.compiler import CompiledDomain, CompiledOp
from opspec.codegen.convert_notes import at_opset
from opspec.runtime.schema import OpSchema

#: Node-suite outcomes, best first (tests/conformance/harness.py defines them).
SUITE_ORDER = ("EXACT", "PARTIAL", "MISSING", "WRONG", "ERROR")


def badge(change_class: str) -> str:
    """A version's change class as an inline badge (empty for a first version)."""
    return f"<kbd>{change_class}</kbd>" if change_class else ""


def md_cell(text: Any) -> str:
    """Text safe inside a Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def bullets(items: Iterable[Any]) -> str:
    """A Markdown list of ``items``, one line each."""
    return "\n".join([f"- {item}" for item in items])


def family_rows(ops: Iterable[CompiledOp]) -> str:
    """The rows of a domain index's table of a family's operators: each with links to its versions."""
    rows = []
    for op in ops:
        name = op.decl.name
        deprecated = " *(deprecated)*" if op.latest.deprecated else ""
        versions = ", ".join([f"[{v}]({name}.md#{version_anchor(v)})" for v in op.versions])
        rows.append(f"| [{name}]({name}.md){deprecated} | {versions} | {md_cell(op.decl.summary)} |\n")
    return "".join(rows)


def version_anchor(version: int) -> str:
    """The id of a version's entry in its op page's history."""
    return f"version-{version}"


def status_table(domain: CompiledDomain, suite: dict[str, str] | None) -> str:
    """The status page's table rows: every version of every op in ``domain``, newest first within
    an op, with its change, its rule and (on an op's newest version, when ``suite`` is known) its
    node-suite counts."""
    counts = suite_counts(domain, suite) if suite else {}
    rows = []
    for op in domain.ops:
        name = op.decl.name
        for index, schema in enumerate(reversed(op.schemas)):
            version = schema.since_version
            rule = f"`{schema.inference.name}`" if schema.inference else "no rule yet"
            cases = f" {counts.get(name, '') if index == 0 else ''} |" if suite else ""
            rows.append(f"| [{name}]({name}.md) | [{version}]({name}.md#{version_anchor(version)}) | "
                        f"{schema.change_class or 'new'} | {rule} |{cases}\n")
    return "".join(rows)


def suite_counts(domain: CompiledDomain, suite: dict[str, str]) -> dict[str, str]:
    """Per op, its node-suite outcomes as text (``12 EXACT, 2 PARTIAL``).

    Cases are matched to operators by name, as the suite names them: ``test_<op>`` or
    ``test_<op in snake case>``, followed by ``_``, a digit or nothing; the longest match wins.
    Only the default ONNX domain has a node suite.
    """
    if domain.decl.node_domain not in ("", "ai.onnx"):
        return {}
    prefixes: dict[str, str] = {}
    for op in domain.ops:
        name = op.decl.name
        prefixes[f"test_{name.lower()}"] = name
        prefixes[f"test_{re.sub(r'(?<=[a-z0-9])(?=[A-Z])', '_', name).lower()}"] = name
    by_op: dict[str, Counter[str]] = {}
    for case, outcome in suite.items():
        # Where a prefix may end: before "_" or a digit, or at the end; try the longest first.
        ends = [len(case)] + [i for i in range(len(case) - 1, 5, -1) if case[i] == "_" or case[i].isdigit()]
        match = next((case[:end] for end in ends if case[:end] in prefixes), None)
        if match is not None:
            by_op.setdefault(prefixes[match], Counter())[outcome] += 1
    return {op: ", ".join(f"{counts[o]} {o}" for o in SUITE_ORDER if counts[o]) for op, counts in by_op.items()}


@dataclass(frozen=True)
class GlanceRow:
    """One operator as an opset has it: the version in force and how it changed at that opset."""

    op: str
    schema: OpSchema  # the op's newest version not after the opset
    change: str  # "new", the version's change class when it came at the opset, else ""
    previous: int | None  # the version in force at the opset before, if any
    anchor: str = ""  # the id of the version's entry in the op page's history
    badge: str = ""  # how the table shows the change: "new", a badge, or nothing

    @classmethod
    def of(cls, op: str, schema: OpSchema, change: str, previous: int | None) -> GlanceRow:
        """The row, with the text the table shows made here (once per row, not by template calls)."""
        shown = "new" if previous is None and change else badge(change)
        return cls(op, schema, change, previous, version_anchor(schema.since_version), shown)


@dataclass(frozen=True)
class GlancePage:
    """What an opset's at-a-glance page shows."""

    changes: str  # the list of the operators that are new or changed at the opset, by name ("" if none)
    count: int  # how many operators exist at the opset
    table: str  # the table's rows: every operator with its version in force


class Glance:
    """The opset pages of a domain. Each lists every operator, so each operator's table rows are
    made once (per process, on first use), not once per opset."""

    def __init__(self, domain: CompiledDomain) -> None:
        self.domain = domain
        self._ops: list[tuple[str, tuple[OpSchema, ...], list[int], list[str]]] | None = None

    def page(self, opset: int) -> GlancePage:
        if self._ops is None:
            self._ops = [(op.decl.name, op.schemas, [schema.since_version for schema in op.schemas],
                          [_table_row(GlanceRow.of(op.decl.name, schema, "", schema.since_version))
                           for schema in op.schemas])
                         for op in sorted(self.domain.ops, key=lambda op: op.decl.name)]
        changes = []
        lines = []
        for name, schemas, versions, rows in self._ops:
            index = bisect_right(versions, opset) - 1  # the newest version not after the opset
            if index < 0:
                continue
            if versions[index] != opset:
                lines.append(rows[index])
                continue
            schema = schemas[index]
            row = GlanceRow.of(name, schema, schema.change_class or "new", versions[index - 1] if index else None)
            changes.append(_change_item(self.domain, row))
            lines.append(_table_row(row))
        return GlancePage("".join(changes), len(lines), "".join(lines))


def _change_item(domain: CompiledDomain, row: GlanceRow) -> str:
    """An operator new or changed at an opset, with how a model crosses the step."""
    link = f"**[{row.op}]({row.op}.md#{version_anchor(row.schema.since_version)})**"
    if row.previous is None:
        text = f"- {link}: new operator."
    else:
        text = f"- {link} {badge(row.change)} (was version [{row.previous}]({row.op}.md#{version_anchor(row.previous)}))"
    conversion = at_opset(domain, row)
    return f"{text} {conversion}\n" if conversion else f"{text}\n"


def _table_row(row: GlanceRow) -> str:
    deprecated = " *(deprecated)*" if row.schema.deprecated else ""
    return (f"| [{row.op}]({row.op}.md){deprecated} | [{row.schema.since_version}]({row.op}.md#{row.anchor}) | "
            f"{row.badge} |\n")


def opset_page(opset: int) -> str:
    """The file name of an opset's at-a-glance page, within its domain's folder."""
    return f"opset-{opset}.md"


__all__ = ["SUITE_ORDER", "Glance", "GlancePage", "GlanceRow", "badge", "bullets", "family_rows", "md_cell", "opset_page", "status_table",
           "suite_counts", "version_anchor"]
