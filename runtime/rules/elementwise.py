"""Elementwise rules: outputs shaped like an input, or like the broadcast of all inputs.

Besides shapes these rules propagate known data (small tensors such as shapes and
sizes), element by element. Elements are ints (bools as 0 and 1), floats, ``Sym`` or
None; an element function returns None whenever the result cannot be known exactly.
"""
from __future__ import annotations

import math
import struct
from typing import Callable, Mapping, Sequence

from opspec.runtime.inference.context import InferenceContext
from opspec.runtime.inference.values import Data, TensorType
from opspec.runtime.rules import implements
from opspec.runtime.shape import (
    ShapeError,
    Sym,
    add_dim,
    broadcast_shapes,
    div_dim,
    format_shape,
    merge_shapes,
    mul_dim,
)
from opspec.runtime.types import ELEMENT_NAMES, ELEMENT_TYPES

# -- element type kinds ---------------------------------------------------------------

#: Integer element types, with (bits, signed).
INT_WIDTHS: dict[int, tuple[int, bool]] = {
    2: (8, False), 3: (8, True), 4: (16, False), 5: (16, True), 6: (32, True), 7: (64, True),
    12: (32, False), 13: (64, False), 21: (4, False), 22: (4, True), 25: (2, False), 26: (2, True),
}
#: Floating-point element types (complex ones excluded).
FLOAT_ELEMS = frozenset({1, 10, 11, 16, 17, 18, 19, 20, 23, 24, 27, 28})
BOOL_ELEM = 9
_INF = float("inf")


def element_type(ctx: InferenceContext, value: object) -> int:
    """An element type code from an attribute value: a number, or a name (``"FLOAT"``)."""
    if isinstance(value, bytes):
        value = value.decode()
    if isinstance(value, str):
        code = ELEMENT_TYPES.get(value.strip().lower())
    else:
        code = value if type(value) is int and value in ELEMENT_NAMES else None
    if code is None:
        ctx.fail(f"unknown element type {value!r}")
    return code


def _integral(x: object) -> bool:
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
            return math.copysign(_INF, x) if type(x) is float else _INF
        return 1.0 / x
    return None


def _not(x):
    return None if x is None else int(not x)


