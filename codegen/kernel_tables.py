"""Kernel tables: read, check and render the kernels an op set's runtime registers.

A layered op set may hold a ``kernels/`` folder of tables, one YAML file per execution
provider (see ``opdefs/schema/kernels.schema.json``). Each is validated like an op file
(errors located at file:line:col), then rendered into the op set's package as the data
module ``kernels.py``, which :mod:`opspec.runtime.kernels` reads.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable

from opspec.codegen.diagnostics import CompileError, Diagnostic
from opspec.codegen.source import Location, Map, SourceError, load_yaml
from opspec.codegen.validate import schema_errors

#: The folder of a layered op set that holds its kernel tables.
KERNELS_FOLDER = "kernels"
#: The module of the op set's package the tables are rendered into.
KERNELS_MODULE = "kernels.py"


@dataclass(frozen=True)
class KernelEntry:
    """One kernel: domain, op, version range (``until`` None: no end), accepted types per type parameter."""

    domain: str
    op: str
    since: int
    until: int | None
    types: tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True)
class RefusalEntry:
    """A kernel that is registered for a node yet refuses it: the op's versions (``until`` None: no
    end), the types and attribute values that make it refuse (each named one must match), and why."""

    domain: str
    op: str
    since: int
    until: int | None
    types: tuple[tuple[str, tuple[str, ...]], ...]
    attributes: tuple[tuple[str, tuple[Any, ...]], ...]
    why: str
    #: Per attribute, the only values the kernel takes (None: not set, and no default).
    unless: tuple[tuple[str, tuple[Any, ...]], ...] = ()


@dataclass(frozen=True)
class CallEntry:
    """One op a built body calls: per type parameter of the called op, the node's type parameters or
    the types its values come from; ``when``: the node's attribute values under which it is called."""

    op: str
    types: tuple[tuple[str, tuple[str, ...]], ...]
    when: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    #: The called op's domain (empty: the node's).
    domain: str = ""


@dataclass(frozen=True)
class BuiltBodyEntry:
    """The ops the body onnx builds per node for an op's versions calls."""

    domain: str
    op: str
    since: int
    until: int | None
    calls: tuple[CallEntry, ...]


@dataclass(frozen=True)
class KernelTable:
    """The kernels of one execution provider, and where they were read from."""

    provider: str
    source: str
    path: str
    kernels: tuple[KernelEntry, ...]
    #: The newest IR version the runtime loads (None: not stated).
    ir_version: int | None = None
    #: Per domain, the newest opset the runtime loads.
    opsets: tuple[tuple[str, int], ...] = ()
    #: The schema versions the runtime knows, as ((domain, op, (versions...)), ...) (empty: not stated).
    schemas: tuple[tuple[str, str, tuple[int, ...]], ...] = ()
    #: Kernels that refuse some nodes they are registered for.
    refusals: tuple[RefusalEntry, ...] = ()
    #: What the bodies onnx builds per node call.
    built_bodies: tuple[BuiltBodyEntry, ...] = ()


def read_tables(folder: Path, shown: str) -> tuple[KernelTable, ...]:
    """Every table in ``folder`` (shown in locations as ``shown``), in file name order; raises
    :class:`CompileError` with every located problem found."""
    if not folder.is_dir():
        return ()
    problems: list[Diagnostic] = []
    tables: list[KernelTable] = []
    providers: dict[str, str] = {}
    for path in sorted(folder.glob("*.yaml")):
        display = f"{shown}/{path.name}"
        try:
            document = load_yaml(path, display)
        except SourceError as error:
            problems.append(Diagnostic(error.location, error.message))
            continue
        errors = [Diagnostic(where, message) for where, message in schema_errors(document, "kernels")]
        if errors or not isinstance(document, Map):
            problems += errors or [Diagnostic(Location(display, 1, 1), "expected a kernel table (a mapping)")]
            continue
        table = _table(document, display, problems)
        if table.provider in providers:
            problems.append(Diagnostic(document.value_at("provider"),
                                       f"provider {table.provider!r} already has a table in {providers[table.provider]}"))
            continue
        providers[table.provider] = display
        tables.append(table)
    if problems:
        raise CompileError(problems)
    return tuple(tables)


