"""Element functions for data propagation: what unary elementwise ops compute on known data.

Elements are ints (bools as 0 and 1), floats, ``Sym`` or None; an element function
returns None whenever the result cannot be known exactly. Binary functions are in
:mod:`._binarydata`.
"""
from __future__ import annotations

import math
import struct
from typing import Callable

from opspec.runtime.contract import Data
from opspec.runtime.contract.elements import BOOL, FLOAT, FLOAT16, FLOAT_ELEMS, INT64, INT_WIDTHS
from opspec.runtime.shape import Sym

INF = float("inf")

def integral(x: object) -> bool:
    return type(x) is int or type(x) is Sym


# -- unary element functions --------------------------------------------------------------

def _neg(x):
    return None if x is None else -x


def _abs(x):
    return abs(x) if type(x) is int or type(x) is float else None


def _floor(x):
    if type(x) is float and math.isfinite(x):
        return float(math.floor(x))
    return x


def _ceil(x):
    if type(x) is float and math.isfinite(x):
        return float(math.ceil(x))
    return x


def _sqrt(x):
    if type(x) is int or type(x) is float:
        return math.sqrt(x) if x >= 0 else math.nan
    return None


def _reciprocal(x):
    if type(x) is int or type(x) is float:
        if x == 0:
            return math.copysign(INF, x) if type(x) is float else INF
        return 1.0 / x
    return None


def _not(x):
    return None if x is None else int(not x)


#: Names of the unary element functions (``compute`` of the ``elementwise`` rule).
UNARY: dict[str, Callable] = {
    "neg": _neg, "abs": _abs, "floor": _floor, "ceil": _ceil, "sqrt": _sqrt,
    "reciprocal": _reciprocal, "not": _not,
}


def _wrap_int(value: int, elem: int) -> int:
    """``value`` reduced to the bits of integer type ``elem``, as a C cast does."""
    bits, signed = INT_WIDTHS[elem]
    value &= (1 << bits) - 1
    if signed and value >> (bits - 1):
        value -= 1 << bits
    return value


def _round_float(value: float, elem: int) -> float:
    """``value`` rounded to float32 or float16 precision (others kept as they are)."""
    code = "f" if elem == FLOAT else "e" if elem == FLOAT16 else None
    if code is None or not math.isfinite(value):
        return value
    try:
        return struct.unpack(code, struct.pack(code, value))[0]
    except OverflowError:
        return math.copysign(INF, value)


def cast_value(x: object, elem: int) -> object:
    """One element converted to element type ``elem``; None when not known exactly."""
    if x is None:
        return None
    if elem in INT_WIDTHS:
        if type(x) is int:
            return _wrap_int(x, elem)
        if type(x) is bool:
            return int(x)
        if type(x) is float:
            return _wrap_int(int(x), elem) if math.isfinite(x) else None
        return x if type(x) is Sym else None
    kind = type(x)
    if elem in FLOAT_ELEMS:
        if type(x) is int or type(x) is bool or type(x) is float:
            try:
                return _round_float(float(x), elem)
            except OverflowError:
                return math.copysign(INF, x)
        return None
    if elem == BOOL:
        return int(bool(x)) if kind is int or kind is bool or kind is float else None
    return None


def unary_data(data: Data, compute: str, elem: int) -> Data | None:
    values = data.values
    if values is None:
        return None
    if compute == "identity":
        return data
    if compute == "cast":
        if elem not in INT_WIDTHS and elem not in FLOAT_ELEMS and elem != BOOL:
            return None
        if elem == INT64 and all(type(v) is int for v in values):  # the usual int64 shape data
            if all(-(1 << 63) <= v < (1 << 63) for v in values):
                return data
        return Data(data.shape, tuple([cast_value(v, elem) for v in values]))
    function = UNARY.get(compute)
    if function is None:
        return None
    return Data(data.shape, tuple([function(v) for v in values]))
