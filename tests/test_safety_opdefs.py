"""Hostile or broken opdefs trees: one located error each, in bounded time; nothing runs or escapes."""
from __future__ import annotations

import ast
import json
import os
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

from opspec.cli import main
from opspec.codegen.generate import DEFAULT_OUT, OutputError
from opspec.codegen.staging import _inside

from test_opdefs_errors import DOMAIN, FILE, OP  # noqa: E402 - one test op for all opdefs tests
INJECTED = 'x"""; __import__("os").system("touch SENTINEL"); """'


@pytest.fixture(autouse=True)
def _run_beside_the_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's tree lies in the folder it runs in: its paths print relative to it."""
    monkeypatch.chdir(tmp_path)


def _tree(root: Path, files: Mapping[str, str | bytes]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return root / "opdefs"


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(args)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out and "internal error" not in captured.err
    return code, captured.err.splitlines()


def _errors(tmp_path: Path, files: Mapping[str, str | bytes], capsys) -> list[str]:
    opdefs = _tree(tmp_path, files)
    code, lines = _run(["generate", "--opdefs", str(opdefs), "--out", str(tmp_path / "out")], capsys)
    assert code == 1 and not (tmp_path / "out").exists()
    return lines[:-1]


def _op(text: str | bytes) -> Mapping[str, str | bytes]:
    return {"opdefs/x.test/domain.yaml": DOMAIN, FILE: text}


BILLION_LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(8))

# (name, files, expected error lines)
CASES = [
    ("code in a domain name", {"opdefs/x.test/domain.yaml": DOMAIN.replace("x.test", repr(INJECTED)),
                                FILE: OP},
     [f"opdefs/x.test/domain.yaml:1:9: error: invalid domain name {INJECTED!r}: expected a domain name "
      "(dot-separated ASCII words, such as 'ai.onnx.ml' or 'com.example')"]),
    ("domain escaping the output", {"opdefs/x.test/domain.yaml": DOMAIN.replace("x.test", '"../../x"'), FILE: OP},
     ["opdefs/x.test/domain.yaml:1:9: error: invalid domain name '../../x': expected a domain name "
      "(dot-separated ASCII words, such as 'ai.onnx.ml' or 'com.example')"]),
    ("code in a family folder", {"opdefs/x.test/domain.yaml": DOMAIN, f'opdefs/x.test/{INJECTED}/Foo.yaml': OP},
     [f"opdefs/x.test/{INJECTED}/Foo.yaml:1:1: error: invalid family folder name {INJECTED!r}: "
      "expected '/'-separated ASCII words (letters, digits, '_', '-', '.')"]),
    ("50,000 brackets", _op("op: [" + "[" * 50000 + "]" * 50001 + "\n"),
     [f"{FILE}:1:68: error: nesting deeper than 64 levels"]),
    ("400 nested levels", _op("op:\n" + "".join(" " * i + "-\n" for i in range(1, 400))),
     [f"{FILE}:65:65: error: nesting deeper than 64 levels"]),
    ("self-referencing alias", _op(OP + "docs: &r [*r]\n"), [f"{FILE}:14:7: error: YAML anchors and aliases are not supported"]),
    ("billion laughs", _op(BILLION_LAUGHS), [f"{FILE}:1:4: error: YAML anchors and aliases are not supported"]),
    ("bare string file", _op("just words\n"), [f"{FILE}:1:1: error: expected a mapping at the top of the file, found a str scalar"]),
    ("bad encoding", _op(b"op: Foo\nsummary: caf\xe9\n"), [f"{FILE}:2:13: error: the file is not valid UTF-8"]),
    ("huge integer", _op(OP.replace("  1:\n", "  1" + "0" * 5000 + ":\n")),
     [f"{FILE}:4:3: error: cannot read '10000000000000000000'... as int"]),
    ("control character", _op(OP.replace("A test op.", "A \x07 op.")),
     [f"{FILE}:2:12: error: YAML error: special characters are not allowed"]),
    ("inverted opset range", {"opdefs/x.test/domain.yaml": DOMAIN.replace("min: 1, max: 5", "min: 9, max: 2"),
                              FILE: OP, "opdefs/x.test/f/Bar.yaml": OP.replace("Foo", "Bar")},
     ["opdefs/x.test/domain.yaml:2:8: error: opset range is inverted: min 9 is above max 2"]),
    ("bidi override in an attribute", _op(OP.replace("axis:", "ax\u202eis:")),
     [f"{FILE}:10:7: error: invalid attribute name 'ax\\u202eis': expected an identifier (ASCII letters, "
      "digits and '_', not starting with a digit)"]),
    ("zero-width space in an input", _op(OP.replace("X: T", "X\u200b: T")),
     [f"{FILE}:6:7: error: invalid input name 'X\\u200b': expected an identifier (ASCII letters, digits and "
      "'_', not starting with a digit)"]),
    ("newline in a type parameter", _op(OP.replace("T: [tensor(float)]", '"T\\n": [tensor(float)]')),
     [f"{FILE}:12:7: error: invalid type parameter name 'T\\n': expected an identifier (ASCII letters, digits "
      "and '_', not starting with a digit)"]),
]


