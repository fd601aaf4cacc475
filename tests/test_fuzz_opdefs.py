"""Deterministic fuzzing of opdefs trees: seeded mutations of real op files never crash, hang,
escape the output folder or run code; every error is located; generated Python stays data.

``OPSPEC_FUZZ_CASES`` sets the number of mutations (default 200; set it higher for a longer run).
``OPSPEC_FUZZ_LARGE=1`` adds the oversized valid trees (2,000 ops; one op of 10^5 attributes), held to
the same limit as every case: they take seconds of work each, so they are left out of a default run.
"""
from __future__ import annotations

import ast
import os
import random
import shutil
import time
from typing import Sequence
from pathlib import Path

import pytest

from opspec.codegen.diagnostics import CompileError
from opspec.codegen.generate import OutputError, generate

REPO = Path(__file__).resolve().parent.parent
REAL = REPO / "opdefs"
OPS = ("math/Clip.yaml", "tensor/Split.yaml")
CASES = int(os.environ.get("OPSPEC_FUZZ_CASES", "200"))
LARGE = os.environ.get("OPSPEC_FUZZ_LARGE") == "1"
#: Seconds after which a case counts as a hang.
LIMIT = 10
SENTINEL = "FUZZ_SENTINEL"
INJECTIONS = (
    f'x"""; __import__("os").system("touch {SENTINEL}"); """', "x'''\nimport os\n'''", "..", "../../up", "a/b",
    "A\u202eB", "A\u200bB", "A\nB", "on", "yes", "", " ", "x" * 300, "{{ 7*7 }}", "\\", "__init__", "ai..onnx",
)
TAGS = (f'!!python/object/apply:os.system ["touch {SENTINEL}"]', f"!!python/name:os.system", "!custom x",
        "!!binary aGVsbG8=", "!!set {a}", "!!timestamp 2001-12-14")
#: Calls allowed in a generated module: the schema records and a few builtins.
ALLOWED_CALLS = {"Attribute", "FormalParameter", "OpSchema", "RuleRef", "TypeConstraintParam", "ValueConstraint",
                 "MappingProxyType", "frozenset", "float"}
ENUMS = {"AttrType", "DifferentiationCategory", "FormalParameterOption"}


def _base(root: Path) -> Path:
    opdefs = root / "opdefs"
    (opdefs / "ai.onnx").mkdir(parents=True)
    shutil.copy(REAL / "types.yaml", opdefs / "types.yaml")
    shutil.copy(REAL / "ai.onnx/domain.yaml", opdefs / "ai.onnx/domain.yaml")
    for relative in OPS:
        target = opdefs / "ai.onnx" / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REAL / "ai.onnx" / relative, target)
    return opdefs


def _lines(text: str, rng: random.Random) -> tuple[list[str], int]:
    lines = text.split("\n")
    return lines, rng.randrange(len(lines))


def _value_line(lines: list[str], rng: random.Random) -> int:
    candidates = [i for i, line in enumerate(lines) if ": " in line and not line.lstrip().startswith("#")]
    return rng.choice(candidates) if candidates else 0


def _replace_value(text: str, rng: random.Random, value: str) -> str:
    lines = text.split("\n")
    index = _value_line(lines, rng)
    head = lines[index].split(": ", 1)[0]
    lines[index] = f"{head}: {value}"
    return "\n".join(lines)


def _replace_key(text: str, rng: random.Random, key: str) -> str:
    lines = text.split("\n")
    index = _value_line(lines, rng)
    head, _, rest = lines[index].partition(": ")
    indent = head[: len(head) - len(head.lstrip())]
    lines[index] = f"{indent}{key}: {rest}"
    return "\n".join(lines)


def _quoted(name: str) -> str:
    return '"' + name.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'


