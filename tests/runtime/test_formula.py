"""The formula language: parsing with located errors, name checks, exact evaluation."""
from __future__ import annotations

from typing import Any

import pytest

from opspec.runtime.formula import (ARITHMETIC, FormulaNames, FormulaSyntaxError, attribute_names, evaluate,
                                    formula_problems, parse_formula)
from opspec.runtime.shape import Sym, parse_dim

B, S = Sym("B"), Sym("S")


class Env:
    """A node with inputs A (B, S, 64), W (64, 32), optional C absent, X of unknown rank; output Y (B, S, 32)."""

    tensors: dict[str, tuple[bool, Any]] = {
        "A": (True, (B, S, 64)), "W": (True, (64, 32)), "C": (False, None), "X": (True, None),
        "Y": (True, (B, S, 32)),
    }
    attributes: dict[str, Any] = {"transA": 1, "kernel_shape": [3, 3], "alpha": 0.5, "mode": "silu"}

    def tensor(self, name: str) -> tuple[bool, Any]:
        return self.tensors[name]

    def tensor_at(self, output: bool, index: int) -> tuple[bool, Any]:
        return self.tensors[["A", "W", "C", "X"][index] if not output else "Y"]

    def count(self, output: bool) -> int:
        return 1 if output else 2

    def attribute(self, name: str) -> Any:
        return self.attributes.get(name)


@pytest.mark.parametrize("text, expected", [
    ("numel(Y) * dim(A, -1)", 2048 * B * S),
    ("numel(A, 1)", 64 * S),
    ("numel(A, 0, 2)", B * S),
    ("if(transA, dim(A, 0), dim(A, 1))", B),
    ("ceil((dim(A, 1) - 1) / 2) + 1", parse_dim("floor(S/2)+1")),
    ("floor(dim(A, 1) / 4)", S // 4),
    ("prod(kernel_shape) * numel(output(0))", 288 * B * S),
    ("present(C) * numel(Y) + numel(C) + rank(C)", 0),
    ("max(dim(A, 1), 64) - min(dim(W, 0), 1)", Sym.max(S, 64) - 1),
    ("inputs() - 1 + outputs() + len(kernel_shape) + rank(input(1))", 6),
    ("-dim(W, 1) // 5", -7),
    ("numel(X) * 0", 0),
    ("-dim(W, 1) % 5 + 7 % -3 * 10 + dim(A, 2) % dim(W, 1)", 3 - 20 + 0),
    ("(dim(A, 1) * 4 + 3) % 2 + 0 % dim(A, 0)", 1),
    ("dim(A, 1) * 6 % dim(A, 1)", 0),
    ("is(mode, silu) * numel(Y) + is(mode, none, relu)", 32 * B * S),
    ("is(mode, swish, silu)", 1),
])
def test_evaluates_exactly(text: str, expected: Any) -> None:
    assert evaluate(text, Env()) == expected


@pytest.mark.parametrize("text", [
    "numel(X)", "dim(X, 0)", "dim(A, 3)", "dim(C, 0)", "dim(A, 1) // dim(A, 0)", "alpha", "5 // 0",
    "ceil(dim(A, 0) / 0)", "if(dim(A, 0), 1, 2)", "prod(alpha)", "5 % 0", "dim(A, 1) % 0", "7 % dim(A, 1)",
    "dim(A, 1) % dim(A, 0)",
    "is(unset, silu)", "is(alpha, silu)",
])
def test_unknown_when_a_needed_value_is(text: str) -> None:
    assert evaluate(text, Env()) is None


NAMES = FormulaNames(("A", "W", "C"), ("Y",), {"transA": "int", "kernel_shape": "ints", "alpha": "float",
                                                   "mode": "string"}, 3, 1)


@pytest.mark.parametrize("text, message, column", [
    ("numel(Z)", "'Z' is not an input or output", 6),
    ("1 + dim(A)", "dim() takes 2 arguments, not 1", 4),
    ("alpha + 1", "attribute 'alpha' is float, not an int", 0),
    ("2 * beta", "unknown attribute 'beta'", 4),
    ("A + 1", "an input or output goes inside dim()", 0),
    ("cube(A)", "unknown function 'cube'", 0),
    ("numel(input(5))", "input(5): the operator has at most 3", 6),
    ("prod(transA)", "not a list attribute (ints)", 5),
    ("len(alpha)", "not a list attribute (floats, ints, strings)", 4),
    ("dim(A, 0) / 2", "only allowed inside ceil() or floor()", 10),
    ("ceil(dim(A, 0))", "expected a ratio", 5),
    ("is(transA, silu)", "transA is not a string attribute", 3),
    ("is(mode, 1)", "expected a bare word", 9),
    ("is(mode)", "is() takes 2 or more arguments, not 1", 0),
    ("mode + 1", "attribute 'mode' is string, not an int", 0),
    ("dim(A, ", "ends where a value was expected", 7),
    ("1 $ 2", "unexpected character '$'", 2),
    ("", "empty", 0),
])
def test_problems_are_located(text: str, message: str, column: int) -> None:
    problems = formula_problems(text, NAMES)
    assert len(problems) == 1 and message in problems[0][0] and problems[0][1] == column, problems


def test_a_formula_may_be_held_to_some_functions() -> None:
    arithmetic = FormulaNames(attributes={"K": "int", "block": "int", "X": "ints"}, functions=ARITHMETIC)
    assert formula_problems("ceil(K / block) * max(K, 2) % if(K, 3, 4)", arithmetic) == []
    assert formula_problems("K + numel(input(0))", arithmetic) == [
        ("numel() is not allowed here (allowed: ceil, floor, if, max, min)", 4)]
    assert formula_problems("input(0)", arithmetic) == [
        ("input() is not allowed here (allowed: ceil, floor, if, max, min)", 0)]
    assert formula_problems("prod(X)", arithmetic)[0][0].startswith("prod() is not allowed here")


def test_attribute_names_are_the_names_outside_tensor_arguments() -> None:
    assert attribute_names(parse_formula("dim(A, axis) * ceil(K / block) + numel(Y, start) + prod(kernel)")) == {
        "axis", "K", "block", "start", "kernel"}
    assert attribute_names(parse_formula("rank(A) + 1")) == frozenset()
    assert attribute_names(parse_formula("is(mode, silu, swish) * K")) == {"mode", "K"}


def test_sound_formulas_have_no_problems() -> None:
    for text in ("numel(Y) * dim(A, -1)", "present(C) * numel(Y)", "prod(kernel_shape) * numel(output(0))",
                 "if(transA, dim(A, 0), dim(A, 1))", "ceil(dim(A, 1) / 2)", "max(1, inputs() - 1) * numel(Y)",
                 "is(mode, silu, swish) * numel(Y)"):
        assert formula_problems(text, NAMES) == []


def test_hostile_text_is_refused_without_a_crash() -> None:
    with pytest.raises(FormulaSyntaxError):
        parse_formula("(" * 10_000 + "1" + ")" * 10_000)
    with pytest.raises(FormulaSyntaxError):
        parse_formula("-" * 5000 + "1")
    with pytest.raises(FormulaSyntaxError):
        parse_formula("1+" * 2000 + "1")