def _table(document: Any, display: str, problems: list[Diagnostic]) -> KernelTable:
    entries: list[KernelEntry] = []
    for index, item in enumerate(document["kernels"]):
        since, until = item["versions"]
        if since is None:
            problems.append(Diagnostic(item.value_at("versions"), "a kernel's first version is missing (null)"))
            continue
        if until is not None and until < since:
            problems.append(Diagnostic(item.value_at("versions"),
                                       f"version range is inverted: {since} is above {until}"))
            continue
        types = tuple(sorted((str(name), tuple(sorted(str(t) for t in allowed)))
                             for name, allowed in item["types"].items()))
        entries.append(KernelEntry(str(item["domain"]), str(item["op"]), int(since),
                                   None if until is None else int(until), types))
    limits = document.get("limits") or {}
    ir_version = limits.get("ir_version")
    opsets = tuple(sorted((str(domain), int(version)) for domain, version in (limits.get("opsets") or {}).items()))
    schemas = tuple((str(domain), str(op), tuple(sorted(int(v) for v in versions)))
                    for domain, ops in sorted((document.get("schemas") or {}).items())
                    for op, versions in sorted(ops.items()))
    refusals = tuple(RefusalEntry(str(item["domain"]), str(item["op"]), *_range(item, problems), _lists(item.get("types")),
                                  _lists(item.get("attributes")), str(item["why"]), _lists(item.get("unless")))
                     for item in document.get("refusals") or ())
    bodies = tuple(BuiltBodyEntry(str(item["domain"]), str(item["op"]), *_range(item, problems),
                                  tuple(CallEntry(str(call["op"]), _lists(call["types"]), _lists(call.get("when")), str(call.get("domain") or ""))
                                        for call in item["calls"]))
                   for item in document.get("built_bodies") or ())
    return KernelTable(str(document["provider"]), str(document["source"]), display, tuple(entries),
                       None if ir_version is None else int(ir_version), opsets, schemas, refusals, bodies)


def _range(item: Any, problems: list[Diagnostic]) -> tuple[int, int | None]:
    """The version range of a refusal or built body (an inverted or open-start one is reported)."""
    since, until = item["versions"]
    if since is None or (until is not None and until < since):
        problems.append(Diagnostic(item.value_at("versions"), "expected a first version and a last one not below it"))
        return 1, 0
    return int(since), None if until is None else int(until)


def _lists(mapping: Any) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    """A mapping of names to lists, as sorted tuples of plain values."""
    return tuple(sorted((str(name), tuple(_plain(value) for value in values)) for name, values in (mapping or {}).items()))


def _plain(value: Any) -> Any:
    if value is None:  # an attribute not set (and without default)
        return None
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


