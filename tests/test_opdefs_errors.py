"""Broken opdefs: every problem is reported at file:line:col with a clear message, all at once."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from opspec.cli import main

OP = """op: Foo
summary: A test op.
versions:
  1:
    inputs:
      X: T
    outputs:
      Y: T
    attributes:
      axis: int = 0
    types:
      T: [tensor(float)]
    inference: elementwise
"""
DOMAIN = "domain: x.test\nopset: {min: 1, max: 5}\n"
FILE = "opdefs/x.test/f/Foo.yaml"


@pytest.fixture(autouse=True)
def _run_beside_the_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's tree lies in the folder it runs in: its paths print relative to it."""
    monkeypatch.chdir(tmp_path)

# (name, the op file's text, the expected diagnostics after the file name)
CASES = [
    ("syntax", OP.replace("X: T", "X: [T"),
     ["7:12: error: YAML syntax error: while parsing a flow sequence expected ',' or ']', but got ':'"]),
    ("unknown key", OP.replace("summary:", "sumary:"),
     ["2:1: error: unknown key 'sumary' (expected one of: doc, docs, op, summary, versions)"]),
    ("version key", OP.replace("  1:\n", "  one:\n"),
     ["4:3: error: invalid key 'one': expected a since-version (a positive integer)"]),
    ("wrong value type", OP.replace("inference: elementwise", "inference: [a]"),
     ["13:16: error: expected an inference rule name or null (no inference rule) or a rule with arguments "
      "({rule: name, ...}), found a list"]),
    ("undeclared type parameter", OP.replace("Y: T", "Y: U"),
     ["8:10: error: output 'Y' uses type parameter 'U', which is not declared in 'types' (declared: T)"]),
    ("unused type parameter", OP.replace("T: [tensor(float)]", "T: [tensor(float)]\n      U: [tensor(int64)]"),
     ["13:7: error: type parameter 'U' is declared but no input or output uses it "
      "(unless the version says `allow: [unused-type-parameter]`)"]),
    ("variadic not last", OP.replace("X: T\n", "X: T+\n      Z: T\n"),
     ["6:7: error: variadic input 'X' must be the last input"]),
    ("optional before required", OP.replace("X: T\n", "X: T?\n      Z: T\n"),
     ["7:7: error: required input 'Z' cannot follow optional input 'X' "
      "(unless the version says `allow: [required-after-optional]`)"]),
    ("exception nothing needs", OP + "    allow: [unused-type-parameter]\n",
     ["14:13: error: allow: 'unused-type-parameter' is not needed here; remove it so the check applies again"]),
    ("unknown exception", OP + "    allow: [anything-goes]\n",
     ['14:13: error: "anything-goes" is not one of "required-after-optional", "unused-type-parameter"']),
    ("cost formula naming what the version lacks", OP + '    cost: {macs: "numel(Z) * axes", flops: "dim(X)"}\n',
     ["14:25: error: cost macs: 'Z' is not an input or output of the operator",
      "14:30: error: cost macs: unknown attribute 'axes'",
      "14:45: error: cost flops: dim() takes 2 arguments, not 1"]),
    ("cost kind unknown", OP + "    cost: elementwize\n",
     ["14:11: error: cost: unknown kind 'elementwize' (known: elementwise, transcendental, reduction, "
      "data_movement, metadata)"]),
    ("cost kind that does not fit", OP + "    cost: {kind: reduction, flops: \"numel(input(0))\", macs: \"dim(output(1), 0)\"}\n",
     ["14:66: error: cost macs: output(1): the operator has at most 1"]),
    ("function body that does not parse", OP + "    function:\n      1: |\n        Y = Relu (X\n",
     ["15:10: error: function body for opset 1: unexpected end of the body"]),
    ("function body naming a missing attribute", OP + "    function:\n      1: |\n        Y = Elu <alpha: float = @alpha> (X)\n",
     ["15:10: error: function body for opset 1 refers to @alpha, which is not an attribute of version 1"]),
    ("function body for an opset outside the domain", OP + "    function:\n      9: Y = Relu (X)\n",
     ["15:10: error: a body for opset 9 must lie in the domain's opsets 1..5"]),
    ("type order missing a parameter", OP + "    type_order: [U]\n",
     ["14:17: error: type_order must list every type parameter once: T"]),
    ("axis relative to no input", OP.replace("axis: int = 0", "axis: int in rank(Z) = 0"),
     ["10:13: error: attribute 'axis': rank(Z) names no input of this version (inputs: X)"]),
    ("length on a scalar", OP.replace("axis: int = 0", "axis: int len == rank(X) = 0"),
     ["10:13: error: attribute 'axis': a length (len) needs a list type, not int"]),
    ("allowed value of another type", OP.replace("axis: int = 0", "axis: int in {0, one} = 0"),
     ["10:13: error: attribute 'axis': allowed value 'one' is not of the attribute's type int"]),
    ("default outside its bounds", OP.replace("axis: int = 0", "axis: int >= 1 = 0"),
     ["10:13: error: attribute 'axis': default 0 must be >= 1"]),
    ("unknown support level", OP + "    support_level: beta\n",
     ['14:20: error: "beta" is not one of "common", "experimental"']),
    ("default of the wrong type", OP.replace("axis: int = 0", "axis: int = 1.5"),
     ["10:13: error: attribute 'axis': default 1.5 is not int"]),
    ("default breaking a constraint", OP.replace("axis: int = 0", "axis: int >= 1 = 0"),
     ["10:13: error: attribute 'axis': default 0 must be >= 1"]),
    ("required and defaulted", OP.replace("axis: int = 0", "axis: int required = 0"),
     ["10:13: error: attribute 'axis': an attribute cannot be both required and defaulted"]),
    ("unknown flag", OP.replace("X: T\n", "X: T differentiabel\n"),
     ["6:12: error: input/output 'X': unknown flag 'differentiabel' (expected differentiable, "
      "non-differentiable or heterogeneous)"]),
    ("unknown element type", OP.replace("tensor(float)", "tensor(flaot)"),
     ["12:11: error: unknown element type 'flaot' in 'tensor(flaot)'"]),
    ("unknown type set", OP.replace("[tensor(float)]", "float_typez"),
     ["12:10: error: unknown type set 'float_typez' (did you mean 'float_types' or 'float8_types' or 'float6_types'?)"]),
    ("unknown rule", OP.replace("inference: elementwise", "inference: elementwize"),
     ["13:16: error: unknown inference rule 'elementwize' (did you mean 'elementwise'?)"]),
    ("unknown rule, nothing close", OP.replace("inference: elementwise", "inference: qqq"),
     ["13:16: error: unknown inference rule 'qqq' (the rules reference, docs/rules.md, lists every rule)"]),
    ("rule argument naming nothing", OP.replace("inference: elementwise", "inference: {rule: elementwise, dtype: to}"),
     ["13:43: error: rule 'elementwise': argument 'dtype' names 'to', which is not an attribute of Foo version 1"]),
    ("rule argument outside its choices",
     OP.replace("inference: elementwise", "inference: {rule: elementwise, compute: square}"),
     ["13:45: error: rule 'elementwise': argument 'compute' is 'square', expected one of: identity, cast, neg, "
      "abs, floor, ceil, sqrt, reciprocal, not"]),
    ("rule missing what it needs",
     OP.replace("inference: elementwise", "inference: concat").replace("axis: int = 0", "alpha: int = 0")
     .replace("      Y: T\n", "      concat_result: T\n"),  # (the output the rule names)
     ["13:16: error: rule 'concat' needs an attribute named 'axis', which Foo version 1 does not have"]),
    ("versions out of order", OP + "  3:\n    notes: x\n  2:\n    notes: y\n",
     ["16:3: error: versions must be listed in increasing order: 2 comes after 3"]),
    ("version outside the domain", OP + "  9:\n    notes: later\n",
     ["14:3: error: version 9 is outside the opset range 1..5 of domain 'x.test'"]),
    ("version changing nothing", OP + "  2:\n    types:\n      T: [tensor(float)]\n",
     ["14:3: error: version 2 changes nothing visible from version 1; add 'notes' saying how its behaviour differs"]),
    ("removing what is not there", OP + "  2:\n    notes: n\n    attributes:\n      beta: null\n",
     ["17:7: error: cannot remove attribute 'beta': the previous version has none"]),
    ("docs for nothing", OP + "docs:\n  Q: nothing\n",
     ["15:3: error: docs for 'Q', which is not an input, output, attribute or type parameter of any version"]),
    ("file name disagrees", OP.replace("op: Foo", "op: Bar"),
     ["1:5: error: op 'Bar' must live in a file named Bar.yaml, not Foo.yaml"]),
    ("object construction tag", OP.replace("summary: A test op.", "summary: !!python/object:os.system x"),
     ["2:10: error: unsupported YAML tag 'tag:yaml.org,2002:python/object:os.system'"]),
    ("incomplete first version", OP.replace("    outputs:\n      Y: T\n", ""),
     ["4:3: error: the first version must declare both inputs and outputs"]),
    ("duplicate key", OP.replace("      axis: int = 0\n", "      axis: int = 0\n      axis: int = 1\n"),
     ["11:7: error: duplicate key 'axis' (first defined at line 10)"]),
]