@pytest.mark.parametrize("name, files, expected", CASES, ids=[case[0] for case in CASES])
def test_hostile_tree_gets_located_errors(tmp_path, capsys, name, files, expected):
    started = time.perf_counter()
    assert _errors(tmp_path, files, capsys) == expected
    assert time.perf_counter() - started < 5
    assert not list(tmp_path.rglob("SENTINEL")) and not Path("SENTINEL").exists()


def test_op_name_with_a_newline_is_refused(tmp_path, capsys):
    lines = _errors(tmp_path, _op(OP.replace("op: Foo", 'op: "Foo\\n"')), capsys)
    assert lines and all(line.startswith(f"{FILE}:1:5: error: ") for line in lines)
    assert any("invalid op name 'Foo\\n'" in line for line in lines)


def test_special_files_are_refused_without_blocking(tmp_path, capsys):
    files = _op(OP)
    opdefs = _tree(tmp_path, files)
    os.mkfifo(opdefs / "x.test/f/Bar.yaml")
    (opdefs / "x.test/f/Loop.yaml").symlink_to("Loop.yaml")
    (opdefs / "x.test/f/Dir.yaml").mkdir()
    (opdefs / "types.yaml").mkdir()
    (opdefs / "__pycache__").mkdir()
    (opdefs / ".git").mkdir()
    code, lines = _run(["generate", "--opdefs", str(opdefs), "--out", str(tmp_path / "out")], capsys)
    assert code == 1
    assert [line.split(": error: ")[0] for line in lines[:-1]] == [
        "opdefs/types.yaml:1:1", "opdefs/x.test/f/Bar.yaml:1:1", "opdefs/x.test/f/Dir.yaml:1:1",
        "opdefs/x.test/f/Loop.yaml:1:1"]
    assert "not a regular file (a FIFO)" in lines[1] and "(a directory)" in lines[2]
    assert "symbolic links" in lines[3]


def test_two_broken_files_sort_and_twenty_thousand_errors_are_fast(tmp_path, capsys):
    keys = "".join(f"k{i}: 1\n" for i in range(20000))
    files = {**_op(OP + keys), "opdefs/x.test/f/A.yaml": "a\n", "opdefs/x.test/f/B.yaml": "- b\n"}
    started = time.perf_counter()
    lines = _errors(tmp_path, files, capsys)
    assert time.perf_counter() - started < 10
    assert len(lines) == 2 + 50 + 1  # A, B, then the first 50 of the op file and one line for the rest
    assert lines[0].startswith("opdefs/x.test/f/A.yaml:1:1: error: expected a mapping")
    assert lines[-1].startswith("... 19,950 more errors not shown")


