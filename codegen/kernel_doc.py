"""Read onnxruntime's generated kernel document (``docs/OperatorKernels.md``) into kernel tables.

onnxruntime's release tree carries a markdown table of every kernel of the providers it was
built with (CPU, CUDA, DirectML), written from the same registry the CPU table is extracted
from. Providers other than CPU cannot be read from the CPU wheel, so their tables come from
that document. The document is trusted only as far as it can be checked: its CPU section is
compared, row by row, with the CPU table extracted from the pinned wheel, and a provider table
is written only when the two agree.

The document's rows are coarser than a table's: for one op and version range it shows, per
type parameter, the union of the types every registration accepts, and it leaves out a range
whose registrations constrain no type parameter. The comparison collapses the CPU table the
same way before comparing.

Run as ``python -m opspec.codegen.kernel_doc DOC [--write] [--commit SHA]`` (``make
kernels-doc DOC=...``): without ``--write`` it only prints the cross-check.
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

import yaml

from opspec.codegen.kernel_extract import PROVIDERS, Registration, table_text
from opspec.runtime.atomic_file import write_atomically

#: A provider section's heading.
_HEADING = re.compile(r"^## Operators implemented by (\w+)\s*$")
#: A domain row: ``|**Operator Domain:** *ai.onnx*||||``.
_DOMAIN = re.compile(r"^\|\*\*Operator Domain:\*\* \*([^*]+)\*\|")
#: One type parameter's cell part: ``**T** = tensor(float), tensor(double)``.
_TYPE_PART = re.compile(r"^\*\*([^*]+)\*\* = (.*)$")
#: A version cell: ``13+``, ``[6, 12]`` or ``9``.
_OPEN_RANGE = re.compile(r"^(\d+)\+$")
_CLOSED_RANGE = re.compile(r"^\[(\d+), (\d+)\]$")
_SINGLE = re.compile(r"^(\d+)$")

#: A row's key: domain, op, first version, last version (None: open).
RowKey = tuple[str, str, int, "int | None"]
#: A row's types: per type parameter, the accepted types.
RowTypes = Mapping[str, frozenset[str]]


class DocumentError(ValueError):
    """A line of the document that does not read as the generator writes it (``line`` is 1-based)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


@dataclass(frozen=True)
class DocumentRow:
    """One row of the document: a provider's kernels for one op and version range."""

    provider: str
    domain: str
    op: str
    since: int
    until: int | None
    types: tuple[tuple[str, tuple[str, ...]], ...]
    line: int

    def key(self) -> tuple[str, str, int, int | None]:
        return (self.domain, self.op, self.since, self.until)


def parse_document(text: str) -> dict[str, list[DocumentRow]]:
    """Every provider section's rows, by our provider name (``cpu``, ``cuda``, ``dml``; another
    provider keeps onnxruntime's name); raises :class:`DocumentError` on a malformed row."""
    found: dict[str, list[DocumentRow]] = {}
    provider = domain = op = ""
    for number, line in enumerate(text.splitlines(), start=1):
        heading = _HEADING.match(line)
        if heading:
            provider, domain, op = PROVIDERS.get(heading.group(1), heading.group(1)), "", ""
            found.setdefault(provider, [])
            continue
        if not provider or not line.startswith("|") or line.startswith(("| Op Name", "|---")) or line.strip() == "| |":
            continue
        marked = _DOMAIN.match(line)
        if marked:
            domain, op = marked.group(1), ""
            continue
        cells = line.rstrip().split("|")
        if len(cells) != 6 or cells[0] or cells[5]:
            raise DocumentError(number, "expected a row of four cells: op, parameters, versions, types")
        name, versions, types = cells[1], cells[3], cells[4]
        if name:
            op = name
        if not op or not domain:
            raise DocumentError(number, "a version row before any op or domain")
        since, until = _versions(versions, number)
        found[provider].append(DocumentRow(provider, domain, op, since, until, _types(types, number), number))
    return found