def _tree(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "opdefs"


def _run(opdefs: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(["generate", "--opdefs", str(opdefs), "--out", str(out)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    return code, captured.err.splitlines()


@pytest.mark.parametrize("name, text, expected", CASES, ids=[case[0] for case in CASES])
def test_broken_file_is_reported_at_its_position(tmp_path, capsys, name, text, expected):
    opdefs = _tree(tmp_path, {"opdefs/x.test/domain.yaml": DOMAIN, FILE: text})
    code, lines = _run(opdefs, tmp_path / "out", capsys)
    assert code == 1
    assert lines[:-1] == [f"{FILE}:{line}" for line in expected]
    assert lines[-1].startswith(f"opspec: {len(expected)} error")
    assert not (tmp_path / "out").exists(), "nothing is written when the opdefs have errors"


def test_all_errors_of_all_files_are_reported_together(tmp_path, capsys):
    files = {"opdefs/x.test/domain.yaml": DOMAIN, FILE: OP.replace("X: T", "X: [T")}
    files["opdefs/x.test/f/Baz.yaml"] = OP.replace("op: Foo", "op: Baz").replace("sumary", "x").replace(
        "summary:", "sumary:")
    files["opdefs/x.test/f/Qux.yaml"] = OP.replace("op: Foo", "op: Qux").replace("Y: T", "Y: U")
    code, lines = _run(_tree(tmp_path, files), tmp_path / "out", capsys)
    assert code == 1
    assert [line.split(": error")[0] for line in lines[:-1]] == [
        "opdefs/x.test/f/Baz.yaml:2:1", f"{FILE}:7:12", "opdefs/x.test/f/Qux.yaml:8:10"]
    assert lines[-1] == f"opspec: 3 errors in {tmp_path / 'opdefs'}"


def test_duplicate_op_in_a_domain(tmp_path, capsys):
    files = {"opdefs/x.test/domain.yaml": DOMAIN, FILE: OP, "opdefs/x.test/g/Foo.yaml": OP}
    code, lines = _run(_tree(tmp_path, files), tmp_path / "out", capsys)
    assert code == 1
    assert lines[0] == "opdefs/x.test/g/Foo.yaml:1:5: error: op 'Foo' is already defined in opdefs/x.test/f/Foo.yaml"


def test_domain_file_errors(tmp_path, capsys):
    files = {"opdefs/x.test/domain.yaml": "domain: x.test\nopset: {min: 1}\nflavour: sweet\n", FILE: OP,
             "opdefs/y.test/f/Foo.yaml": OP}
    code, lines = _run(_tree(tmp_path, files), tmp_path / "out", capsys)
    assert code == 1
    assert lines[:-1] == [
        "opdefs/x.test/domain.yaml:2:8: error: missing required key 'max'",
        "opdefs/x.test/domain.yaml:3:1: error: unknown key 'flavour' (expected one of: aliases, doc, domain, extends, "
        "node_domain, opset, summary)",
        "opdefs/y.test:1:1: error: domain folder has no domain.yaml",
    ]


def test_empty_file_and_missing_tree(tmp_path, capsys):
    files = {"opdefs/x.test/domain.yaml": DOMAIN, FILE: ""}
    code, lines = _run(_tree(tmp_path, files), tmp_path / "out", capsys)
    assert (code, lines[0]) == (1, f"{FILE}:1:1: error: the file is empty")
    code, lines = _run(tmp_path / "nowhere", tmp_path / "out", capsys)
    assert (code, lines[0]) == (1, "nowhere:1:1: error: opdefs folder not found")


def test_positions_inside_quoted_specs_skip_the_quote(tmp_path, capsys):
    text = OP.replace("axis: int = 0", "axis: \"int maybe\"")
    opdefs = _tree(tmp_path, {"opdefs/x.test/domain.yaml": DOMAIN, FILE: text})
    code, lines = _run(opdefs, tmp_path / "out", capsys)
    assert lines[0] == (f"{FILE}:10:18: error: attribute 'axis': unexpected 'maybe' (expected a constraint, "
                        "'= default' or 'required')")


def test_a_declaration_repeated_across_files_is_judged_in_each(tmp_path, capsys):
    """Declarations read once per process (a shorthand, a type list) still report in every file and version."""
    bad = OP.replace("X: T", "X: T wobbly").replace("T: [tensor(float)]", "T: [tensor(float), nosuch_types]")
    later = "  2:\n    notes: n\n    inputs:\n      X: T wobbly\n"
    files = {"opdefs/x.test/domain.yaml": DOMAIN, FILE: bad + later,
             "opdefs/x.test/f/Qux.yaml": bad.replace("op: Foo", "op: Qux")}
    code, lines = _run(_tree(tmp_path, files), tmp_path / "out", capsys)
    assert code == 1
    assert [line.split(": error")[0] for line in lines[:-1]] == [
        f"{FILE}:6:12", f"{FILE}:12:26", f"{FILE}:17:12", "opdefs/x.test/f/Qux.yaml:6:12",
        "opdefs/x.test/f/Qux.yaml:12:26"]


@pytest.mark.parametrize("path", ["a/b/Foo.yaml", "Foo.bar.yaml", ".yaml", "a/.yaml", "x/Foo.", "Foo", "a.b/c"])
def test_an_op_files_name_is_compared_without_its_last_suffix_as_a_path_gives_it(path):
    from opspec.codegen.compiler import _stem

    assert _stem(path) == Path(path).stem


def test_paths_print_as_they_open_from_the_folder_the_command_runs_in(tmp_path, capsys, monkeypatch):
    files = {"opdefs/x.test/domain.yaml": DOMAIN, FILE: OP.replace("summary:", "sumary:")}
    opdefs = _tree(tmp_path / "work", files)
    (tmp_path / "work/deeper").mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for cwd, shown in [(tmp_path, f"work/{FILE}"), (tmp_path / "work", FILE),
                       (tmp_path / "work/deeper", str(tmp_path / "work" / FILE)), (elsewhere, str(tmp_path / "work" / FILE))]:
        monkeypatch.chdir(cwd)
        for given in (opdefs, Path(os.path.relpath(opdefs, cwd))):  # the tree named absolutely or relatively
            code, lines = _run(given, tmp_path / "out", capsys)
            assert (code, lines[0].split(": error")[0]) == (1, f"{shown}:2:1"), (cwd, given)


def test_every_error_of_a_tree_and_its_layered_op_sets_is_reported_at_once(tmp_path, capsys):
    layer_op = OP.replace("op: Foo", "op: Bar").replace("X: T", "X: [T")
    files = {"opdefs/x.test/domain.yaml": DOMAIN, FILE: OP.replace("summary:", "sumary:"),
             "opdefs/extra/layer.yaml": "summary: More ops.\n",
             "opdefs/extra/y.test/domain.yaml": DOMAIN.replace("x.test", "y.test"),
             "opdefs/extra/y.test/f/Bar.yaml": layer_op,
             "opdefs/more/layer.yaml": "summary: Yet more.\n",
             "opdefs/more/z.test/domain.yaml": "domain: z.test\n"}
    code, lines = _run(_tree(tmp_path, files), tmp_path / "out", capsys)
    assert code == 1
    assert [line.split(": error")[0] for line in lines[:-1]] == [
        "opdefs/extra/y.test/f/Bar.yaml:7:12", "opdefs/more/z.test/domain.yaml:1:1", f"{FILE}:2:1"]


def test_a_layer_that_cannot_be_named_is_reported_with_the_trees_errors(tmp_path, capsys):
    files = {"opdefs/x.test/domain.yaml": DOMAIN, FILE: OP.replace("summary:", "sumary:"),
             "opdefs/bad-name/layer.yaml": "summary: More ops.\n"}
    code, lines = _run(_tree(tmp_path, files), tmp_path / "out", capsys)
    assert code == 1
    assert [line.split(": error")[0] for line in lines[:-1]] == ["opdefs/bad-name/layer.yaml:1:1", f"{FILE}:2:1"]
