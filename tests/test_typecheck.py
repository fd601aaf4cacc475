"""The type check's view of the package (tests/typecheck.py): the layout it reads and the paths it reports."""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
import typecheck

REPO = Path(__file__).resolve().parent.parent


def _imported_from(name: str) -> Path:
    """The folder Python imports package ``name`` from (through the installed package, editable or not)."""
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.submodule_search_locations, name
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def test_the_link_tree_shows_each_package_where_python_imports_it_from(tmp_path):
    if _imported_from("opspec") != REPO / "opspec":
        pytest.skip("opspec is installed from a wheel here, not from these folders")
    links = typecheck.lay_out(tmp_path / "typing")
    folders = typecheck.package_folders()
    assert set(folders) >= {"opspec", "opspec.codegen", "opspec.runtime", "opspec.generated"}
    for name, folder in folders.items():
        place = tmp_path.joinpath("typing", *name.split("."))
        assert links[place] == REPO / folder
        assert _imported_from(name) == (REPO / folder).resolve(), name
        if name == "opspec":  # its own modules, beside the linked subpackages
            linked = {entry.name for entry in place.iterdir() if entry.is_symlink() and not entry.is_dir()}
            assert linked == {entry.name for entry in (REPO / folder).glob("*.py")} | {"py.typed"}
        else:
            assert place.resolve() == (REPO / folder).resolve(), name


def test_the_report_names_the_real_files(tmp_path):
    links = typecheck.lay_out(tmp_path / "typing")
    shown = os.path.relpath(tmp_path / "typing" / "opspec", REPO)
    report = (f"{shown}/codegen/load.py:3: error: one\n{shown}/cli.py:9: note: two\n"
              "tests/test_cli.py:1: error: three\nFound 2 errors in 2 files\n")
    assert typecheck.real_paths(report, links) == (
        "codegen/load.py:3: error: one\nopspec/cli.py:9: note: two\n"
        "tests/test_cli.py:1: error: three\nFound 2 errors in 2 files\n")


def test_laying_out_again_replaces_the_tree(tmp_path):
    tree = tmp_path / "typing"
    typecheck.lay_out(tree)
    (tree / "opspec" / "stale.py").write_text("")
    typecheck.lay_out(tree)
    assert not (tree / "opspec" / "stale.py").exists()
    assert (tree / "opspec" / "runtime" / "schema.py").is_file()
