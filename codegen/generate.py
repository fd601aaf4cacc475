"""``opspec generate``: compile an opdefs tree and write (or check) its registry package."""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from opspec.codegen.compiler import CompiledDomain, compile_tree
from opspec.codegen.render import render_package

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OPDEFS = REPO / "opdefs"
DEFAULT_OUT = REPO / "generated"
#: Files in an output folder that generation owns: stale ones are removed.
_OWNED_SUFFIXES = (".py", ".md")


@dataclass
class Result:
    """What a generation run produced."""

    domains: tuple[CompiledDomain, ...]
    files: dict[str, bytes]
    seconds: float
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)

    @property
    def op_count(self) -> int:
        return sum(len(domain.ops) for domain in self.domains)

    @property
    def schema_count(self) -> int:
        return sum(domain.schema_count for domain in self.domains)


def _display(path: Path) -> str:
    try:
        return path.resolve().relative_to(REPO).as_posix()
    except ValueError:
        return str(path)


def build(opdefs: Path, with_protos: bool, out: Path = DEFAULT_OUT) -> tuple[tuple[CompiledDomain, ...], dict[str, bytes]]:
    """Compile ``opdefs`` and render every output file (the IR protos too, if asked)."""
    domains = compile_tree(opdefs)
    guide = opdefs / "README.md"
    link = Path(os.path.relpath(guide.resolve(), (out / "docs").resolve())).as_posix() if guide.is_file() else None
    rendered = render_package(domains, f"{_display(opdefs)}/", link)
    files = {path: text.encode("utf-8") for path, text in rendered.items()}
    if with_protos:
        from opspec.codegen.protos import compile_protos

        files.update(compile_protos())
    return domains, files


def _owned(out: Path, files: dict[str, bytes]) -> list[str]:
    """Files under ``out`` that a previous run may have written: domain packages and docs."""
    roots = {path.split("/", 1)[0] for path in files if "/" in path}
    found = []
    for root in sorted(roots):
        for path in sorted((out / root).rglob("*")):
            if path.is_file() and path.suffix in _OWNED_SUFFIXES and "__pycache__" not in path.parts:
                found.append(path.relative_to(out).as_posix())
    return found


def generate(opdefs: Path = DEFAULT_OPDEFS, out: Path = DEFAULT_OUT, check: bool = False,
             with_protos: bool | None = None) -> Result:
    """Compile and write ``out`` (or, with ``check``, only report what is stale)."""
    started = time.perf_counter()
    protos = with_protos if with_protos is not None else out.resolve() == DEFAULT_OUT
    domains, files = build(opdefs, protos, out)
    result = Result(domains, files, 0.0)
    extra = [path for path in _owned(out, files) if path not in files]
    for path, content in sorted(files.items()):
        target = out / path
        if target.is_file() and target.read_bytes() == content:
            continue
        if check:
            result.stale.append(path)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
            result.written.append(path)
    for path in extra:
        if check:
            result.stale.append(path)
        else:
            (out / path).unlink()
            result.removed.append(path)
    result.seconds = time.perf_counter() - started
    return result
