"""``opspec init`` and ``opspec new-op``: a new op-set tree, and a new operator in one.

``init`` writes a tree that generates and passes its own tests at once: the domain file,
one example operator (it names a built-in type set and a rule of the tree's own), the
rule module, pytest tests with a ``conftest.py`` that compiles and registers the set, a
README, and a copy of the format's JSON Schemas that the YAML files name. ``new-op`` adds an operator's YAML (a stub with TODO descriptions, a built-in type
set and rule) and its test. Nothing existing is ever replaced: a file in the way stops
the command before anything is written.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import jinja2

from opspec.codegen.load import DOMAIN_FILE, SKIPPED_FOLDERS
from opspec.codegen.names import IDENTIFIER, domain_folder_problem, is_identifier
from opspec.codegen.render import module_name
from opspec.codegen.schema_paths import KINDS, SCHEMA_FOLDER, modeline, schema_file

TEMPLATES = Path(__file__).resolve().parent / "templates" / "scaffold"
OPDEFS, TESTS = "opdefs", "tests"
EXAMPLE_FAMILY, DEFAULT_FAMILY = "example", "ops"
RULES_MODULE = "tile_last_axis.py"


class ScaffoldError(Exception):
    """A name that does not fit the format, a tree that is not there, or files in the way."""


@dataclass(frozen=True)
class _Planned:
    path: Path
    template: str | None  # None: a copy of ``source``
    kind: str | None = None  # the opdefs kind whose modeline the file starts with
    source: Path | None = None


def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=False,
                              keep_trailing_newline=True, undefined=jinja2.StrictUndefined)


def _write(planned: list[_Planned], values: dict[str, str]) -> list[Path]:
    """Render and write every planned file, or none when one is already there."""
    in_the_way = [str(item.path) for item in planned if item.path.exists() or item.path.is_symlink()]
    if in_the_way:
        raise ScaffoldError(f"refusing to replace {', '.join(in_the_way)}: nothing was written")
    env = _environment()
    for item in planned:  # in order: a modeline names a schema copied before it
        item.path.parent.mkdir(parents=True, exist_ok=True)
        if item.source is not None:
            item.path.write_bytes(item.source.read_bytes())
            continue
        assert item.template is not None
        text = env.get_template(item.template).render(
            **values, modeline=modeline(item.kind, item.path) if item.kind else "")
        item.path.write_text(text, encoding="utf-8")
    return [item.path for item in planned]


def init_tree(folder: Path, domain: str) -> list[Path]:
    """A new op-set tree in ``folder`` (new or empty) for ``domain``; the files written."""
    if problem := domain_folder_problem(domain):
        raise ScaffoldError(f"--domain {domain!r}: {problem}")
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise ScaffoldError(f"{folder} exists and is not an empty folder: nothing was written")
    opdefs, tests = folder / OPDEFS, folder / TESTS
    # the tree's own copy of the schemas: its files' modelines name them by a path inside the tree,
    # which holds wherever the tree is moved and whichever environment opspec is installed in
    planned = [_Planned(opdefs / SCHEMA_FOLDER / f"{kind}.schema.json", None, source=schema_file(kind))
               for kind in KINDS]
    planned += [
        _Planned(opdefs / domain / DOMAIN_FILE, "domain.yaml.j2", "domain"),
        _Planned(opdefs / domain / EXAMPLE_FAMILY / "TileLastAxis.yaml", "TileLastAxis.yaml.j2", "op"),
        _Planned(opdefs / "rules" / RULES_MODULE, "rules.py.j2"),
        _Planned(tests / "conftest.py", "conftest.py.j2"),
        _Planned(tests / "test_tile_last_axis.py", "test_rules.py.j2"),
        _Planned(folder / "README.md", "README.md.j2"),
    ]
    return _write(planned, {"domain": domain, "package": module_name(domain), "rules_module": RULES_MODULE,
                            "tree": str(folder)})


def snake_case(name: str) -> str:
    """``MyOp`` -> ``my_op``: the name of an op's test."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def _domains(opdefs: Path) -> list[str]:
    return sorted(p.name for p in opdefs.iterdir()
                  if p.is_dir() and p.name not in SKIPPED_FOLDERS and (p / DOMAIN_FILE).is_file())


def new_op(folder: Path, op: str, domain: str | None = None, family: str = DEFAULT_FAMILY) -> list[Path]:
    """Add operator ``op`` (YAML stub and test) to the tree in ``folder``; the files written."""
    if not is_identifier(op):
        raise ScaffoldError(f"op name {op!r} must be {IDENTIFIER.pattern} (ASCII letters, digits and '_')")
    if not IDENTIFIER.fullmatch(family):
        raise ScaffoldError(f"--family {family!r} must be an identifier")
    opdefs = folder / OPDEFS
    if not opdefs.is_dir():
        raise ScaffoldError(f"{folder} has no {OPDEFS}/ folder (make one with `opspec init`)")
    known = _domains(opdefs)
    if domain is None:
        if len(known) != 1:
            raise ScaffoldError(f"{opdefs} has {len(known)} domains ({', '.join(known) or 'none'}): pass --domain")
        domain = known[0]
    elif domain not in known:
        raise ScaffoldError(f"{opdefs} has no domain {domain!r} (it has {', '.join(known) or 'none'})")
    existing = sorted((opdefs / domain).rglob(f"{op}.yaml"))
    if existing:
        raise ScaffoldError(f"{existing[0]} exists: nothing was written")
    planned = [_Planned(opdefs / domain / family / f"{op}.yaml", "op.yaml.j2", "op"),
               _Planned(folder / TESTS / f"test_{snake_case(op)}.py", "test_op.py.j2")]
    return _write(planned, {"op": op, "domain": domain, "test_name": snake_case(op)})


__all__ = ["ScaffoldError", "init_tree", "new_op", "snake_case"]
