"""A user's op set brings its own rules: checked at generate, registered, used by API and CLI.

Everything that registers runs in a fresh interpreter, so the test process keeps the
built-in rule set alone.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from onnx import TensorProto, helper

from opspec.codegen.diagnostics import CompileError
from opspec.codegen.generate import generate

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "custom_ops" / "opdefs"


def python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.fixture(scope="module")
def example_out(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("reg") / "json"  # a folder named like a standard module
    generate(EXAMPLE, out)
    return out


def pixel_model(path: Path) -> Path:
    node = helper.make_node("PixelShuffle", ["X"], ["Y"], domain="com.example", blocksize=2, name="shuffle")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 8, "H", 5])],
                              [helper.make_tensor_value_info("Y", 0, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)])
    path.write_bytes(model.SerializeToString())
    return path


def test_generate_copies_the_rule_module_and_lists_it(example_out):
    assert (example_out / "rules" / "pixel_shuffle.py").is_file()
    assert "RULE_MODULES: tuple[str, ...] = ('rules.pixel_shuffle',)" in (example_out / "__init__.py").read_text()
    assert "pixel_shuffle" in (example_out / "docs" / "rules.md").read_text()


def test_cli_infers_with_the_user_rule(example_out, tmp_path):
    model = pixel_model(tmp_path / "m.onnx")
    done = subprocess.run([sys.executable, "-m", "opspec", "infer", str(model), "--registry", str(example_out)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("Y "))
    assert row.split()[1] == "com.example::PixelShuffle" and row.rstrip().endswith("(N, 2, 2*H, 10)"), row


def test_register_twice_and_api(example_out, tmp_path):
    model = pixel_model(tmp_path / "m.onnx")
    done = python(f"""
        import json, sys, opspec
        opspec.register({str(example_out)!r})
        opspec.register({str(example_out)!r})  # harmless
        assert json.dumps([1]) == "[1]"  # the standard module is not shadowed
        assert not any(p.endswith("reg0") or p == {str(example_out.parent)!r} for p in sys.path)
        result = opspec.infer({str(model)!r})
        print(result.values["Y"][0].shape, result.errors)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(Sym('N'), 2, Sym('2*H'), 10) []"


def test_register_a_missing_folder_is_one_clear_error(tmp_path):
    done = python(f"""
        import opspec
        try:
            opspec.register({str(tmp_path / "nowhere")!r} + "/")
        except opspec.SchemaError as error:
            print("SchemaError:", error)
    """)
    assert done.stdout.startswith("SchemaError: no registry folder at"), done.stderr


def _tree_with_rule(tmp_path: Path, rule_source: str, reference: str = "{rule: pixel_shuffle}") -> Path:
    tree = tmp_path / "opdefs"
    shutil.copytree(EXAMPLE, tree)
    (tree / "rules" / "pixel_shuffle.py").write_text(textwrap.dedent(rule_source))
    op = tree / "com.example" / "tensor" / "PixelShuffle.yaml"
    op.write_text(op.read_text().replace("inference: {rule: pixel_shuffle}", f"inference: {reference}"))
    return tree


def _errors(tree: Path, out: Path) -> list[str]:
    with pytest.raises(CompileError) as caught:
        generate(tree, out)
    return [str(d) for d in caught.value.diagnostics]


def test_references_to_user_rules_are_checked(tmp_path):
    tree = _tree_with_rule(tmp_path, (EXAMPLE / "rules" / "pixel_shuffle.py").read_text(),
                           "{rule: pixel_shuffle, blocksize: nothing, scale: 2}")
    errors = _errors(tree, tmp_path / "out")
    assert any("PixelShuffle.yaml" in e and "has no argument 'scale'" in e for e in errors)
    assert any("argument 'blocksize' names 'nothing'" in e for e in errors)


