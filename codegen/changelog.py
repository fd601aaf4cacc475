"""Each operator's version history (what changed at each version), and a domain's changelog:
per opset, the operator versions it introduced, as Markdown."""
from __future__ import annotations

from dataclasses import dataclass

from opspec.codegen.compiler import CompiledDomain, CompiledOp
from opspec.codegen.docs_pages import badge, bullets, md_cell, version_anchor
from opspec.codegen.convert_notes import below_first, downward, upward
from opspec.codegen.history import classified_changes, plain_type_list, signature
from opspec.codegen.type_names import TypeSetNames
from opspec.runtime.schema import OpSchema


@dataclass(frozen=True)
class HistoryEntry:
    """One version of one op, with what changed since the version before it."""

    op: CompiledOp
    schema: OpSchema
    previous: OpSchema | None
    changes: tuple[str, ...]
    notes: str
    change_class: str = ""


def history(op: CompiledOp, names: TypeSetNames | None = None) -> list[HistoryEntry]:
    """Every version of ``op``, newest first, with its changes (type lists written with
    ``names``), notes and change class."""
    entries = []
    previous = None
    name_set = names.markdown if names is not None else plain_type_list
    for schema, decl in zip(op.schemas, op.decl.versions):
        changes = tuple(change.text for change in classified_changes(previous, schema, name_set))
        entries.append(HistoryEntry(op, schema, previous, changes, decl.notes, schema.change_class))
        previous = schema
    return entries[::-1]


class Histories:
    """Each op's history, computed once per process on first use (a domain's changelog needs
    them all, each op page its own)."""

    def __init__(self, names: TypeSetNames) -> None:
        self.names = names
        self.found: dict[str, list[HistoryEntry]] = {}

    def of(self, op: CompiledOp) -> list[HistoryEntry]:
        if op.decl.name not in self.found:
            self.found[op.decl.name] = history(op, self.names)
        return self.found[op.decl.name]


def history_section(entries: list[HistoryEntry], latest: OpSchema) -> str:
    """An op page's version history: per version, newest first, its notes, changes and how
    ``opspec convert`` crosses the step to it."""
    return "".join([_version(entry, latest, current=index == 0) for index, entry in enumerate(entries)])


def _version(entry: HistoryEntry, latest: OpSchema, current: bool) -> str:
    schema, previous = entry.schema, entry.previous
    text = [f'<a id="{version_anchor(schema.since_version)}"></a>\n### Version {schema.since_version}',
            " (current)" if current else "", f" {badge(entry.change_class)}" if entry.change_class else "", "\n\n"]
    if entry.notes:
        text.append(f"{entry.notes.strip()}\n\n")
    if entry.changes:
        text.append(bullets(entry.changes) + "\n")
    if schema.file.startswith("opdefs/ai.onnx/"):
        if previous is not None:
            text.append(f"\nConversion (`opspec convert`): from version {previous.since_version} up, "
                        f"{upward(previous, schema)}; down to version {previous.since_version}, "
                        f"{downward(previous, schema)}.\n")
        elif schema.since_version > 1:
            text.append(f"Conversion (`opspec convert`): below opset {schema.since_version}, {below_first(schema)}.\n\n")
    if not entry.changes and previous is None:
        text.append("First version.\n")
        if schema != latest:
            text.append(f"\n```text\n{signature(schema)}\n```\n")
    text.append("\n")
    return "".join(text)


def opsets(domain: CompiledDomain) -> range:
    """Every opset version of ``domain``, newest first."""
    return range(domain.decl.opset_max, domain.decl.opset_min - 1, -1)


def changelog(domain: CompiledDomain, histories: Histories) -> list[tuple[int, str]]:
    """Per opset of the domain, newest first, the list of operator versions it introduced
    (empty when none)."""
    by_opset: dict[int, list[HistoryEntry]] = {opset: [] for opset in opsets(domain)}
    for op in domain.ops:
        for entry in histories.of(op):
            by_opset.setdefault(entry.schema.since_version, []).append(entry)
    return [(opset, "".join([_entry(entry) for entry in sorted(entries, key=lambda e: e.op.decl.name)]))
            for opset, entries in sorted(by_opset.items(), reverse=True)]


def _entry(entry: HistoryEntry) -> str:
    """An operator version's item in the changelog, with its changes as sub-items."""
    name = entry.op.decl.name
    link = f"**[{name}]({name}.md#{version_anchor(entry.schema.since_version)})**"
    if entry.previous is None:
        return f"- {link}: new operator.\n"
    was = entry.previous.since_version
    notes = f": {md_cell(entry.notes)}" if entry.notes else ""
    changes = "".join([f"    - {change}\n" for change in entry.changes])
    return f"- {link} {badge(entry.change_class)} (was version [{was}]({name}.md#{version_anchor(was)})){notes}\n{changes}"


__all__ = ["HistoryEntry", "Histories", "changelog", "history", "history_section", "opsets"]
