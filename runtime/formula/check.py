"""Checking a formula's names and arities against an operator's signature, before anything runs."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Mapping

from .functions import FUNCTIONS, ArgKind
from .syntax import Call, Formula, FormulaSyntaxError, Name, Number, Operation, Ratio, parse_formula

__all__ = ["FormulaNames", "attribute_names", "formula_problems"]

_LIST_KINDS = frozenset({"ints"})
_ANY_LIST_KINDS = frozenset({"ints", "floats", "strings"})
_VALUE_KINDS = frozenset({"int"})


@dataclass(frozen=True)
class FormulaNames:
    """What a formula may name: inputs and outputs (in order) and attributes with their kinds
    (``int``, ``ints``, ``float``, ...), how many inputs and outputs a node may have at most, and
    the functions it may call (None: every one)."""

    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    attributes: Mapping[str, str] = field(default_factory=dict)
    max_inputs: int | None = None
    max_outputs: int | None = None
    functions: frozenset[str] | None = None


def formula_problems(text: str, names: FormulaNames) -> list[tuple[str, int]]:
    """Every problem of ``text`` as ``(message, column)``: its syntax, else each name or call that
    does not fit the signature. Empty when the formula is sound."""
    try:
        formula = parse_formula(text)
    except FormulaSyntaxError as error:
        return [(str(error), error.offset)]
    return list(_problems(formula, ArgKind.VALUE, names))


def _problems(node: Formula, kind: ArgKind, names: FormulaNames) -> Iterator[tuple[str, int]]:
    if kind is ArgKind.TENSOR:
        yield from _tensor_problems(node, names)
        return
    if kind in (ArgKind.LIST, ArgKind.ANY_LIST):
        allowed = _LIST_KINDS if kind is ArgKind.LIST else _ANY_LIST_KINDS
        if not isinstance(node, Name) or names.attributes.get(node.name) not in allowed:
            yield f"{node} is not a list attribute ({', '.join(sorted(allowed))}) of the operator", node.offset
        return
    if kind is ArgKind.STRING:
        if not isinstance(node, Name) or names.attributes.get(node.name) != "string":
            yield f"{node} is not a string attribute of the operator", node.offset
        return
    if kind is ArgKind.WORD:
        if not isinstance(node, Name):
            yield f"expected a bare word (a value of the string attribute), found {node}", node.offset
        return
    if kind is ArgKind.RATIO:
        if not isinstance(node, Ratio):
            yield f"expected a ratio `a / b`, found {node}", node.offset
            return
        yield from _problems(node.numerator, ArgKind.VALUE, names)
        yield from _problems(node.denominator, ArgKind.VALUE, names)
        return
    if kind is ArgKind.INDEX:
        if not isinstance(node, Number):
            yield f"a position must be a number, not {node}", node.offset
        return
    if isinstance(node, Number):
        return
    if isinstance(node, Ratio):
        yield "`a / b` is only allowed inside ceil() or floor(); use // for floor division", node.offset
        return
    if isinstance(node, Name):
        found = names.attributes.get(node.name)
        if found is None:
            where = " (an input or output goes inside dim(), rank() or numel())" \
                if node.name in names.inputs or node.name in names.outputs else ""
            yield f"unknown attribute {node.name!r}{where}", node.offset
        elif found not in _VALUE_KINDS:
            yield f"attribute {node.name!r} is {found}, not an int", node.offset
        return
    if isinstance(node, Operation):
        yield from _problems(node.left, ArgKind.VALUE, names)
        yield from _problems(node.right, ArgKind.VALUE, names)
        return
    if node.function in ("input", "output") and _callable(node.function, names):
        yield f"{node.function}() names a tensor; use it inside dim(), rank() or numel()", node.offset
        return
    yield from _call_problems(node, names)


def _callable(function: str, names: FormulaNames) -> bool:
    return function in FUNCTIONS and (names.functions is None or function in names.functions)


def _call_problems(node: Call, names: FormulaNames) -> Iterator[tuple[str, int]]:
    function = FUNCTIONS.get(node.function)
    allowed = ", ".join(sorted(FUNCTIONS if names.functions is None else names.functions)) or "none"
    if function is None:
        yield f"unknown function {node.function!r} (known: {allowed})", node.offset
        return
    if not _callable(node.function, names):
        yield f"{node.function}() is not allowed here (allowed: {allowed})", node.offset
        return
    if not function.accepts(len(node.args)):
        yield f"{node.function}() takes {function.arity} arguments, not {len(node.args)}", node.offset
        return
    for position, arg in enumerate(node.args):
        yield from _problems(arg, function.kind_at(position), names)


def _tensor_problems(node: Formula, names: FormulaNames) -> Iterator[tuple[str, int]]:
    if isinstance(node, Name):
        if node.name not in names.inputs and node.name not in names.outputs:
            yield f"{node.name!r} is not an input or output of the operator", node.offset
        return
    if isinstance(node, Call) and node.function in ("input", "output"):
        yield from _call_problems(node, names)
        if len(node.args) == 1 and isinstance(node.args[0], Number):
            limit = names.max_inputs if node.function == "input" else names.max_outputs
            if limit is not None and node.args[0].value >= limit:
                yield f"{node.function}({node.args[0].value}): the operator has at most {limit}", node.offset
        return
    yield f"expected an input or output name, found {node}", node.offset


def attribute_names(formula: Formula) -> frozenset[str]:
    """The attributes ``formula`` reads: each bare name outside a tensor argument or a word."""
    if isinstance(formula, Name):
        return frozenset({formula.name})
    if isinstance(formula, Operation):
        return attribute_names(formula.left) | attribute_names(formula.right)
    if isinstance(formula, Ratio):
        return attribute_names(formula.numerator) | attribute_names(formula.denominator)
    if isinstance(formula, Call):
        function = FUNCTIONS.get(formula.function)
        return frozenset().union(*(
            attribute_names(arg) for position, arg in enumerate(formula.args)
            if function is None or function.kind_at(position) not in (ArgKind.TENSOR, ArgKind.WORD)))
    return frozenset()
