"""Type-check every hand-written module with mypy, under the names the package installs them with.

On disk the package's parts are top-level folders (``codegen/``, ``runtime/``, ...) that
setup.py installs as ``opspec.codegen``, ``opspec.runtime``, ...; a static tool reading the
folders sees neither those names nor the imports between them. This script lays the installed
layout out as links under ``.build/typing/opspec/`` (each folder linked whole, so a new module is
seen without a new link), runs mypy with the settings of pyproject.toml's ``[tool.mypy]`` (which
reads that tree), and prints each finding with the path of the real file.

Run by ``make test`` (and alone: ``python tests/typecheck.py``); exits with mypy's status.
"""
from __future__ import annotations

import ast
import os
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TREE = REPO / ".build" / "typing"


def package_folders() -> dict[str, str]:
    """setup.py's ``ROOTS``: import name -> folder, read without running setup.py."""
    for statement in ast.parse((REPO / "setup.py").read_text()).body:
        if isinstance(statement, ast.Assign) and any(
                isinstance(target, ast.Name) and target.id == "ROOTS" for target in statement.targets):
            roots = ast.literal_eval(statement.value)
            assert isinstance(roots, dict)
            return {str(name): str(folder) for name, folder in roots.items()}
    raise SystemExit("setup.py has no ROOTS mapping")


def lay_out(tree: Path = TREE) -> dict[Path, Path]:
    """Link the installed layout under ``tree``; return each link folder -> the real folder."""
    shutil.rmtree(tree, ignore_errors=True)
    links: dict[Path, Path] = {}
    for name, folder in package_folders().items():
        place = tree.joinpath(*name.split("."))
        source = REPO / folder
        if name.count(".") == 0:  # the top package: its own files, beside the linked subpackages
            place.mkdir(parents=True)
            for entry in sorted(source.iterdir()):
                if entry.suffix in (".py", ".pyi", ".typed"):
                    (place / entry.name).symlink_to(os.path.relpath(entry, place))
        else:
            place.parent.mkdir(parents=True, exist_ok=True)
            place.symlink_to(os.path.relpath(source, place.parent), target_is_directory=True)
        links[place] = source
    return links


def real_paths(report: str, links: dict[Path, Path]) -> str:
    """mypy's report with each path in the link tree replaced by the real file's path."""
    prefixes = sorted(((os.path.relpath(place, REPO) + os.sep, os.path.relpath(source, REPO) + os.sep)
                       for place, source in links.items()), key=lambda pair: -len(pair[0]))
    lines = []
    for line in report.splitlines(keepends=True):
        for linked, real in prefixes:
            if line.startswith(linked):
                line = real + line[len(linked):]
                break
        lines.append(line)
    return "".join(lines)


def main() -> int:
    try:
        from mypy import api  # a development dependency: imported only when the check runs
    except ImportError:
        print("mypy is not installed: install the 'dev' extra (make generate does)", file=sys.stderr)
        return 2

    links = lay_out()
    os.chdir(REPO)
    out, err, status = api.run(sys.argv[1:])
    sys.stdout.write(real_paths(out, links))
    sys.stderr.write(real_paths(err, links))
    return status


if __name__ == "__main__":
    sys.exit(main())
