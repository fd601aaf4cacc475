"""The input and output names a rule uses are read from its source and checked by the compiler."""
from __future__ import annotations

import ast
import textwrap

from opspec.codegen.rule_operands import ModuleOperands


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
    """) == {("gamma", False, 3), ("beta", False, 3), ("W", False, 5), ("R", False, 5), ("A", False, 7),
             ("B", False, 7)}
