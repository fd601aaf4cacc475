"""Evaluating a formula against one node: exact integers and symbolic dims, or unknown.

A result is an ``int``, a :class:`~opspec.runtime.shape.Sym` (an expression of the symbols the
node's dims carry) or ``None`` when a size or attribute it needs is unknown, or when the exact
value has no form in the shape algebra (``N // M``). Unknown never turns into a number, except
that anything times 0 is 0 (an absent input's size is 0).
"""
from __future__ import annotations

from typing import Any, Callable, Protocol

from opspec.runtime.shape import ShapeError, Sym

from .functions import FUNCTIONS
from .syntax import Call, Formula, Name, Number, Operation, Ratio, parse_formula

__all__ = ["FormulaEnv", "Value", "evaluate"]

Value = Any  # int | Sym | None
#: What a tensor argument gives: whether it is present, and its shape (None: unknown rank).
Tensor = tuple[bool, Any]


class FormulaEnv(Protocol):
    """What a formula reads from the node it is evaluated for. A method may raise
    :class:`LookupError` for what the env does not hold: the formula's value is then unknown."""

    def tensor(self, name: str) -> Tensor:
        """The input or output of that name."""

    def tensor_at(self, output: bool, index: int) -> Tensor:
        """The input (or output) at that position."""

    def count(self, output: bool) -> int:
        """How many inputs the node supplies (or outputs it has)."""

    def attribute(self, name: str) -> Any:
        """The attribute's value as the node sets it or its default; None when neither."""


class _Unknown(Exception):
    """A value the formula needs is unknown."""


def evaluate(formula: Formula | str, env: FormulaEnv) -> Value:
    """The formula's value for the node ``env`` describes (``None``: unknown)."""
    if isinstance(formula, str):
        formula = parse_formula(formula)
    try:
        return _value(formula, env)
    except (_Unknown, LookupError, ShapeError, ZeroDivisionError, OverflowError):
        return None


def _known(value: Value) -> Any:
    if value is None:
        raise _Unknown
    return value


def _value(node: Formula, env: FormulaEnv) -> Value:
    if isinstance(node, Number):
        return node.value
    if isinstance(node, Name):
        return _int_attribute(env.attribute(node.name))
    if isinstance(node, Operation):
        return _operate(node.op, _soft(node.left, env), _soft(node.right, env))
    if isinstance(node, Ratio):
        raise _Unknown  # the checker refuses a ratio outside ceil/floor
    return _CALLS[node.function](node, env)


def _soft(node: Formula, env: FormulaEnv) -> Value:
    """The value, or None when unknown (so that ``unknown * 0`` can still be 0)."""
    try:
        return _value(node, env)
    except (_Unknown, LookupError, ShapeError, ZeroDivisionError):
        return None


def _int_attribute(value: Any) -> Value:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    raise _Unknown


def _operate(op: str, left: Value, right: Value) -> Value:
    if op == "*" and (left == 0 or right == 0) and (type(left) is int or type(right) is int):
        return 0
    left, right = _known(left), _known(right)
    if op == "+":
        return left + right
    if op == "-":
        return left - right
    if op == "*":
        return left * right
    if op == "%":
        return _remainder(left, right)
    return _floor_div(left, right)


def _floor_div(left: Any, right: Any) -> Value:
    if type(right) is int and right == 0:
        raise _Unknown
    if type(left) is int and type(right) is int:
        return left // right
    if type(left) is int:
        if left == 0:
            return 0
        raise _Unknown
    return left // right


def _remainder(left: Any, right: Any) -> Value:
    """``left % right`` with Python's sign convention: ``left - right * (left // right)``."""
    if type(left) is int and type(right) is int:
        if right == 0:
            raise _Unknown
        return left % right
    return left - right * _floor_div(left, right)