_UNARY: dict[str, Callable] = {
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
    code = "f" if elem == 1 else "e" if elem == 10 else None
    if code is None or not math.isfinite(value):
        return value
    try:
        return struct.unpack(code, struct.pack(code, value))[0]
    except OverflowError:
        return math.copysign(_INF, value)


def cast_value(x: object, elem: int) -> object:
    """One element converted to element type ``elem``; None when not known exactly."""
    if x is None:
        return None
    kind = type(x)
    if elem in INT_WIDTHS:
        if kind is int:
            return _wrap_int(x, elem)
        if kind is bool:
            return int(x)
        if kind is float:
            return _wrap_int(int(x), elem) if math.isfinite(x) else None
        return x if kind is Sym else None
    if elem in FLOAT_ELEMS:
        if kind is int or kind is bool or kind is float:
            try:
                return _round_float(float(x), elem)
            except OverflowError:
                return math.copysign(_INF, x)
        return None
    if elem == BOOL_ELEM:
        return int(bool(x)) if kind is int or kind is bool or kind is float else None
    return None


def _unary_data(data: Data, compute: str, elem: int) -> Data | None:
    values = data.values
    if values is None:
        return None
    if compute == "identity":
        return data
    if compute == "cast":
        if elem not in INT_WIDTHS and elem not in FLOAT_ELEMS and elem != BOOL_ELEM:
            return None
        if elem == 7 and all(type(v) is int for v in values):  # the usual int64 shape data
            if all(-(1 << 63) <= v < (1 << 63) for v in values):
                return data
        return Data(data.shape, tuple([cast_value(v, elem) for v in values]))
    function = _UNARY.get(compute)
    if function is None:
        return None
    return Data(data.shape, tuple([function(v) for v in values]))


@implements("elementwise")
def elementwise(ctx: InferenceContext, args: Mapping[str, object]) -> None:
    """Every output takes input 0's shape; ``dtype`` names an attribute giving the elem type."""
    source = ctx.input_type(0)
    elem = None
    dtype = args.get("dtype")
    if dtype is not None and dtype in ctx.schema.attributes:
        value = ctx.attribute(dtype)
        if value is not None:
            elem = element_type(ctx, value)
    if source is not None and type(source) is not TensorType and elem is None:
        for index in range(ctx.output_count):  # a sequence or optional passes through whole
            ctx.set_output(index, source)
    else:
        shape = ctx.input_shape(0)
        ctx.set_output_shape(0, shape, elem)
        for index in range(1, ctx.output_count):
            ctx.set_output_shape(index, shape)
    compute = args.get("compute")
    if compute is not None:
        data = ctx.input_data(0)
        if data is not None:
            result = _unary_data(data, compute, ctx.output_elem(0))
            if result is not None:
                ctx.set_output_data(0, result)


# -- binary element functions ---------------------------------------------------------------

def _add(a, b):
    if type(a) is int and type(b) is int:
        return a + b
    if a is None or b is None:
        return None
    if type(a) is Sym or type(b) is Sym:
        return add_dim(a, b) if _integral(a) and _integral(b) else None
    return a + b


def _sub(a, b):
    if type(a) is int and type(b) is int:
        return a - b
    if a is None or b is None:
        return None
    if type(a) is Sym or type(b) is Sym:  # exact, and may be negative (data, not a dim)
        return a - b if _integral(a) and _integral(b) else None
    return a - b


def _mul(a, b):
    if type(a) is int and type(b) is int:
        return a * b
    if (a is None or _integral(a)) and (b is None or _integral(b)):
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
        return math.copysign(_INF, a) * math.copysign(1.0, b)


def _make_div(int_mode: bool) -> Callable:
    def divide(a, b):
        if a is None or b is None:
            return None
        if int_mode and type(a) is int and type(b) is int:
            return _trunc_div(a, b)
        if type(a) is Sym or type(b) is Sym:
            if not (_integral(a) and _integral(b)) or (type(b) is int and b <= 0):
                return None
            try:
                return div_dim(a, b, evenly=False)  # floors; equal to truncation for dims
            except (ShapeError, ZeroDivisionError):
                return None
        if type(a) is bool or type(b) is bool:
            return None
        return _float_div(float(a), float(b)) if not int_mode else None
    return divide


def _pow(a, b):
    if a is None or b is None:
        return None
    if type(b) is int and b >= 0 and _integral(a):
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
        return _INF
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
        if not (_integral(a) and _integral(b)):
            return None
        return Sym.max(a, b) if larger else Sym.min(a, b)
    if _is_nan(a) or _is_nan(b):
        return math.nan
    return a if (a >= b) == larger else b


def _max(a, b):
    return _extreme(a, b, True)


def _min(a, b):
    return _extreme(a, b, False)
    if a is None or b is None:
        return None
    if type(a) is Sym or type(b) is Sym:
        return Sym.min(a, b) if _integral(a) and _integral(b) else None
    if _is_nan(a) or _is_nan(b):
        return math.nan
    return a if a <= b else b


def _difference(a, b):
    """``a - b`` as an int when it does not depend on symbols, else None."""
    if a is None or b is None or not (_integral(a) and _integral(b)):
        return None
    d = a - b
    return d if type(d) is int else None


def _equal(a, b):
    if type(a) is Sym or type(b) is Sym:
        if a == b:
            return 1
        d = _difference(a, b)
        return None if d is None else int(d == 0)
    return None if a is None or b is None else int(a == b)


def _less(a, b):
    if type(a) is Sym or type(b) is Sym:
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


_BINARY: dict[str, Callable] = {
    "add": _add, "sub": _sub, "mul": _mul, "pow": _pow, "max": _max, "min": _min,
    "equal": _equal, "less": _less, "greater": _greater, "and": _and, "or": _or,
}


def _spread(data: Data, shape: tuple) -> Sequence | None:
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


def _binary_data(datas: list, compute: str, elem: int) -> Data | None:
    """Combine known data elementwise, broadcasting; None when it cannot be done."""
    if not all(_data_size_ok(d) for d in datas):
        return None
    try:
        shape = broadcast_shapes(*[tuple(d.shape) for d in datas])
    except ShapeError:
        return None
    columns = [_spread(d, shape) for d in datas]
    if compute == "where":
        if len(columns) != 3:
            return None
        return Data(shape, tuple([_where(c, x, y) for c, x, y in zip(*columns)]))
    if compute == "div":
        int_mode = elem in INT_WIDTHS or (elem not in FLOAT_ELEMS and all(
            _integral(v) for column in columns for v in column if v is not None))
        function = _make_div(int_mode)
    else:
        function = _BINARY.get(compute)
        if function is None:
            return None
    values = list(columns[0])
    for column in columns[1:]:
        values = [function(a, b) for a, b in zip(values, column)]
    if compute == "pow" and elem in INT_WIDTHS:  # a float power cast back to the int type
        values = [cast_value(v, elem) if type(v) is float else v for v in values]
    return Data(shape, tuple(values))


@implements("broadcast")
def broadcast(ctx: InferenceContext, args: Mapping[str, object]) -> None:
    """Outputs take the multidirectional broadcast of every input's shape."""
    count = ctx.input_count
    if count == 2:
        shape = broadcast_shapes(ctx.input_shape(0), ctx.input_shape(1))
    else:
        shape = broadcast_shapes(*[ctx.input_shape(i) for i in range(count)])
    for index in range(ctx.output_count):
        ctx.set_output_shape(index, shape)
    compute = args.get("compute")
    if compute is not None and count and ctx.input_data(0) is not None:
        datas = [ctx.input_data(i) for i in range(count)]
        if None not in datas:
            result = _binary_data(datas, compute, ctx.output_elem(0))
            if result is not None:
                ctx.set_output_data(0, result)


@implements("broadcast_legacy")
def broadcast_legacy(ctx: InferenceContext, args: Mapping[str, object]) -> None:
    """Before numpy broadcasting: equal shapes, or B stretched onto A (at ``axis``) when enabled."""
    a, b = ctx.input_shape(0), ctx.input_shape(1)
    flag_name, axis_name = args.get("broadcast"), args.get("axis")
    enabled = flag_name in ctx.schema.attributes and ctx.attribute(flag_name, 0)
    if not enabled:
        try:
            shape = merge_shapes(a, b)
        except ShapeError:
            ctx.fail(f"shapes {format_shape(a)} and {format_shape(b)} must be equal "
                     "when 'broadcast' is not set")
    elif a is None or b is None:
        shape = a
    else:
        axis = ctx.attribute(axis_name) if axis_name in ctx.schema.attributes else None
        start = len(a) - len(b) if axis is None else ctx.normalize_axis(axis, max(len(a), 1))
        if start < 0 or start + len(b) > len(a):
            where = "" if axis is None else f" at axis {axis}"
            ctx.fail(f"cannot broadcast {format_shape(b)} onto {format_shape(a)}{where}")
        out = list(a)
        for offset, dim in enumerate(b):
            if type(dim) is not int or dim == 1:
                continue  # unknown, symbolic or 1: nothing the output can use
            target = out[start + offset]
            if type(target) is int and target != dim:
                where = f" at axis {axis}" if axis is not None else ""
                ctx.fail(f"cannot broadcast {format_shape(b)} onto {format_shape(a)}{where}: "
                         f"dims {dim} and {target} differ")
            out[start + offset] = dim
        shape = tuple(out)
    for index in range(ctx.output_count):
        ctx.set_output_shape(index, shape)


@implements("same_shape")
def same_shape(ctx: InferenceContext, args: Mapping[str, object]) -> None:
    """All inputs must have one shape (merged across them), which every output takes."""
    shapes = [ctx.input_shape(i) for i in range(ctx.input_count)]
    shape = shapes[0] if shapes else None
    for other in shapes[1:]:
        if other is not shape and other != shape:
            try:
                shape = merge_shapes(shape, other)
            except ShapeError:
                ctx.fail("inputs must share one shape, got "
                         + ", ".join(format_shape(s) for s in shapes))
    for index in range(ctx.output_count):
        ctx.set_output_shape(index, shape)
