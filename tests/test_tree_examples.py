"""Worked examples of a user's tree: they run the tree's own rules, a rule failing on one is an
error located at the example, and example dims may be expressions."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

import opspec
from opspec.codegen.diagnostics import CompileError
from opspec.codegen.generate import generate
from opspec.codegen.scaffold import init_tree, new_op
from opspec.runtime.rulebook import RULES

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = "opdefs/com.acme/example/TileLastAxis.yaml"
RULE = "opdefs/rules/tile_last_axis.py"


def _scaffold(tmp_path: Path) -> Path:
    tree = tmp_path / "acme"
    init_tree(tree, "com.acme")
    return tree


def _example_line(tree: Path) -> int:
    lines = (tree / EXAMPLE).read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if line.lstrip().startswith("- {inputs:"))


def _generate_errors(tree: Path, out: Path) -> list[str]:
    with pytest.raises(CompileError) as raised:
        generate(tree / "opdefs", out, with_protos=False)
    return [str(diagnostic) for diagnostic in raised.value.diagnostics]


def test_the_scaffolds_example_shows_what_its_own_rule_gives(tmp_path):
    tree = _scaffold(tmp_path)
    generate(tree / "opdefs", tmp_path / "out", with_protos=False)
    page = (tmp_path / "out/docs/com.acme/TileLastAxis.md").read_text()
    assert "`TileLastAxis(X: float (N, 8), repeats=3)` → `Y: float (N, 24)`" in page
    # the tree's rule ran for the docs only: the process's rules and registry are as they were
    assert RULES.lookup("tile_last_axis") is None and not opspec.has_schema("TileLastAxis", domain="com.acme")


def test_the_custom_ops_example_runs_its_own_rule_on_expression_dims(tmp_path):
    generate(REPO / "examples/custom_ops/opdefs", tmp_path / "out", with_protos=False)
    page = (tmp_path / "out/docs/com.example/PixelShuffle.md").read_text()
    assert "`PixelShuffle(X: float (N, 4*C, H, W), blocksize=2)` → `Y: float (N, C, 2*H, 2*W)`" in page


def test_a_rule_that_raises_on_an_example_is_an_error_at_the_example(tmp_path):
    tree = _scaffold(tmp_path)
    rule = tree / RULE
    rule.write_text(rule.read_text().replace('    repeats = ctx.int_attr("repeats", 2)\n',
                                             '    raise RuntimeError("the rule broke")\n'))
    errors = _generate_errors(tree, tmp_path / "out")
    assert len(errors) == 1
    assert errors[0].startswith(f"{EXAMPLE}:{_example_line(tree)}:")
    assert "example for TileLastAxis version 1" in errors[0] and "the rule broke" in errors[0]


def test_a_rule_that_rejects_the_example_is_an_error_at_the_example(tmp_path):
    tree = _scaffold(tmp_path)
    example = tree / EXAMPLE
    example.write_text(example.read_text().replace('X: "(N, 8)"', 'X: "float ()"'))  # a scalar: the rule's node error
    errors = _generate_errors(tree, tmp_path / "out")
    assert len(errors) == 1 and errors[0].startswith(f"{EXAMPLE}:{_example_line(tree)}:")


def test_a_rule_module_that_cannot_load_is_an_error_at_its_line(tmp_path):
    tree = _scaffold(tmp_path)
    rule = tree / RULE
    lines = rule.read_text().splitlines()
    lines.append('raise ImportError("a missing dependency")')
    rule.write_text("\n".join(lines) + "\n")
    errors = _generate_errors(tree, tmp_path / "out")
    assert errors == [f"{RULE}:{len(lines)}:1: error: the rule module cannot be loaded: "
                      "ImportError: a missing dependency"]


@pytest.mark.parametrize("dims, shown, result", [
    ("(2*H, N+1)", "(2*H, N+1)", "(2*H, 3*N+3)"),
    ("(B, floor((W - 1)/2) + 1)", "(B, ceil(W/2))", "(B, 3*ceil(W/2))"),
    ("(min(H, W), 2*3)", "(min(H,W), 6)", "(min(H,W), 18)"),
    # An unknown dim is one size all the same: the output keeps it, as a symbol of inference's own.
    ("(?, W)", "(?, W)", "(unk__0, 3*W)"),
])
def test_example_dims_may_be_expressions(tmp_path, dims, shown, result):
    tree = _scaffold(tmp_path)
    example = tree / EXAMPLE
    example.write_text(example.read_text().replace('"(N, 8)"', f'"{dims}"'))
    generate(tree / "opdefs", tmp_path / "out", with_protos=False)
    page = (tmp_path / "out/docs/com.acme/TileLastAxis.md").read_text()
    assert f"`TileLastAxis(X: float {shown}, repeats=3)` → `Y: float {result}`" in page


@pytest.mark.parametrize("dim", ["8 8", "-1", "H W", "2**H", "f(H)"])
def test_a_dim_that_is_no_expression_is_an_error_at_the_example(tmp_path, dim):
    tree = _scaffold(tmp_path)
    example = tree / EXAMPLE
    example.write_text(example.read_text().replace('"(N, 8)"', f'"(N, {dim})"'))
    errors = _generate_errors(tree, tmp_path / "out")
    assert len(errors) == 1 and errors[0].startswith(f"{EXAMPLE}:{_example_line(tree)}:")
    assert f"a dim is a number, a name, '?' or an expression such as '2*H'" in errors[0] and repr(dim) in errors[0]


def test_a_tree_whose_rules_need_no_loading_generates_as_before(tmp_path):
    tree = tmp_path / "opdefs"
    shutil.copytree(REPO / "examples/custom_ops/opdefs", tree)
    shutil.rmtree(tree / "rules")
    (tree / "com.example/tensor/PixelShuffle.yaml").unlink()  # the only op naming the tree's rule
    generate(tree, tmp_path / "out", with_protos=False)
    assert (tmp_path / "out/docs/com.example/Swish.md").is_file()


def test_the_trees_code_runs_only_when_an_example_needs_one_of_its_rules(tmp_path):
    tree = _scaffold(tmp_path)
    new_op(tree, "MyOp")  # an op whose example runs a built-in rule
    sentinel = tmp_path / "ran"
    rule = tree / RULE
    rule.write_text(rule.read_text() + f"\nopen({str(sentinel)!r}, 'w').close()\n")
    example = tree / EXAMPLE
    with_example = example.read_text()
    example.write_text("\n".join(line for line in with_example.splitlines()
                                 if "examples:" not in line and "- {inputs:" not in line) + "\n")
    generate(tree / "opdefs", tmp_path / "out", with_protos=False)
    assert not sentinel.exists()
    example.write_text(with_example)
    generate(tree / "opdefs", tmp_path / "out", with_protos=False)
    assert sentinel.exists()


def test_a_rule_module_may_import_a_sibling_as_in_the_generated_package(tmp_path):
    tree = _scaffold(tmp_path)
    (tree / "opdefs/rules/zz_growth.py").write_text(
        "from opspec.runtime.shape import mul_dim\n\n\ndef grown(dim, repeats):\n    return mul_dim(dim, repeats)\n")
    rule = tree / RULE
    rule.write_text(rule.read_text().replace("from opspec.runtime.shape import mul_dim\n",
                                             "from .zz_growth import grown as mul_dim\n"))
    generate(tree / "opdefs", tmp_path / "out", with_protos=False)
    page = (tmp_path / "out/docs/com.acme/TileLastAxis.md").read_text()
    assert "`TileLastAxis(X: float (N, 8), repeats=3)` → `Y: float (N, 24)`" in page
    assert not any(name.startswith("_opspec_tree_rules") for name in sys.modules)


def test_a_sibling_failing_to_load_is_located_in_the_sibling(tmp_path):
    tree = _scaffold(tmp_path)
    (tree / "opdefs/rules/zz_growth.py").write_text("GROWTH = 1\nGROWTH.missing\n")
    rule = tree / RULE
    rule.write_text(rule.read_text().replace("from opspec.runtime.shape import mul_dim\n",
                                             "from opspec.runtime.shape import mul_dim\nfrom . import zz_growth\n"))
    errors = _generate_errors(tree, tmp_path / "out")
    assert len(errors) == 1 and errors[0].startswith(
        "opdefs/rules/zz_growth.py:2:1: error: the rule module cannot be loaded: AttributeError"), errors