def _mutate_text(text: str, rng: random.Random) -> str | bytes:
    kind = rng.randrange(11)
    if kind == 0:  # syntax break
        position = rng.randrange(len(text) + 1)
        return text[:position] + rng.choice("[]{}:\"'&*!|>%@`,-?#\t") + text[position:]
    if kind == 1:  # wrong type
        return _replace_value(text, rng, rng.choice(["[1, 2]", "{a: 1}", "123", "null", "true", "-1.5", "''"]))
    if kind == 2:  # unknown key
        lines, index = _lines(text, rng)
        indent = " " * rng.choice([0, 2, 4, 6])
        lines.insert(index, f"{indent}bogus_{rng.randrange(99)}: 1")
        return "\n".join(lines)
    if kind == 3:  # duplicate key
        lines, index = _lines(text, rng)
        lines.insert(index, lines[index])
        return "\n".join(lines)
    if kind == 4:  # anchors and aliases
        return _replace_value(text, rng, rng.choice(["&a [*a]", "*nothing", "&x 1", "&l [a, b]\nz: *l"]))
    if kind == 5:  # deep nesting
        depth = rng.choice([65, 400, 5000, 50000])
        return _replace_value(text, rng, "[" * depth + "]" * depth)
    if kind == 6:  # huge string
        return _replace_value(text, rng, _quoted("y" * rng.choice([10_000, 1_000_000])))
    if kind == 7:  # bad encoding
        data = text.encode("utf-8")
        position = rng.randrange(len(data) + 1)
        return rng.choice([data[:position] + bytes([rng.randrange(0x80, 0x100)]) + data[position:],
                           text.encode("utf-16"), data[:position] + b"\x00" + data[position:]])
    if kind == 8:  # unsafe or unknown tag
        return _replace_value(text, rng, rng.choice(TAGS))
    if kind == 9:  # injection through a name used as a key
        return _replace_key(text, rng, _quoted(rng.choice(INJECTIONS)))
    return _replace_value(text, rng, _quoted(rng.choice(INJECTIONS)))  # injection through a value


def _mutate(opdefs: Path, rng: random.Random) -> None:
    files = sorted(path for path in opdefs.rglob("*.yaml") if path.is_file() and not path.is_symlink())
    if not files:
        return
    target = rng.choice(files)
    kind = rng.randrange(20)
    if kind == 0:  # special files in place of a file, or links that leave the tree
        target.unlink()
        special = rng.randrange(6)
        if special >= 4:
            outside = opdefs.parent / "outside"
            (outside / "family").mkdir(parents=True, exist_ok=True)
            (outside / "family" / target.name).write_text(f"op: {target.stem}\n", encoding="utf-8")
            if special == 4:
                target.symlink_to(outside / "family" / target.name)
            else:
                (target.parent / "linked").symlink_to(outside / "family", target_is_directory=True)
            return
        if special == 0:
            os.mkfifo(target)
        elif special == 1:
            target.symlink_to(target.name)
        elif special == 2:
            target.mkdir()
        else:
            target.symlink_to("/nonexistent/file.yaml")
        return
    if kind == 1:  # a folder renamed to something hostile
        folder = target.parent if target.parent != opdefs else opdefs / "ai.onnx"
        name = rng.choice([n for n in INJECTIONS if n and "/" not in n and "\n" not in n and n not in (".", "..")])
        folder.rename(folder.parent / name[:200])
        return
    if kind == 2:  # a non-domain folder
        (opdefs / rng.choice(["__pycache__", ".git", "notes", "schema"])).mkdir(exist_ok=True)
        return
    mutated = _mutate_text(target.read_bytes().decode("utf-8", "replace"), rng)
    target.write_bytes(mutated if isinstance(mutated, bytes) else mutated.encode("utf-8"))


def _check_output(out: Path, paths: Sequence[str]) -> None:
    root = out.resolve()
    for relative in paths:
        assert (out / relative).resolve().is_relative_to(root), relative
    for relative in paths:
        if relative.endswith(".py"):
            tree = ast.parse((out / relative).read_bytes().decode("utf-8"))
            # a variable's annotation is template text, never run (the modules use postponed annotations)
            typing_only = {id(inner) for node in ast.walk(tree) if isinstance(node, ast.AnnAssign)
                           for inner in ast.walk(node.annotation)}
            for node in ast.walk(tree):
                if id(node) in typing_only:
                    continue
                if isinstance(node, ast.Call):
                    assert isinstance(node.func, ast.Name) and node.func.id in ALLOWED_CALLS, relative
                if isinstance(node, ast.Attribute):
                    assert isinstance(node.value, ast.Name) and node.value.id in ENUMS, relative
                assert not isinstance(node, (ast.FunctionDef, ast.Lambda, ast.Subscript)), relative
                if isinstance(node, ast.ImportFrom):
                    assert node.module in ("__future__", "types", "opspec.runtime.schema"), relative


def _run_case(seed: int, root: Path) -> str:
    rng = random.Random(seed)
    case = root / f"case{seed}"
    opdefs = _base(case)
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        _mutate(opdefs, rng)
    out = case / "out"
    started = time.perf_counter()
    try:
        result = generate(opdefs, out)
    except CompileError as error:
        assert error.diagnostics, seed
        for diagnostic in error.diagnostics:
            where = diagnostic.location
            assert isinstance(where.path, str) and where.path and where.line >= 1 and where.column >= 1, diagnostic
            assert "\n" not in str(diagnostic), diagnostic
        outcome = "error"
    except OutputError:
        outcome = "refused"
    else:
        _check_output(out, result.paths)
        outcome = "ok"
    assert time.perf_counter() - started < LIMIT, f"seed {seed} took too long"
    assert not list(case.rglob(SENTINEL)) and not (Path.cwd() / SENTINEL).exists(), seed
    shutil.rmtree(case, ignore_errors=True)
    return outcome


