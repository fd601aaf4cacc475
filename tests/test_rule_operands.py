"""The input and output names a rule uses are read from its source and checked by the compiler."""
from __future__ import annotations

import ast
import shutil
import textwrap
from pathlib import Path

import pytest

from opspec.codegen import rule_specs
from opspec.codegen.compiler import compile_tree
from opspec.codegen.diagnostics import CompileError
from opspec.codegen.rule_operands import ModuleOperands

REPO = Path(__file__).resolve().parent.parent


def _names(source: str, function: str = "rule") -> set[tuple[str, bool, int]]:
    operands = ModuleOperands(ast.parse(textwrap.dedent(source)), "m.py").of(function)
    return {(operand.name, operand.output, operand.location.line) for operand in operands}


def test_literals_in_context_calls_are_read():
    assert _names("""
        def rule(ctx):
            ctx.set_output_shape("Y", ctx.input_shape("X"))
            ctx.input_shape(0)
            ctx.input_shape(name_from_elsewhere)
    """) == {("X", False, 3), ("Y", True, 3)}


def test_literals_handed_to_a_module_function_that_reaches_the_context_are_read():
    assert _names("""
        def rule(ctx):
            vector(ctx, "bias", 3)
            write(ctx, shape=(), where="output")
            vector(ctx, 1, 3)
            label(ctx, "not an operand")

        def vector(ctx, name, size):
            return checked(ctx, name)

        def checked(ctx, which):
            return ctx.input_with_rank(which, 1)

        def write(ctx, shape, where):
            ctx.set_output_shape(where, shape)

        def label(ctx, text):
            ctx.fail(text)
    """) == {("bias", False, 3), ("output", True, 4)}


def test_literals_a_loop_or_comprehension_walks_are_read():
    assert _names("""
        def rule(ctx):
            for name in ("gamma", "beta"):
                ctx.input_shape(name)
            for name, rank in (("W", 2), ("R", 3)):
                ctx.input_with_rank(name, rank)
            shapes = [ctx.input_shape(key) for key in ("A", "B")]
            for index in range(3):
                ctx.set_output_shape(index, None)
            for text in ("x", some_name):
                ctx.input_shape(text)
            counts = ("max_length", "num_beams")
            [ctx.input_values(count) for count in counts]
            for name in ("Y_h", "Y_c"):
                ctx.set_output_shape(name, None)
            ctx.input_shape(name)

    """) == {("gamma", False, 3), ("beta", False, 3), ("W", False, 5), ("R", False, 5), ("A", False, 7),
             ("B", False, 7), ("max_length", False, 12), ("num_beams", False, 12), ("Y_h", True, 14),
             ("Y_c", True, 14)}




@pytest.fixture
def builtin_rules(tmp_path, monkeypatch) -> Path:
    """A copy of the built-in rule modules that the compiler reads in place of the installed ones."""
    folder = tmp_path / "rules"
    shutil.copytree(rule_specs.builtin_rules_folder(), folder, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(rule_specs, "builtin_rules_folder", lambda: folder)
    return folder


def test_a_misspelt_name_in_a_built_in_rule_is_a_located_error(builtin_rules):
    module = builtin_rules / "ort_misc.py"
    source = module.read_text()
    wrong = (source.replace('ctx.input_shape("cur_tokens")', 'ctx.input_shape("cur_token")', 1)
             .replace('("Sequence", "W", "B", "C")', '("Sequence", "W", "b", "C")', 1))
    assert wrong.count("cur_token") == source.count("cur_token") and wrong != source
    module.write_text(wrong)
    with pytest.raises(CompileError) as caught:
        compile_tree(REPO / "opdefs" / "onnxruntime")
    errors = [str(d) for d in caught.value.diagnostics]
    lines = wrong.splitlines()
    cur = next(i for i, text in enumerate(lines, 1) if '"cur_token"' in text)
    assert any(f"runtime/rules/ort_misc.py:{cur}:" in e and "rule 'ort_bifurcation_detector' names input "
               "'cur_token', which BifurcationDetector 1 does not have" in e for e in errors), errors
    assert any("rule 'word_conv_embedding' names input 'b', which WordConvEmbedding 1 does not have" in e
               for e in errors), errors
    assert len(errors) == 2, errors


def test_rules_run_on_a_rearranged_view_read_no_operand_by_name():
    """A view (channels-last operators, FusedMatMul) holds a node's operands in an order of its own
    under the node's schema, where a formal name would find the wrong one."""
    import inspect

    from opspec.runtime.rules import linalg, ort_nhwc

    for function in (*ort_nhwc.STANDARD.values(), linalg.matmul):
        module = ast.parse(Path(inspect.getfile(function)).read_text())
        assert ModuleOperands(module, "m.py").of(function.__name__) == (), function.__name__