def _versions(cell: str, line: int) -> tuple[int, int | None]:
    cell = cell.strip()
    if (match := _OPEN_RANGE.match(cell)) is not None:
        return int(match.group(1)), None
    if (match := _CLOSED_RANGE.match(cell)) is not None:
        return int(match.group(1)), int(match.group(2))
    if (match := _SINGLE.match(cell)) is not None:
        return int(match.group(1)), int(match.group(1))
    raise DocumentError(line, f"unreadable version range {cell!r}")


def _types(cell: str, line: int) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not cell.strip():
        return ()
    params: list[tuple[str, tuple[str, ...]]] = []
    for part in cell.split("<br/>"):
        match = _TYPE_PART.match(part.strip())
        if match is None:
            raise DocumentError(line, f"unreadable type constraint {part.strip()!r}")
        params.append((match.group(1), tuple(sorted(_split_types(match.group(2), line)))))
    return tuple(sorted(params))


def _split_types(text: str, line: int) -> list[str]:
    """``tensor(float), map(int64,tensor(float))`` as its types (commas inside parentheses kept)."""
    found, depth, start = [], 0, 0
    for at, char in enumerate(text):
        depth += (char == "(") - (char == ")")
        if depth < 0:
            raise DocumentError(line, f"unbalanced parentheses in {text!r}")
        if char == "," and depth == 0:
            found.append(text[start:at].strip())
            start = at + 1
    found.append(text[start:].strip())
    if depth or not all(found):
        raise DocumentError(line, f"unreadable type list {text!r}")
    return found


def registrations(rows: Iterable[DocumentRow]) -> list[Registration]:
    """The rows as registrations for :func:`~.kernel_extract.table_text` (one per row: the document
    has joined what the registry holds apart, so a row's types are the union of its kernels')."""
    return [Registration(row.domain, row.op, row.since, row.until, row.types) for row in rows]


def collapsed(entries: Iterable[tuple[str, str, int, int | None, Iterable[tuple[str, Iterable[str]]]]]
              ) -> dict[tuple[str, str, int, int | None], dict[str, frozenset[str]]]:
    """Kernels as the document shows them: per op and version range, each type parameter's types
    joined over every kernel of that range; a range whose kernels constrain nothing is left out."""
    rows: dict[tuple[str, str, int, int | None], dict[str, set[str]]] = {}
    for domain, op, since, until, types in entries:
        for name, allowed in types:
            rows.setdefault((domain, op, since, until), {}).setdefault(name, set()).update(allowed)
    return {key: {name: frozenset(found) for name, found in params.items()} for key, params in rows.items()}


@dataclass(frozen=True)
class CrossCheck:
    """The document's rows of one provider against a table's, collapsed alike."""

    agreeing: int
    only_in_document: tuple[tuple[str, str, int, int | None], ...]
    only_in_table: tuple[tuple[str, str, int, int | None], ...]
    #: Rows in both whose types differ: (key, parameter, types only in the document, types only in the table).
    differing: tuple[tuple[tuple[str, str, int, int | None], str, tuple[str, ...], tuple[str, ...]], ...]

    @property
    def agrees(self) -> bool:
        return not (self.only_in_document or self.only_in_table or self.differing)

    def lines(self) -> list[str]:
        """The cross-check as text: the counts, then every difference."""
        out = [f"rows agreeing: {self.agreeing}", f"rows only in the document: {len(self.only_in_document)}",
               f"rows only in the table: {len(self.only_in_table)}",
               f"rows in both with different types: {len({key for key, *_ in self.differing})}"]
        out += [f"  only in the document: {_shown(key)}" for key in self.only_in_document]
        out += [f"  only in the table: {_shown(key)}" for key in self.only_in_table]
        for key, param, extra, lacking in self.differing:
            out.append(f"  {_shown(key)} {param}: document adds [{', '.join(extra)}], lacks [{', '.join(lacking)}]")
        return out


def _shown(key: tuple[str, str, int, int | None]) -> str:
    domain, op, since, until = key
    return f"{domain} {op} [{since}, {'' if until is None else until}]" if until != since else f"{domain} {op} [{since}]"


