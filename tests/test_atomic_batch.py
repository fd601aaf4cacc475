"""A batch of atomic writes: names of temporary files, permissions, failures, and generation
telling changed files from unchanged ones by one look at each target."""
from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

import opspec.runtime.atomic_file as atomic_file
from opspec.codegen.generate import generate
from opspec.runtime.atomic_file import write_all_atomically
from test_opdefs_errors import OP  # noqa: E402 - one test op for all opdefs tests
from test_safety_opdefs import _op, _tree


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_a_temporary_name_already_taken_is_passed_over(tmp_path, monkeypatch):
    monkeypatch.setattr(atomic_file, "_NUMBERS", itertools.count(5))
    taken = tmp_path / f".t.bin.{os.getpid()}.5.tmp"
    taken.write_bytes(b"someone else's")
    write_all_atomically({tmp_path / "t.bin": b"new"})
    assert (tmp_path / "t.bin").read_bytes() == b"new" and taken.read_bytes() == b"someone else's"
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(["t.bin", taken.name])


def test_permissions_are_kept_or_those_of_a_new_file(tmp_path):
    kept, fresh = tmp_path / "kept.txt", tmp_path / "fresh.txt"
    kept.write_bytes(b"old")
    os.chmod(kept, 0o640)
    write_all_atomically({kept: b"a", fresh: b"b"}, {kept: os.lstat(kept), fresh: None})
    assert (kept.stat().st_mode & 0o777) == 0o640 and kept.read_bytes() == b"a"
    assert (fresh.stat().st_mode & 0o777) == 0o666 & ~_umask() and fresh.read_bytes() == b"b"
    write_all_atomically({kept: b"c"})  # not told: it looks for itself
    assert (kept.stat().st_mode & 0o777) == 0o640 and kept.read_bytes() == b"c"


def test_one_failing_target_leaves_every_target_and_no_temporary_file(tmp_path):
    first = tmp_path / "a.txt"
    first.write_bytes(b"old")
    with pytest.raises(OSError):
        write_all_atomically({first: b"new", tmp_path / "b.txt": b"new", tmp_path / "missing" / "c.txt": b"new"})
    assert first.read_bytes() == b"old" and sorted(path.name for path in tmp_path.iterdir()) == ["a.txt"]


def test_a_generated_file_changed_in_place_is_rewritten_with_its_permissions(tmp_path):
    opdefs = _tree(tmp_path, _op(OP))
    out = tmp_path / "out"
    written = generate(opdefs, out, with_protos=False).written
    target = out / next(path for path in written if path.endswith(".md"))
    good = target.read_bytes()
    target.write_bytes(good[:-1] + (b"?" if good[-1:] != b"?" else b"!"))  # same size, other bytes
    os.chmod(target, 0o600)
    again = generate(opdefs, out, with_protos=False)
    assert again.written == [target.relative_to(out).as_posix()]
    assert target.read_bytes() == good and (target.stat().st_mode & 0o777) == 0o600
    assert generate(opdefs, out, with_protos=False).written == []



@pytest.mark.parametrize("one_sync_waits", [True, False])
def test_a_batch_reaches_the_disk_before_its_renames_and_then_its_renames(tmp_path, monkeypatch, one_sync_waits):
    steps: list[str] = []
    monkeypatch.setattr(atomic_file, "_SYNC_WAITS", one_sync_waits)
    monkeypatch.setattr(atomic_file.os, "sync", lambda: steps.append("sync"), raising=False)
    monkeypatch.setattr(atomic_file, "_sync_folder", lambda folder: steps.append(f"sync {Path(folder).name}"))
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(descriptor: int) -> None:
        steps.append("fsync")
        real_fsync(descriptor)

    def replace(source: str, target: str) -> None:
        steps.append(f"rename {Path(target).name}")
        real_replace(source, target)

    monkeypatch.setattr(atomic_file.os, "fsync", fsync)
    monkeypatch.setattr(atomic_file.os, "replace", replace)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    write_all_atomically({tmp_path / "a" / "1": b"1", tmp_path / "b" / "2": b"2", tmp_path / "a" / "3": b"3"})
    renames = ["rename 1", "rename 2", "rename 3"]
    if one_sync_waits:  # one sync for the data, one for the renames: no look at each file or folder
        assert steps == ["sync", *renames, "sync"]
    else:
        assert steps == ["fsync"] * 3 + renames + ["sync a", "sync b"]
    assert [(tmp_path / name).read_bytes() for name in ("a/1", "b/2", "a/3")] == [b"1", b"2", b"3"]
