"""``opspec generate``: compile an opdefs tree and write (or check) its registry package."""
from __future__ import annotations

import importlib
import json
import keyword
import os
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from opspec.codegen.compiler import CompiledDomain, Outcome, compile_trees, print_warning
from opspec.codegen.parallel import collector_paused
from opspec.codegen.diagnostics import CompileError, Diagnostic, Diagnostics
from opspec.codegen.kernel_pages import PROVIDER_PAGE, KernelIndex, provider_pages
from opspec.codegen.kernel_tables import kernel_jobs, layer_tables
from opspec.codegen.load import LAYER_FILE, layered_trees
from opspec.codegen.shown_paths import Namer
from opspec.codegen.source import Location
from opspec.codegen.examples import runtime_ready
from opspec.codegen.staging import OutputError, Stage, written_by_us
from opspec.codegen.vocabulary import builtin_domains, extension_problems, is_builtin

if TYPE_CHECKING:
    from opspec.codegen.render import Job

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OPDEFS = REPO / "opdefs"
DEFAULT_OUT = REPO / "generated"
#: Whether this is a source checkout (the built-in registry may be regenerated in place)
#: rather than an installed package, whose files belong to the installer.
SOURCE_CHECKOUT = (REPO / "pyproject.toml").is_file()
#: The node-suite outcomes committed with the tests; the built-in tree's status page shows them.
SUITE_RESULTS = REPO / "tests" / "conformance" / "expected.json"
#: Files in an output folder that generation owns carry this mark near the top; stale
#: ones (an op or a domain that no longer exists) are removed.
_OWNED_SUFFIXES = (".py", ".pyi", ".md", ".svg")


@dataclass(frozen=True)
class Built:
    """A compiled tree: its domains, the domains of each op set layered over it, every output file."""

    domains: tuple[CompiledDomain, ...]
    layers: dict[str, tuple[CompiledDomain, ...]]
    files: dict[str, bytes]


@dataclass
class Result:
    """What a generation run produced (``paths``: every output file, in order)."""

    domains: tuple[CompiledDomain, ...]
    paths: tuple[str, ...]
    seconds: float
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    #: The domains of each op set layered over the tree, by its name.
    layers: dict[str, tuple[CompiledDomain, ...]] = field(default_factory=dict)

    @property
    def op_count(self) -> int:
        return sum(len(domain.ops) for domain in self.domains)

    @property
    def schema_count(self) -> int:
        return sum(domain.schema_count for domain in self.domains)


def build(opdefs: Path, with_protos: bool, out: Path = DEFAULT_OUT) -> Built:
    """Compile ``opdefs`` and render every output file (the IR protos too, if asked).

    Each op set layered over the tree (a folder with a ``layer.yaml``) is compiled too and
    rendered into the subfolder of ``out`` named like it.
    """
    domains, layers, jobs = _planned(opdefs, out)
    from opspec.codegen.render import run_jobs

    files = {path: text.encode("utf-8") for path, text in run_jobs(jobs).items()}
    files.update(_protos(with_protos))
    return Built(domains, layers, files)


def _planned(opdefs: Path, out: Path, meanwhile: Callable[[], None] | None = None,
             warn: Callable[[Diagnostic], None] = print_warning) -> tuple[tuple[CompiledDomain, ...], dict[str, tuple[CompiledDomain, ...]], list[Job]]:
    """The compiled tree, its layered op sets, and the jobs that render every output file but the protos.
    What rendering needs and compiling does not (its modules, and ``meanwhile``) is done by this
    process while the others start compiling. Every error of the tree and of its layered op sets is
    raised together; warnings go to ``warn``."""
    folders = layered_trees(opdefs) if opdefs.is_dir() else []
    named = [folder for folder in folders if _layer_name_problem(folder) is None]

    def prepare() -> None:
        importlib.import_module("opspec.codegen.render")
        if meanwhile is not None:
            meanwhile()

    # the tree and its layered op sets are compiled in one pass; the errors of all of them are raised together
    outcomes = dict(zip([opdefs, *named], compile_trees([opdefs, *named], prepare)))
    errors = Diagnostics()
    for diagnostic in [*outcomes[opdefs].errors, *(diagnostic for folder in folders
                                                   for diagnostic in _layer_errors(folder, outcomes))]:
        errors.error(diagnostic.location, diagnostic.message)
    if errors:
        raise CompileError(errors.sorted())
    domains = outcomes[opdefs].domains_or_raise(warn)
    if not is_builtin(opdefs) and (problems := extension_problems(
            tuple(domain.decl for domain in domains), builtin_domains(), "the built-in op set", claims=False)):
        raise CompileError(problems)
    layers = {folder.name: outcomes[folder].domains_or_raise(warn) for folder in folders}
    if problems := [problem for folder in folders for problem in _layer_problems(folder, layers[folder.name], domains)]:
        raise CompileError(problems)
    tables = {name: layer_tables(opdefs / name, _shown(opdefs / name)) for name in layers}
    index = KernelIndex(tuple(table for found in tables.values() for table in found)) if any(tables.values()) else None
    jobs = _render_jobs(opdefs, domains, out, _suite(opdefs), tuple(layers), kernels=index)
    for name, layer_domains in layers.items():  # the tree's files and its layers' are rendered in one pass
        jobs += _render_jobs(opdefs / name, layer_domains, out / name, None, (), f"{name}/", kernels=index,
                             provider_pages=tuple(PROVIDER_PAGE.format(provider=table.provider) for table in tables[name]))
        pages = partial(provider_pages, KernelIndex(tables[name]), (*domains, *layer_domains))
        jobs += kernel_jobs(tables[name], _shown(opdefs / name), f"{name}/", pages)
    return domains, layers, jobs


