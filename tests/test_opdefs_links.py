"""Symbolic links in an opdefs tree: one policy for files and folders alike.

A link that leads outside the tree is refused with a located error (and what it points at
is never read); a link inside the tree is followed, and each real file and folder counts once.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from opspec.codegen.diagnostics import CompileError
from opspec.codegen.generate import generate
from test_opdefs_errors import DOMAIN, FILE, OP  # noqa: E402 - one test op for all opdefs tests

OUTSIDE = "symbolic link leads outside the opdefs tree"


def _tree(root: Path) -> Path:
    for relative, text in {"opdefs/x.test/domain.yaml": DOMAIN, FILE: OP}.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    outside = root / "elsewhere"
    (outside / "fam").mkdir(parents=True)
    (outside / "fam" / "Foo.yaml").write_text("not: [an op", encoding="utf-8")  # would be a syntax error if read
    (outside / "domain.yaml").write_text(DOMAIN.replace("x.test", "y.test"), encoding="utf-8")
    return root / "opdefs"


def _errors(opdefs: Path) -> list[str]:
    with pytest.raises(CompileError) as raised:
        generate(opdefs, opdefs.parent / "out")
    return [f"{d.location.path}:{d.location.line}:{d.location.column}: {d.message}" for d in raised.value.diagnostics]


@pytest.mark.parametrize("link, target", [
    ("x.test/f/Bar.yaml", "elsewhere/fam/Foo.yaml"),   # a file
    ("x.test/g", "elsewhere/fam"),                       # a family folder
    ("y.test", "elsewhere"),                             # a domain folder
    ("types.yaml", "elsewhere/fam/Foo.yaml"),            # the type sets
    ("x.test/f/Up.yaml", "/etc/passwd"),                 # an absolute link
], ids=["file", "family-folder", "domain-folder", "types", "absolute"])
def test_a_link_out_of_the_tree_is_a_located_error(tmp_path, link, target):
    opdefs = _tree(tmp_path)
    (opdefs / link).symlink_to(target if target.startswith("/") else tmp_path / target)
    errors = _errors(opdefs)
    assert errors and all(error.startswith(f"opdefs/{link}:1:1: {OUTSIDE}") for error in errors), errors


def test_links_inside_the_tree_are_followed_once(tmp_path):
    opdefs = _tree(tmp_path)
    family = opdefs / FILE[len("opdefs/"):]
    (family.parent.parent / "alias").symlink_to(family.parent)       # a second name for the family folder
    (family.parent / "back").symlink_to(family.parent.parent)        # a loop back to the domain folder
    (family.parent / "Self.yaml").symlink_to("Self.yaml")             # reported by the reader, not followed
    errors = _errors(opdefs)
    assert len(errors) == 1 and "Self.yaml" in errors[0] and "symbolic links" in errors[0], errors
    (family.parent / "Self.yaml").unlink()
    result = generate(opdefs, tmp_path / "out")
    assert result.op_count == 1 and result.domains[0].ops[0].decl.path == FILE


def test_a_file_linked_from_another_family_is_read_once(tmp_path):
    opdefs = _tree(tmp_path)
    other = opdefs / "x.test" / "other"
    other.mkdir()
    (other / "Foo.yaml").symlink_to(opdefs.parent / FILE)
    result = generate(opdefs, tmp_path / "out")
    assert result.op_count == 1 and result.domains[0].ops[0].decl.path == FILE


def test_plain_files_are_placed_by_their_folder_not_resolved_one_by_one(tmp_path, monkeypatch):
    from opspec.codegen import tree_walk

    for index in range(30):
        (tmp_path / f"Op{index}.yaml").write_text("", encoding="utf-8")
    (tmp_path / "Alias.yaml").symlink_to(tmp_path / "Op0.yaml")
    resolved: list[Path] = []
    resolve = Path.resolve

    def counted(self: Path, strict: bool = False) -> Path:
        resolved.append(self)
        return resolve(self, strict)

    monkeypatch.setattr(Path, "resolve", counted)
    files, escapes = tree_walk.files_under(tmp_path, ".yaml", resolve(tmp_path))
    assert [os.path.basename(path) for path in files] == sorted(f"Op{index}.yaml" for index in range(30)) and not escapes
    assert len(resolved) <= 3  # the folder, and the link (to check where it leads and what it is)