def test_fuzzed_opdefs_trees_fail_cleanly(tmp_path):
    outcomes = [_run_case(seed, tmp_path) for seed in range(CASES)]
    assert outcomes.count("error") > CASES // 2, "most mutations must break something"
    assert "ok" in outcomes, "some mutations are harmless and must still generate"


@pytest.mark.parametrize("seed", [0])
def test_base_tree_generates(tmp_path, seed):
    result = generate(_base(tmp_path), tmp_path / "out")
    assert result.op_count == len(OPS)


def test_links_out_of_the_tree_are_located_errors_and_never_read(tmp_path):
    for seed in range(20):
        rng = random.Random(seed)
        opdefs = _base(tmp_path / f"links{seed}")
        outside = tmp_path / f"outside{seed}"
        outside.mkdir()
        (outside / "Evil.yaml").write_text(f"op: Evil\n{SENTINEL}: [", encoding="utf-8")  # unreadable if read
        files = sorted(opdefs.rglob("*.yaml"))
        where = rng.choice([opdefs, opdefs / "ai.onnx", *(path.parent for path in files)])
        if rng.random() < 0.5 and where != opdefs:  # (a file at the top is not an op file: never read)
            (where / "Evil.yaml").symlink_to(outside / "Evil.yaml")
        else:
            (where / f"linked{seed}").symlink_to(outside, target_is_directory=True)
        with pytest.raises(CompileError) as raised:
            generate(opdefs, tmp_path / f"out{seed}")
        messages = [str(d) for d in raised.value.diagnostics]
        assert messages and all("leads outside the opdefs tree" in m for m in messages), messages
        assert not any(SENTINEL in m for m in messages)


def test_a_huge_attribute_count_with_a_small_error_budget(tmp_path, capsys):
    from opspec.cli import main

    opdefs = _base(tmp_path)
    clip = opdefs / "ai.onnx/math/Clip.yaml"
    text = clip.read_text(encoding="utf-8")
    bad = "".join(f"      a{i}: nonsense{i}\n" for i in range(100_000))
    clip.write_text(text.replace("    attributes:\n", "    attributes:\n" + bad, 1), encoding="utf-8")
    code = main(["generate", "--opdefs", str(opdefs), "--out", str(tmp_path / "out"), "--max-errors", "20"])
    err = capsys.readouterr().err.splitlines()
    assert code == 1 and len(err) == 22 and err[-1] == f"opspec: 100,000 errors in {opdefs}"
    assert err[-2].startswith("... 99,980 more errors not shown")


def _oversized(opdefs: Path, out: Path) -> None:
    """Generate a valid oversized tree within the harness's limit."""
    started = time.perf_counter()
    result = generate(opdefs, out)
    assert time.perf_counter() - started < LIMIT, "an oversized valid tree took too long"
    _check_output(out, result.paths[:50])


@pytest.mark.skipif(not LARGE, reason="set OPSPEC_FUZZ_LARGE=1 for the oversized trees")
def test_a_tree_of_two_thousand_ops_is_no_hang(tmp_path):
    opdefs = _base(tmp_path)
    clip = (opdefs / "ai.onnx/math/Clip.yaml").read_text(encoding="utf-8")
    for index in range(2_000):
        (opdefs / f"ai.onnx/math/Clip{index}.yaml").write_text(clip.replace("op: Clip\n", f"op: Clip{index}\n", 1),
                                                             encoding="utf-8")
    _oversized(opdefs, tmp_path / "out")


@pytest.mark.skipif(not LARGE, reason="set OPSPEC_FUZZ_LARGE=1 for the oversized trees")
def test_an_op_of_a_hundred_thousand_attributes_is_no_hang(tmp_path):
    opdefs = _base(tmp_path)
    clip = opdefs / "ai.onnx/math/Clip.yaml"
    extra = "".join(f"      a{index}: int = {index}\n" for index in range(100_000))
    clip.write_text(clip.read_text(encoding="utf-8").replace("    attributes:\n", "    attributes:\n" + extra, 1),
                    encoding="utf-8")
    _oversized(opdefs, tmp_path / "out")