def test_errors_are_capped_per_file_and_in_all_and_counted(tmp_path, capsys):
    keys = "".join(f"k{i}: 1\n" for i in range(100_000))
    opdefs = _tree(tmp_path, {**_op(OP + keys), "opdefs/x.test/f/A.yaml": "a\n"})
    base = ["generate", "--opdefs", str(opdefs), "--out", str(tmp_path / "out")]
    code, lines = _run(base, capsys)
    assert code == 1 and len(lines) == 1 + 50 + 2 and sum(map(len, lines)) < 1_000_000
    assert lines[-1] == f"opspec: 100,001 errors in {opdefs}"
    code, lines = _run([*base, "--max-errors", "3", "--max-errors-per-file", "0"], capsys)
    assert len(lines) == 3 + 2 and lines[-2].startswith("... 99,998 more errors not shown")
    code, lines = _run([*base, "--max-errors", "0", "--max-errors-per-file", "0"], capsys)
    assert len(lines) == 100_001 + 1
    assert main([*base, "--format", "json", "--max-errors", "10"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["error_count"] == 100_001 and report["omitted"] == 100_001 - 10 and len(report["errors"]) == 10


def test_yaml_1_1_booleans_stay_names(tmp_path, capsys):
    text = OP.replace("axis: int = 0", "on: int = 0\n      yes: int = 1\n      off: string = no")
    opdefs = _tree(tmp_path, _op(text))
    out = tmp_path / "out"
    code, _ = _run(["generate", "--opdefs", str(opdefs), "--out", str(out)], capsys)
    assert code == 0
    module = (out / "x_test/Foo.py").read_text()
    assert "'on'" in module and "'yes'" in module and "default='no'" in module


def test_generated_python_stays_data_for_a_hostile_tree_path(tmp_path, capsys):
    root = tmp_path / 'w"""; import os; os.system("touch SENTINEL") #'
    opdefs = _tree(root, _op(OP))
    out = tmp_path / "out"
    code, _ = _run(["generate", "--opdefs", str(opdefs), "--out", str(out)], capsys)
    assert code == 0
    for path in out.rglob("*.py"):
        tree = ast.parse(path.read_text())
        calls = [node for node in ast.walk(tree) if isinstance(node, ast.Import)]
        assert not any(alias.name == "os" for node in calls for alias in node.names), path


def test_output_paths_stay_inside_the_output_folder(tmp_path):
    out = tmp_path / "out"
    (out / "docs").mkdir(parents=True)
    (out / "docs" / "away").symlink_to(tmp_path)
    (out / "docs" / "link.md").symlink_to(tmp_path / "x.md")
    folders: dict = {}  # folders resolved once for many files: the same answers
    for relative in ("../x.py", "/etc/x.py", "docs/../../x.md", "docs/away/x.md", "docs/link.md"):
        with pytest.raises(OutputError):
            _inside(out, relative)
        with pytest.raises(OutputError):
            _inside(out, relative, None, folders)
    assert _inside(out, "docs/x.md") == _inside(out, "docs/x.md", None, folders) == out / "docs/x.md"


def test_a_users_tree_never_writes_into_the_builtin_registry(tmp_path, capsys):
    opdefs = _tree(tmp_path, _op(OP))
    before = sorted((p, p.stat().st_mtime_ns) for p in DEFAULT_OUT.rglob("*") if p.is_file())
    code, lines = _run(["generate", "--opdefs", str(opdefs)], capsys)
    assert code == 2 and "--out is required with --opdefs" in lines[-1]  # a usage error
    assert sorted((p, p.stat().st_mtime_ns) for p in DEFAULT_OUT.rglob("*") if p.is_file()) == before


def test_hand_written_files_are_kept_unless_forced(tmp_path, capsys):
    opdefs = _tree(tmp_path, _op(OP))
    out = tmp_path / "out"
    (out / "docs").mkdir(parents=True)
    (out / "__init__.py").write_text("# mine\n")
    (out / "docs/README.md").write_text("# my notes\n")
    code, lines = _run(["generate", "--opdefs", str(opdefs), "--out", str(out)], capsys)
    assert code == 1
    assert [line for line in lines[:-1] if ": warning: " not in line] == [
        f"{out / '__init__.py'}: refusing to replace a file that `opspec generate` did not write (pass --force to "
        "replace it)",
        f"{out / 'docs/README.md'}: refusing to replace a file that `opspec generate` did not write (pass --force "
        "to replace it)"]
    assert (out / "__init__.py").read_text() == "# mine\n" and not (out / "x_test").exists()
    code, _ = _run(["generate", "--opdefs", str(opdefs), "--out", str(out), "--force"], capsys)
    assert code == 0 and "Generated by `opspec generate`" in (out / "__init__.py").read_text()
