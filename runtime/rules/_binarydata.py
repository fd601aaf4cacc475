"""Element functions for data propagation: what binary elementwise ops compute on known data.

Elements are as in :mod:`._elementdata`; inputs broadcast as numpy does.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

from opspec.runtime.contract import Data
from opspec.runtime.contract.elements import FLOAT_ELEMS, INT_WIDTHS
from opspec.runtime.rules._elementdata import INF, cast_value, integral
from opspec.runtime.shape import ShapeError, Sym, add_dim, broadcast_shapes, div_dim, mul_dim


def _add(a, b):
    if type(a) is int and type(b) is int:
        return a + b
    if a is None or b is None:
        return None
    if type(a) is Sym or type(b) is Sym:
        return add_dim(a, b) if integral(a) and integral(b) else None
    return a + b


def _sub(a, b):
    if type(a) is int and type(b) is int:
        return a - b
    if a is None or b is None:
        return None
    if type(a) is Sym or type(b) is Sym:  # exact, and may be negative (data, not a dim)
        return a - b if integral(a) and integral(b) else None
    return a - b


def _mul(a, b):
    if type(a) is int and type(b) is int:
        return a * b
    if (a is None or integral(a)) and (b is None or integral(b)):
        return mul_dim(a, b)  # 0 times anything is 0, even unknown
    if a is None or b is None or type(a) is Sym or type(b) is Sym:
        return None
    return a * b


def _trunc_div(a: int, b: int):
    """Integer division rounding toward zero, as C does; None for a zero divisor."""
    if b == 0:
        return None
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _float_div(a, b):
    try:
        return a / b
    except ZeroDivisionError:
        if a == 0 or a != a:
            return math.nan
        return math.copysign(INF, a) * math.copysign(1.0, b)


def _make_div(int_mode: bool) -> Callable:
    def divide(a, b):
        if a is None or b is None:
            return None
        if int_mode and type(a) is int and type(b) is int:
            return _trunc_div(a, b)
        if type(a) is Sym or type(b) is Sym:
            if not (integral(a) and integral(b)) or (type(b) is int and b <= 0):
                return None
            try:
                return div_dim(a, b, evenly=False)  # floors; equal to truncation for dims
            except (ShapeError, ZeroDivisionError):
                return None
        if type(a) is bool or type(b) is bool:
            return None
        return _float_div(float(a), float(b)) if not int_mode else None
    return divide


def _make_mod(fmod: bool) -> Callable:
    """Mod's remainder: with the divisor's sign (``fmod`` 0, as Python's ``%``) or with the
    dividend's (``fmod`` 1, as C's ``fmod``); None for a zero divisor or an unknown result."""
    def remainder(a, b):
        if a is None or b is None or type(a) is bool or type(b) is bool:
            return None
        if type(a) is int and type(b) is int:
            if b == 0:
                return None
            if not fmod:
                return a % b
            magnitude = abs(a) % abs(b)
            return -magnitude if a < 0 else magnitude
        if type(a) is Sym and type(b) is int and b > 0:
            r = a.remainder(b)  # floor-based: the same for every value of the symbols, or None
            if r is None:
                return None
            return r if not fmod or r == 0 or a.never_negative else None
        if type(a) is float or type(b) is float:
            if not fmod or type(a) is Sym or type(b) is Sym:
                return None
            try:
                return math.fmod(a, b)
            except ValueError:  # a zero divisor or an infinite dividend
                return math.nan
        return None
    return remainder


def _pow(a, b):
    if a is None or b is None:
        return None
    if type(b) is int and b >= 0 and integral(a):
        if type(a) is int:
            return a ** b if b <= 64 or a in (-1, 0, 1) else None
        if b > 8:
            return None
        result = 1
        for _ in range(b):
            result = result * a
        return result
    if type(a) is Sym or type(b) is Sym:
        return None
    try:
        return math.pow(a, b)
    except OverflowError:
        return INF
    except ValueError:
        return math.nan


def _is_nan(x) -> bool:
    return type(x) is float and x != x


def _extreme(a, b, larger: bool):
    """max(a, b) when ``larger`` else min(a, b), over ints, floats (NaN wins), Syms and None."""
    if type(a) is int and type(b) is int:
        return a if (a >= b) == larger else b
    if a is None or b is None:
        return None
    if type(a) is Sym or type(b) is Sym:
        if not (integral(a) and integral(b)):
            return None
        return Sym.max(a, b) if larger else Sym.min(a, b)
    if _is_nan(a) or _is_nan(b):
        return math.nan
    return a if (a >= b) == larger else b


def _max(a, b):
    return _extreme(a, b, True)


def _min(a, b):
    return _extreme(a, b, False)


def _difference(a, b):
    """``a - b`` as an int when it does not depend on symbols, else None."""
    if a is None or b is None or not (integral(a) and integral(b)):
        return None
    d = a - b
    return d if type(d) is int else None


def _count_against_negative(a, b) -> bool:
    """True when ``a`` is a symbolic value that cannot be negative (a size) and ``b`` a
    negative int, so ``a > b`` for sure."""
    return type(b) is int and b < 0 and type(a) is Sym and a.never_negative


def _equal(a, b):
    if type(a) is Sym or type(b) is Sym:
        if a == b:
            return 1
        if _count_against_negative(a, b) or _count_against_negative(b, a):
            return 0  # torch's expand(B, -1): Equal(shape, -1) on a shape holding B
        d = _difference(a, b)
        return None if d is None else int(d == 0)
    return None if a is None or b is None else int(a == b)


def _less(a, b):
    if type(a) is Sym or type(b) is Sym:
        if _count_against_negative(a, b) or _count_against_negative(b, a):
            return int(type(a) is int)
        d = _difference(a, b)
        return None if d is None else int(d < 0)
    return None if a is None or b is None else int(a < b)


def _greater(a, b):
    return _less(b, a)


def _and(a, b):
    if (a is not None and not a) or (b is not None and not b):
        return 0
    return None if a is None or b is None else 1


def _or(a, b):
    if (a is not None and a) or (b is not None and b):
        return 1
    return None if a is None or b is None else 0


def _where(c, x, y):
    if c is None:
        return x if x is not None and x == y else None
    return x if c else y


#: Names of the binary element functions (``compute`` of the ``broadcast`` rule, with ``div``,
#: ``mod`` and ``where``).
BINARY: dict[str, Callable] = {
    "add": _add, "sub": _sub, "mul": _mul, "pow": _pow, "max": _max, "min": _min,
    "equal": _equal, "less": _less, "greater": _greater, "and": _and, "or": _or,
}


def _spread(data: Data, shape: tuple) -> Sequence:
    """``data``'s elements broadcast to the (known, int) ``shape``, flattened row-major."""
    values = data.values
    if data.shape == shape:
        return values
    count = 1
    for d in shape:
        count *= d
    if len(values) == 1:
        return values * count
    src = data.shape
    strides, stride = [], 1
    for d in reversed(src):
        strides.append(stride if d != 1 else 0)
        stride *= d
    strides.reverse()
    strides = [0] * (len(shape) - len(src)) + strides
    index = [0]
    for size, stride in zip(shape, strides):
        index = [base + j * stride for base in index for j in range(size)]
    return [values[i] for i in index]