def _ceil_div(left: Any, right: Any) -> Value:
    if type(right) is int and right == 0:
        raise _Unknown
    if type(left) is int and type(right) is int:
        return -(-left // right)
    if type(left) is int:
        if left == 0:
            return 0
        raise _Unknown
    return left.ceildiv(right)


def _tensor(node: Formula, env: FormulaEnv) -> Tensor:
    if isinstance(node, Name):
        return env.tensor(node.name)
    if isinstance(node, Call) and node.function in ("input", "output") and isinstance(node.args[0], Number):
        return env.tensor_at(node.function == "output", node.args[0].value)
    raise _Unknown


def _shape(node: Formula, env: FormulaEnv) -> tuple[bool, tuple[Any, ...]]:
    present, shape = _tensor(node, env)
    if present and shape is None:
        raise _Unknown
    return present, shape if present else ()


def _dim(node: Call, env: FormulaEnv) -> Value:
    present, shape = _shape(node.args[0], env)
    if not present:
        raise _Unknown
    axis = _known(_value(node.args[1], env))
    if type(axis) is not int or not -len(shape) <= axis < len(shape):
        raise _Unknown
    return shape[axis]


def _rank(node: Call, env: FormulaEnv) -> Value:
    present, shape = _tensor(node.args[0], env)
    if not present:
        return 0
    return None if shape is None else len(shape)


def _numel(node: Call, env: FormulaEnv) -> Value:
    present, shape = _tensor(node.args[0], env)
    if not present:
        return 0
    if shape is None:
        raise _Unknown
    bounds = [_known(_value(arg, env)) for arg in node.args[1:]]
    if any(type(bound) is not int for bound in bounds):
        raise _Unknown
    dims = shape[bounds[0]:bounds[1] if len(bounds) > 1 else None] if bounds else shape
    if any(d == 0 for d in dims):
        return 0
    product: Value = 1
    for d in dims:
        product = product * _known(d)
    return product


def _present(node: Call, env: FormulaEnv) -> Value:
    return int(_tensor(node.args[0], env)[0])


def _count(node: Call, env: FormulaEnv) -> Value:
    return env.count(node.function == "outputs")


def _ints(node: Call, env: FormulaEnv) -> tuple[int, ...]:
    name = node.args[0]
    value = env.attribute(name.name) if isinstance(name, Name) else None
    if not isinstance(value, (list, tuple)) or not all(type(v) is int for v in value):
        raise _Unknown
    return tuple(value)


def _prod(node: Call, env: FormulaEnv) -> Value:
    product = 1
    for v in _ints(node, env):
        product *= v
    return product


def _len(node: Call, env: FormulaEnv) -> Value:
    name = node.args[0]
    value = env.attribute(name.name) if isinstance(name, Name) else None
    if not isinstance(value, (list, tuple)):
        raise _Unknown
    return len(value)


def _min_max(node: Call, env: FormulaEnv) -> Value:
    values = [_known(_value(arg, env)) for arg in node.args]
    return Sym.min(*values) if node.function == "min" else Sym.max(*values)


def _rounded(node: Call, env: FormulaEnv) -> Value:
    ratio = node.args[0]
    if not isinstance(ratio, Ratio):
        raise _Unknown
    numerator, denominator = _known(_value(ratio.numerator, env)), _known(_value(ratio.denominator, env))
    return (_ceil_div if node.function == "ceil" else _floor_div)(numerator, denominator)


def _if(node: Call, env: FormulaEnv) -> Value:
    condition = _value(node.args[0], env)
    if type(condition) is int:
        return _value(node.args[1 if condition else 2], env)
    chosen, other = _value(node.args[1], env), _value(node.args[2], env)
    if chosen is not None and chosen == other:
        return chosen
    raise _Unknown


def _is(node: Call, env: FormulaEnv) -> Value:
    name = node.args[0]
    value = env.attribute(name.name) if isinstance(name, Name) else None
    if not isinstance(value, str):
        raise _Unknown
    return int(any(isinstance(word, Name) and word.name == value for word in node.args[1:]))


def _tensor_only(node: Call, env: FormulaEnv) -> Value:
    raise _Unknown  # input()/output() outside a tensor argument: the checker refuses it


_CALLS: dict[str, Callable[[Call, FormulaEnv], Value]] = {
    "dim": _dim, "rank": _rank, "numel": _numel, "present": _present, "inputs": _count, "outputs": _count,
    "prod": _prod, "len": _len, "min": _min_max, "max": _min_max, "ceil": _rounded, "floor": _rounded,
    "if": _if, "is": _is, "input": _tensor_only, "output": _tensor_only,
}
assert set(_CALLS) == set(FUNCTIONS)