def test_user_rule_declarations_are_read_not_run(tmp_path):
    sentinel = tmp_path / "ran"
    tree = _tree_with_rule(tmp_path, f"""
        from opspec.runtime.contract import rule
        open({str(sentinel)!r}, "w").close()

        @rule("pixel_shuffle", "Summary.", blocksize=__import__("os").getcwd())
        def pixel_shuffle(ctx):
            pass

        @rule("reshape", "Takes a built-in name.")
        def mine(ctx):
            pass
    """)
    errors = _errors(tree, tmp_path / "out")
    assert not sentinel.exists()
    assert any("pixel_shuffle.py:5:" in e and "only attribute, input, input_or_attribute, option may be called" in e
               for e in errors), errors
    assert any("pixel_shuffle.py:9:" in e and "rule 'reshape' is already declared" in e for e in errors), errors
    assert any("unknown inference rule 'pixel_shuffle'" in e for e in errors)


SUBGRAPH_RULE = '''
from opspec.runtime.contract import InferenceContext, TensorType, rule


@rule("body_result", "Each output is the body's output, inferred with the node's inputs as body inputs.")
def body_result(ctx: InferenceContext) -> None:
    declared = ctx.subgraph("body")
    again = ctx.infer_subgraph("body", tuple(ctx.input_type(i) for i in range(ctx.input_count)))
    print("declared", declared.inputs, declared.outputs)
    for index, value in enumerate(again.outputs):
        ctx.set_output(index, value)
'''

SUBGRAPH_OP = '''
op: Apply
summary: Runs its body graph on its inputs.
doc: Test op whose output is what its body computes.
versions:
  1:
    inputs:
      X: T
    outputs:
      Y: T
    attributes:
      body: graph required
    types:
      T: float_types
    inference: body_result
docs:
  X: Input.
  Y: Output.
  body: The graph to run.
  T: Float types.
'''


def test_subgraph_hook_gives_the_rule_inferred_body_types(tmp_path):
    tree = _tree_with_rule(tmp_path, SUBGRAPH_RULE, "elementwise")
    (tree / "rules" / "pixel_shuffle.py").rename(tree / "rules" / "body.py")
    (tree / "com.example" / "tensor" / "Apply.yaml").write_text(SUBGRAPH_OP)
    out = tmp_path / "out"
    generate(tree, out)
    # The body adds an outer value ("bias", visible by name) to its own input.
    body = helper.make_graph(
        [helper.make_node("Add", ["x_in", "bias"], ["x_out"]), helper.make_node("Transpose", ["x_out"], ["t"])],
        "body", [helper.make_tensor_value_info("x_in", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("t", 0, None)])
    node = helper.make_node("Apply", ["X"], ["Y"], domain="com.example", body=body)
    graph = helper.make_graph([helper.make_node("Relu", ["B"], ["bias"]), node], "g",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 3]),
                               helper.make_tensor_value_info("B", TensorProto.FLOAT, [3])],
                              [helper.make_tensor_value_info("Y", 0, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)])
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    done = python(f"""
        import opspec
        opspec.register({str(out)!r})
        result = opspec.infer({str(path)!r})
        print(result.values["Y"][0], result.errors)
    """)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0] == "declared (TensorType(elem=1, shape=None),) (TensorType(elem=1, shape=None),)"
    assert lines[-1] == "TensorType(elem=1, shape=(3, Sym('N'))) []"


def test_input_and_output_names_a_rule_uses_are_checked(tmp_path):
    source = (EXAMPLE / "rules" / "pixel_shuffle.py").read_text()
    wrong = (source.replace('ctx.input_with_rank("X", 4)', 'ctx.input_with_rank("x", 4)')
             .replace('ctx.set_output_shape("Y",', '_write(ctx,')
             + "\n\ndef _write(ctx, shape):\n    ctx.set_output_shape(\"Y\", shape)\n    ctx.output_type(\"Z\")\n")
    tree = _tree_with_rule(tmp_path, wrong, "{rule: pixel_shuffle}")
    errors = _errors(tree, tmp_path / "out")
    line = wrong.splitlines().index(next(t for t in wrong.splitlines() if "input_with_rank(\"x\"" in t)) + 1
    assert any(f"rules/pixel_shuffle.py:{line}:" in e and
               "rule 'pixel_shuffle' names input 'x', which PixelShuffle 1 does not have" in e for e in errors), errors
    assert any("names output 'Z', which PixelShuffle 1 does not have" in e for e in errors), errors
    assert not any("'Y'" in e for e in errors), errors