def _data_size_ok(data: Data) -> bool:
    count = 1
    for d in data.shape:
        if type(d) is not int:
            return False
        count *= d
    return data.values is not None and len(data.values) == count


def binary_data(datas: list, compute: str, elem: int, fmod: bool = False) -> Data | None:
    """Combine known data elementwise, broadcasting; None when it cannot be done (``fmod``: the
    remainder of ``mod`` takes the dividend's sign)."""
    if not all(_data_size_ok(d) for d in datas):
        return None
    try:
        shape = broadcast_shapes(*[tuple(d.shape) for d in datas])
    except ShapeError:
        return None
    if shape is None:
        return None
    columns = [_spread(d, shape) for d in datas]
    if compute == "where":
        if len(columns) != 3:
            return None
        return Data(shape, tuple([_where(c, x, y) for c, x, y in zip(*columns)]))
    function: Callable | None
    if compute == "div":
        int_mode = elem in INT_WIDTHS or (elem not in FLOAT_ELEMS and all(
            integral(v) for column in columns for v in column if v is not None))
        function = _make_div(int_mode)
    elif compute == "mod":
        function = _make_mod(fmod)
    else:
        function = BINARY.get(compute)
        if function is None:
            return None
    values = list(columns[0])
    for column in columns[1:]:
        values = [function(a, b) for a, b in zip(values, column)]
    if compute == "pow" and elem in INT_WIDTHS:  # a float power cast back to the int type
        values = [cast_value(v, elem) if type(v) is float else v for v in values]
    return Data(shape, tuple(values))