def render_module(tables: tuple[KernelTable, ...], source: str) -> str:
    """The data module of ``tables``: the distinct type lists once, then each provider's kernels
    as tuples that refer to them by position."""
    lists: dict[tuple[str, ...], int] = {}
    for table in tables:
        for entry in table.kernels:
            for _, allowed in entry.types:
                lists.setdefault(allowed, len(lists))
    lines = ['"""onnxruntime\'s kernel tables, per execution provider.', "",
             f"Generated by `opspec generate` from {source}; do not edit. Read through",
             "`opspec.runtime.kernels`: each kernel is (domain, op, since, until or None,",
             "((type parameter, index into TYPE_LISTS), ...)).", '"""', "",
             "TYPE_LISTS = ("]
    lines += [f"    {allowed!r}," for allowed in lists]
    lines += [")", "", "SOURCES = {"]
    lines += [f"    {table.provider!r}: {table.source!r}," for table in tables]
    lines += ["}", "", "#: Per provider, the newest IR version (or None) and the newest opset of each domain it loads.",
              "LIMITS = {"]
    lines += [f"    {table.provider!r}: ({table.ir_version!r}, {dict(table.opsets)!r})," for table in tables]
    lines += ["}", "", "#: Per provider, the schema versions the runtime knows: {(domain, op): (versions...)}."]
    lines += _per_provider(tables, "SCHEMAS", lambda table: [f"({domain!r}, {op!r}): {versions!r}"
                                                             for domain, op, versions in table.schemas], "{}")
    lines += ["", "#: Per provider, kernels that refuse nodes they are registered for:",
              "#: (domain, op, since, until or None, ((type parameter, types), ...), ((attribute, values), ...), why,",
              "#: ((attribute, the only values taken), ...))."]
    lines += _per_provider(tables, "REFUSALS", lambda table: [
        repr((r.domain, r.op, r.since, r.until, r.types, r.attributes, r.why, r.unless)) for r in table.refusals])
    lines += ["", "#: Per provider, the ops the bodies onnx builds per node call: (domain, op, since, until or None,",
              "#: ((called op, ((type parameter, sources), ...), ((attribute, values), ...), domain or ''), ...))."]
    lines += _per_provider(tables, "BUILT_BODIES", lambda table: [
        repr((b.domain, b.op, b.since, b.until, tuple((c.op, c.types, c.when, c.domain) for c in b.calls)))
        for b in table.built_bodies])
    lines += [""]
    lines += _per_provider(tables, "KERNELS", lambda table: [
        f"({entry.domain!r}, {entry.op!r}, {entry.since}, {entry.until}, "
        f"{tuple((name, lists[allowed]) for name, allowed in entry.types)!r})" for entry in table.kernels])
    return "\n".join(lines) + "\n"


def _per_provider(tables: tuple[KernelTable, ...], name: str, rows: Callable[[KernelTable], list[str]],
                  brackets: str = "()") -> list[str]:
    """The lines of a module constant ``name`` mapping each table's provider to its ``rows`` (Python
    literals, one per line) in ``brackets``."""
    lines = [f"{name} = {{"]
    for table in tables:
        lines.append(f"    {table.provider!r}: {brackets[0]}")
        lines += [f"        {row}," for row in rows(table)]
        lines.append(f"    {brackets[1]},")
    lines.append("}")
    return lines


def layer_tables(layer: Path, shown: str) -> tuple[KernelTable, ...]:
    """The tables of the layered op set at ``layer`` (shown as ``shown``), none when it has no
    ``kernels/`` folder; raises :class:`CompileError` on any problem."""
    return read_tables(layer / KERNELS_FOLDER, f"{shown}/{KERNELS_FOLDER}")


def kernel_jobs(tables: tuple[KernelTable, ...], shown: str, prefix: str, pages: Any = None) -> list[Any]:
    """The jobs rendering a layered op set's tables (``shown``: their folder) into its package:
    the data module, and the provider pages ``pages()`` gives (paths inside the package)."""
    if not tables:
        return []
    jobs: list[Any] = [partial(_module_file, f"{prefix}{KERNELS_MODULE}", tables, f"{shown}/{KERNELS_FOLDER}/")]
    if pages is not None:
        jobs.append(partial(_prefixed_pages, prefix, pages))
    return jobs


def _module_file(path: str, tables: tuple[KernelTable, ...], source: str) -> dict[str, str]:
    return {path: render_module(tables, source)}


def _prefixed_pages(prefix: str, pages: Any) -> dict[str, str]:
    return {prefix + path: text for path, text in pages().items()}


__all__ = ["BuiltBodyEntry", "CallEntry", "KERNELS_FOLDER", "KernelEntry", "RefusalEntry", "KernelTable", "kernel_jobs", "layer_tables", "read_tables", "render_module"]