def cross_check(document: Mapping[tuple[str, str, int, int | None], Mapping[str, frozenset[str]]],
                table: Mapping[tuple[str, str, int, int | None], Mapping[str, frozenset[str]]]) -> CrossCheck:
    """Compare two collapsed row sets (see :func:`collapsed`)."""
    order = lambda key: (key[0], key[1], key[2], -1 if key[3] is None else key[3])  # noqa: E731
    differing = []
    agreeing = 0
    for key in sorted(document.keys() & table.keys(), key=order):
        left, right = document[key], table[key]
        changes = [(key, param, tuple(sorted(left.get(param, frozenset()) - right.get(param, frozenset()))),
                    tuple(sorted(right.get(param, frozenset()) - left.get(param, frozenset()))))
                   for param in sorted(left.keys() | right.keys()) if left.get(param) != right.get(param)]
        differing += changes
        agreeing += not changes
    return CrossCheck(agreeing, tuple(sorted(document.keys() - table.keys(), key=order)),
                      tuple(sorted(table.keys() - document.keys(), key=order)), tuple(differing))


def table_rows(path: Path) -> dict[tuple[str, str, int, int | None], dict[str, frozenset[str]]]:
    """The kernels of a kernel table file, collapsed as the document shows them."""
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    return collapsed((item["domain"], item["op"], item["versions"][0], item["versions"][1], item["types"].items())
                     for item in document["kernels"])


def document_rows(rows: Iterable[DocumentRow]) -> dict[tuple[str, str, int, int | None], dict[str, frozenset[str]]]:
    return collapsed((row.domain, row.op, row.since, row.until, row.types) for row in rows)


def main(argv: list[str] | None = None) -> int:
    here = Path(__file__).resolve().parent.parent / "opdefs" / "onnxruntime" / "kernels"
    parser = argparse.ArgumentParser(description="cross-check onnxruntime's OperatorKernels.md against the CPU "
                                                 "table and write its other providers' tables when they agree")
    parser.add_argument("document", help="the OperatorKernels.md file")
    parser.add_argument("--tables", default=str(here), help="the kernel tables' folder (cpu.yaml is read from it)")
    parser.add_argument("--release", default="1.31.1", help="the onnxruntime release the document is said to be of")
    parser.add_argument("--commit", default="", help="the commit the document was read at")
    parser.add_argument("--write", action="store_true", help="write the other providers' tables (only on agreement)")
    args = parser.parse_args(argv)
    try:
        sections = parse_document(Path(args.document).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, DocumentError) as error:
        print(f"{args.document}: {error}", file=sys.stderr)
        return 2
    if "cpu" not in sections:
        print(f"{args.document}: no CPUExecutionProvider section to check the document by", file=sys.stderr)
        return 2
    tables = Path(args.tables)
    try:
        cpu = table_rows(tables / "cpu.yaml")
    except (OSError, UnicodeDecodeError, yaml.YAMLError, KeyError, TypeError, IndexError) as error:
        reason = " ".join(str(error).split())
        print(f"{tables / 'cpu.yaml'}: not a readable kernel table ({type(error).__name__}: {reason})", file=sys.stderr)
        return 2
    check = cross_check(document_rows(sections["cpu"]), cpu)
    print(f"{args.document}: sections {', '.join(f'{name} ({len(rows)} rows)' for name, rows in sections.items())}")
    print("CPU section against cpu.yaml:")
    print("\n".join(check.lines()))
    if not args.write:
        return 0 if check.agrees else 1
    if not check.agrees:
        print("not written: the CPU section does not agree with the wheel's table, so the document is not "
              f"onnxruntime {args.release}'s", file=sys.stderr)
        return 1
    at = f" at commit {args.commit}" if args.commit else ""
    for provider, rows in sections.items():
        if provider == "cpu":
            continue
        source = (f"onnxruntime {args.release} docs/OperatorKernels.md{at}; its CPU section agrees row for row "
                  f"with the {args.release} wheel's CPU table ({check.agreeing} rows)")
        write_atomically(tables / f"{provider}.yaml", table_text(provider, source, registrations(rows)).encode("utf-8"))
        print(f"wrote {tables / f'{provider}.yaml'}: {len(rows)} rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
