"""What the opdefs format can say beyond a signature, compiled from small trees."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import opspec
from opspec.codegen.compiler import compile_tree
from opspec.runtime.function_text import FunctionTextError, parse_nodes

REPO = Path(__file__).resolve().parent.parent
DOMAIN = "domain: x.test\nopset: {min: 1, max: 5}\n"


def _compile(tmp_path: Path, op_text: str, types: str | None = None):
    root = tmp_path / "opdefs"
    (root / "x.test/f").mkdir(parents=True)
    (root / "x.test/domain.yaml").write_text(DOMAIN)
    (root / "types.yaml").write_text(types or (REPO / "opdefs/types.yaml").read_text())
    (root / "x.test/f/Foo.yaml").write_text("op: Foo\nsummary: A test op.\n" + op_text)
    [domain] = compile_tree(root)
    return domain.ops[0].schemas


def test_map_types_keep_the_declared_text_and_normalise_the_formal_types(tmp_path):
    [schema] = _compile(tmp_path, """versions:
  1:
    inputs: {X: T}
    outputs: {Y: "seq(map(int64, float))"}
    types:
      T: ["map(string, float)", "map(int64, tensor(double))"]
""")
    assert schema.type_constraints[0].allowed_type_strs == ("map(string, float)", "map(int64, tensor(double))")
    assert schema.inputs[0].types == {"map(string,tensor(float))", "map(int64,tensor(double))"}
    assert schema.outputs[0].types == {"seq(map(int64,tensor(float)))"}


def test_a_version_may_allow_what_the_checks_forbid_elsewhere(tmp_path):
    first, second = _compile(tmp_path, """versions:
  1:
    inputs: {X: T}
    outputs: {Y: T?, Z: T}
    types: {T: float_types, U: tensor(int64)}
    allow: [required-after-optional, unused-type-parameter]
  2:
    outputs: {Y: T, Z: T}
    types: {U: null}
""")
    assert [p.option.name for p in first.outputs] == ["Optional", "Single"]
    assert [t.type_param_str for t in second.type_constraints] == ["T"]


def test_type_order_puts_a_new_parameter_where_the_standard_lists_it(tmp_path):
    first, second = _compile(tmp_path, """versions:
  1:
    inputs: {A: T1, B: T2}
    outputs: {Y: T2}
    types: {T1: float_types, T2: float_types}
  2:
    inputs: {A: T1, B: T2, S: TS}
    types: {TS: tensor(float)}
    type_order: [TS, T1, T2]
""")
    assert [t.type_param_str for t in first.type_constraints] == ["T1", "T2"]
    assert [t.type_param_str for t in second.type_constraints] == ["TS", "T1", "T2"]


def test_support_level_and_determinism_carry_over_until_changed(tmp_path):
    schemas = _compile(tmp_path, """versions:
  1:
    inputs: {X: T}
    outputs: {Y: T}
    types: {T: float_types}
    support_level: experimental
    determinism: nondeterministic
  2:
    support_level: common
  3:
    determinism: deterministic
""")
    assert [s.support_level.name for s in schemas] == ["EXPERIMENTAL", "COMMON", "COMMON"]
    assert [s.node_determinism.name for s in schemas] == ["NonDeterministic", "NonDeterministic", "Deterministic"]


def test_function_bodies_are_data_parsed_on_demand(tmp_path):
    first, second, third = _compile(tmp_path, """versions:
  1:
    inputs: {X: T}
    outputs: {Y: T}
    attributes: {alpha: float = 1.0}
    types: {T: float_types}
    function:
      1: |
        A = Constant <value_float: float = @alpha> ()
        Y = Mul (A, X)
      3: |
        Y = Identity (X)
  2:
    notes: Same contract; the body stays.
  4:
    function: {context_dependent: [4]}
""")
    assert second.functions == first.functions and first.function_opset_versions == (1, 3)
    assert first.get_function_with_opset_version(2).node[0].attribute[0].ref_attr_name == "alpha"
    assert [n.op_type for n in first.function_body.node] == ["Identity"]
    assert list(first.function_body.attribute) == [] and list(first.function_body.input) == ["X"]
    assert not third.has_function and third.has_context_dependent_function
    assert third.get_function_with_opset_version(5) is None


def test_the_built_in_bodies_use_the_ir_messages_and_never_onnx():
    code = ("import sys, opspec; body = opspec.get_schema('Range', 11).function_body; "
            "print(type(body).__module__, len(body.node), 'onnx' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["opspec.generated.opspec_ir_pb2", "9", "False"]
    assert opspec.get_schema("Relu", 14).get_function_with_opset_version(17) is None


@pytest.mark.parametrize("text", ["Y = Relu (X", "Y = C <v: tensor = float[x] {1}> ()", "Y = C <v = @x> ()",
                                  "Y = C <v: ints = 3> ()", "Y = Relu (X) %", "Y = C <v: float = [1]> ()",
                                  "Y = C <g: graph = 3> ()", 'Y = C <v = "\\x"> ()'])
def test_a_broken_body_is_one_clear_error(text):
    with pytest.raises(FunctionTextError):
        parse_nodes(text)


def test_container_sets_wrap_every_type_of_a_set(tmp_path):
    [schema] = _compile(tmp_path, """versions:
  1:
    inputs: {X: T}
    outputs: {Y: T}
    types: {T: [seq(small), optional(small)]}