def _protos(wanted: bool) -> dict[str, bytes]:
    """The IR module's files, if ``wanted``."""
    if not wanted:
        return {}
    from opspec.codegen.protos import compile_protos

    return compile_protos()


def _render_jobs(opdefs: Path, domains: tuple[CompiledDomain, ...], out: Path, suite: dict[str, str] | None,
                 layers: tuple[str, ...], prefix: str = "", kernels: KernelIndex | None = None,
                 provider_pages: tuple[str, ...] = ()) -> list[Job]:
    """The jobs rendering the package of ``opdefs`` into ``out`` (paths preceded by ``prefix``)."""
    folders = (opdefs, opdefs.parent) if (opdefs / LAYER_FILE).is_file() else (opdefs,)  # a layer: its base's guide
    guide = next((folder / "README.md" for folder in folders if (folder / "README.md").is_file()), None)
    link = Path(os.path.relpath(guide.resolve(), (out / "docs").resolve())).as_posix() if guide else None
    from opspec.codegen.render import package_jobs

    return package_jobs(domains, f"{_shown(opdefs)}/", link, suite, layers, prefix, kernels, provider_pages)


def _layer_name_problem(folder: Path) -> CompileError | None:
    if folder.name.isidentifier() and not keyword.iskeyword(folder.name):
        return None
    return CompileError([Diagnostic(Location(Namer(folder)(folder / LAYER_FILE), 1, 1),
                                    f"a layered op set's folder name must be a Python identifier, not {folder.name!r}")])


def _layer_errors(folder: Path, outcomes: dict[Path, Outcome]) -> tuple[Diagnostic, ...]:
    """A layered op set's errors: its folder's name, else its compilation's."""
    problem = _layer_name_problem(folder)
    return tuple(problem.diagnostics) if problem is not None else outcomes[folder].errors


def _shown(tree: Path) -> str:
    """A tree's folder as its own locations name it (``opdefs``, ``opdefs/onnxruntime``)."""
    return Namer(tree)(tree)


def _layer_problems(folder: Path, domains: tuple[CompiledDomain, ...], base: tuple[CompiledDomain, ...]
                    ) -> list[Diagnostic]:
    """The problems of a layered op set's domains: those that extend one of ``base`` must match it."""
    targets = {spelling: domain.decl for domain in base
               for spelling in (domain.decl.name, domain.decl.node_domain, *domain.decl.aliases)}
    return extension_problems(tuple(domain.decl for domain in domains), targets, Namer(folder)(folder.parent))


def _suite(opdefs: Path) -> dict[str, str] | None:
    """The committed node-suite outcomes, for the built-in tree when they are present."""
    if opdefs.resolve() != DEFAULT_OPDEFS.resolve() or not SUITE_RESULTS.is_file():
        return None
    try:
        results = json.loads(SUITE_RESULTS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return {str(case): str(outcome) for case, outcome in results.items()} if isinstance(results, dict) else None


def _owned(out: Path) -> list[str]:
    """Files under ``out`` that generation wrote: they say so in their first lines."""
    found: list[str] = []
    if not out.is_dir():
        return found
    for path in sorted(out.rglob("*")):
        if path.suffix in _OWNED_SUFFIXES and "__pycache__" not in path.parts and path.is_file() \
                and not path.is_symlink() and written_by_us(path):
            found.append(path.relative_to(out).as_posix())
    return found


def generate(opdefs: Path = DEFAULT_OPDEFS, out: Path = DEFAULT_OUT, check: bool = False,
             with_protos: bool | None = None, force: bool = False,
             warn: Callable[[Diagnostic], None] = print_warning) -> Result:
    """Compile and write ``out`` (or, with ``check``, only report what is stale).

    Raises :class:`OutputError`, before writing anything, when a file would land outside
    ``out`` or would replace a file that generation did not write (unless ``force``). The trees'
    warnings go to ``warn``.
    """
    with collector_paused():
        return _generate(opdefs, out, check, with_protos, force, warn)


def _generate(opdefs: Path, out: Path, check: bool, with_protos: bool | None, force: bool,
              warn: Callable[[Diagnostic], None]) -> Result:
    started = time.perf_counter()
    protos = with_protos if with_protos is not None else out.resolve() == DEFAULT_OUT
    readiness: list[bool] = []
    domains, layers, jobs = _planned(opdefs, out, lambda: readiness.append(runtime_ready()), warn)
    ready = readiness[0]
    owned = _owned(out)
    stage = Stage(out, check, force)
    placed = stage.run(jobs)
    try:
        for path, data in _protos(protos).items():
            placed.append(stage.place(path, data))
        paths = tuple(item.path for item in placed)
        result = Result(domains, paths, 0.0, layers=layers, written=stage.commit(placed))
    except BaseException:
        stage.undo(placed)
        raise
    if check:
        result.stale, result.written = result.written, []
    produced = set(paths)
    for path in (path for path in owned if path not in produced):
        if check:
            result.stale.append(path)
        else:
            (out / path).unlink()
            result.removed.append(path)
    result.seconds = time.perf_counter() - started
    if not ready and not check and runtime_ready():  # this run wrote the runtime: now add the examples
        again = _generate(opdefs, out, check, with_protos, False, lambda warning: None)  # warned once already
        again.written = sorted(set(result.written) | set(again.written))
        again.removed = result.removed
        again.seconds += result.seconds
        return again
    return result