""", types="type_sets:\n  small: [tensor(float), tensor(int64)]\n")
    assert schema.type_constraints[0].allowed_type_strs == (
        "seq(tensor(float))", "seq(tensor(int64))", "optional(tensor(float))", "optional(tensor(int64))")


def test_text_left_to_write_is_a_located_warning_not_an_error(tmp_path, capsys, monkeypatch):
    from opspec.cli import main

    monkeypatch.chdir(tmp_path)  # paths print relative to the folder the command runs in

    root = tmp_path / "opdefs"
    (root / "x.test/f").mkdir(parents=True)
    (root / "x.test/domain.yaml").write_text(DOMAIN)
    (root / "x.test/f/Foo.yaml").write_text("""op: Foo
summary: FIXME later
doc: Says what Foo does.
versions:
  1:
    inputs: {X: T}
    outputs: {Y: T}
    types: {T: [tensor(float)]}
docs:
  X: "Placeholder text."
  T: ""
""")
    assert main(["generate", "--opdefs", str(root), "--out", str(tmp_path / "out")]) == 0
    assert capsys.readouterr().err.splitlines() == [
        "opdefs/x.test/f/Foo.yaml:2:1: warning: summary has a placeholder (FIXME)",  # each where it is written
        "opdefs/x.test/f/Foo.yaml:9:1: warning: 'Y' has no description",  # where its description goes
        "opdefs/x.test/f/Foo.yaml:10:3: warning: description of 'X' has a placeholder (Placeholder)",
        "opdefs/x.test/f/Foo.yaml:11:3: warning: description of 'T' is empty",
    ]


@pytest.mark.parametrize("head, expected", [
    ("op: Foo\n", ["1:1: warning: doc is missing (it goes after `op:`)",
                   "1:1: warning: summary is missing (it goes after `op:`)"]),
    ("op: Foo\nsummary: Foo things.\n", ["2:1: warning: doc is missing (it goes after `summary:`)"]),
    ("op: Foo\ndoc: Says what Foo does.\n", ["1:1: warning: summary is missing (it goes after `op:`)"]),
    ("op: Foo\nsummary: TODO\ndoc: |\n  TODO\n", ["2:1: warning: summary has a placeholder (TODO)",
                                                   "3:1: warning: doc has a placeholder (TODO)"]),
])
def test_a_missing_or_unwritten_summary_and_doc_are_each_located_where_they_belong(tmp_path, head, expected):
    from opspec.codegen.compiler import compile_tree

    root = tmp_path / "opdefs"
    (root / "x.test/f").mkdir(parents=True)
    (root / "x.test/domain.yaml").write_text(DOMAIN)
    (root / "x.test/f/Foo.yaml").write_text(head + "versions:\n  1:\n    inputs: {X: T}\n    outputs: {Y: T}\n"
                                            "    types: {T: [tensor(float)]}\n"
                                            "docs: {X: The input., Y: The output., T: The types.}\n")
    warnings: list = []
    compile_tree(root, warnings.append)
    assert sorted(str(warning) for warning in warnings) == [f"opdefs/x.test/f/Foo.yaml:{line}" for line in expected]


def test_every_file_of_the_repository_the_format_guide_cites_exists():
    repo = Path(__file__).resolve().parent.parent
    guide = (repo / "opdefs/README.md").read_text(encoding="utf-8")
    cited = re.findall(r"`((?:tests|runtime|codegen|opspec|examples|benchmarks|generated)/[\w./-]*)`", guide)
    assert cited and [path for path in cited if not (repo / path).exists()] == []


def test_a_valid_map_input_passes_the_type_check():
    from onnx import TensorProto, helper

    value = helper.make_map_type_proto(TensorProto.STRING, helper.make_tensor_type_proto(TensorProto.FLOAT, None))
    node = helper.make_node("DictVectorizer", ["x"], ["y"], domain="ai.onnx.ml", string_vocabulary=["a", "b"])
    graph = helper.make_graph([node], "g", [helper.make_value_info("x", value)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("ai.onnx.ml", 3)])
    assert opspec.infer(model, check_type=True).errors == []


def test_warnings_are_capped_per_file_as_errors_are(tmp_path, capsys):
    from opspec.cli import main
    from opspec.codegen.error_cap import PER_FILE

    root = tmp_path / "opdefs"
    (root / "x.test/f").mkdir(parents=True)
    (root / "x.test/domain.yaml").write_text(DOMAIN)
    count = PER_FILE + 25
    attributes = "".join(f"      a{i}: int = 0\n" for i in range(count))
    docs = "".join(f"  a{i}: ''\n" for i in range(count))
    (root / "x.test/f/Foo.yaml").write_text(f"""op: Foo
summary: Foo copies its input.
doc: Says what Foo does.
versions:
  1:
    inputs: {{X: T}}
    outputs: {{Y: T}}
    types: {{T: [tensor(float)]}}
    attributes:
{attributes}docs:
  X: The input.
  Y: The output.
  T: The element types.
{docs}""")
    assert main(["generate", "--opdefs", str(root), "--out", str(tmp_path / "out")]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == PER_FILE + 1 and all(": warning: " in line for line in lines)
    assert lines[-1].endswith("warning: 25 more warnings not shown (text still to be written)")
