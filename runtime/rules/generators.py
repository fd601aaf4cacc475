"""Generator rules: tensors made from attributes (Constant) or from requested sizes.

Tensor-valued attributes may arrive in several forms; :func:`tensor_value` reads each
into ``(elem, shape, values)``: an object with ``elem``, ``shape`` (or ``dims``) and
``values``; a ``TensorProto`` or ``SparseTensorProto`` message (opspec's or onnx's);
or a numpy array.
"""
from __future__ import annotations

import math
import struct
from typing import Mapping

from opspec.runtime.inference.context import InferenceContext
from opspec.runtime.inference.convert import DATA_LIMIT
from opspec.runtime.inference.values import Data
from opspec.runtime.rules import implements
from opspec.runtime.shape import Sym, ceil_div_dim, format_shape, num_elements

#: Known data is recorded only for numeric tensors up to this many elements.
MAX_DATA_ELEMENTS = DATA_LIMIT

FLOAT, INT64, STRING = 1, 7, 8

#: Element type -> struct code of its little-endian raw form, and the typed field that
#: may hold it instead.
_RAW_FORMATS = {
    1: ("f", "float_data"), 2: ("B", "int32_data"), 3: ("b", "int32_data"), 4: ("H", "int32_data"),
    5: ("h", "int32_data"), 6: ("i", "int32_data"), 7: ("q", "int64_data"), 9: ("?", "int32_data"),
    10: ("e", "int32_data"), 11: ("d", "double_data"), 12: ("I", "uint64_data"),
    13: ("Q", "uint64_data"), 16: ("bf16", "int32_data"),
}
#: numpy dtype name -> element type.
_NUMPY_TYPES = {
    "float32": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6, "int64": 7,
    "bool": 9, "float16": 10, "float64": 11, "uint32": 12, "uint64": 13,
}


def _half_bits(bits: int) -> float:
    return struct.unpack("<e", struct.pack("<H", bits & 0xFFFF))[0]


def _bfloat16_bits(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", (bits & 0xFFFF) << 16))[0]


def _decode(proto, elem: int, count: int | None):
    """Elements of a ``TensorProto`` as a tuple, or None when not decodable here."""
    if getattr(proto, "data_location", 0) == 1 or elem not in _RAW_FORMATS or count is None:
        return None
    code, field = _RAW_FORMATS[elem]
    raw = getattr(proto, "raw_data", b"")
    if raw:
        if code == "bf16":
            bits = struct.unpack(f"<{len(raw) // 2}H", raw)
            values = tuple([_bfloat16_bits(b) for b in bits])
        else:
            size = struct.calcsize(code)
            if len(raw) % size:
                return None
            values = struct.unpack(f"<{len(raw) // size}{code}", raw)
    else:
        values = tuple(getattr(proto, field))
        if elem == 10:
            values = tuple([_half_bits(b) for b in values])
        elif elem == 16:
            values = tuple([_bfloat16_bits(b) for b in values])
    if elem == 9:
        values = tuple([int(bool(v)) for v in values])
    return tuple(values) if len(values) == count else None


def _dense_from_sparse(sparse, elem: int, shape: tuple, count: int):
    """The dense elements of a ``SparseTensorProto``, or None."""
    values = _decode(sparse.values, elem, _count(tuple(sparse.values.dims)))
    index_dims = tuple(sparse.indices.dims)
    indices = _decode(sparse.indices, INT64, _count(index_dims))
    if values is None or indices is None:
        return None
    zero = 0.0 if values and type(values[0]) is float else 0
    dense = [zero] * count
    if len(index_dims) == 2:  # coordinates: one row of `rank` indices per value
        rank = index_dims[1]
        flat = []
        for row in range(len(values)):
            position = 0
            for axis in range(rank):
                position = position * shape[axis] + indices[row * rank + axis]
            flat.append(position)
        indices = flat
    if len(indices) != len(values) or any(not 0 <= i < count for i in indices):
        return None
    for position, value in zip(indices, values):
        dense[position] = value
    return tuple(dense)


def _count(shape: tuple) -> int | None:
    count = num_elements(shape)
    return count if type(count) is int else None


def tensor_value(value: object) -> tuple[int, tuple | None, tuple | None]:
    """``(elem, shape, values)`` of a tensor attribute; ``values`` None when not decoded."""
    if hasattr(value, "elem"):
        shape = getattr(value, "shape", None)
        if shape is None:
            shape = getattr(value, "dims", None)
        values = getattr(value, "values", None)
        return (value.elem, None if shape is None else tuple(shape),
                None if values is None else tuple(values))
    if type(value).__module__.startswith("numpy"):
        elem = _NUMPY_TYPES.get(str(value.dtype), 0)
        values = tuple(value.ravel().tolist()) if elem else None
        if elem == 9:
            values = tuple([int(v) for v in values])
        return elem, tuple(value.shape), values
    if hasattr(value, "indices") and hasattr(value, "values") and hasattr(value, "dims"):
        elem = value.values.data_type
        shape = tuple(value.dims)
        count = _count(shape)
        values = None
        if count is not None and count <= MAX_DATA_ELEMENTS:
            values = _dense_from_sparse(value, elem, shape, count)
        return elem, shape, values
    if hasattr(value, "data_type") and hasattr(value, "dims"):
        shape = tuple(value.dims)
        count = _count(shape)
        fits = count is not None and count <= MAX_DATA_ELEMENTS
        values = _decode(value, value.data_type, count) if fits else None
        return value.data_type, shape, values
    raise TypeError(f"not a tensor value: {type(value).__name__}")


def _numeric(values) -> bool:
    return all(type(v) in (int, float, bool) for v in values)


def _set_constant(ctx: InferenceContext, elem: int, shape: tuple, values) -> None:
    ctx.set_output_shape(0, shape, elem)
    if values is not None and len(values) <= MAX_DATA_ELEMENTS and _numeric(values):
        ctx.set_output_data(0, Data(shape, tuple(values)))


_VALUE_ATTRIBUTES = ("value", "sparse_value", "value_float", "value_floats", "value_int",
                     "value_ints", "value_string", "value_strings")


@implements("constant")
def constant(ctx: InferenceContext, args: Mapping[str, object]) -> None:
    """Type, shape and (small numeric) data of whichever value attribute the node sets."""
    offered = [name for name in _VALUE_ATTRIBUTES if name in ctx.schema.attributes]
    given = [name for name in offered if ctx.attribute(name) is not None]
    if len(given) != 1:
        choices = f"attribute {offered[0]!r}" if len(offered) == 1 else f"exactly one of {', '.join(offered)}"
        ctx.fail(f"{choices} must be set, got " + (", ".join(given) if given else "none"))
    name = given[0]
    value = ctx.attribute(name)
    if name in ("value", "sparse_value"):
        try:
            elem, shape, values = tensor_value(value)
        except TypeError as e:
            ctx.fail(f"attribute {name!r}: {e}")
        _set_constant(ctx, elem, shape, values)
    elif name == "value_float":
        _set_constant(ctx, FLOAT, (), (float(value),))
    elif name == "value_int":
        _set_constant(ctx, INT64, (), (int(value),))
    elif name == "value_floats":
        _set_constant(ctx, FLOAT, (len(value),), tuple([float(v) for v in value]))
    elif name == "value_ints":
        _set_constant(ctx, INT64, (len(value),), tuple([int(v) for v in value]))
    elif name == "value_string":
        ctx.set_output_shape(0, (), STRING)
    else:
        ctx.set_output_shape(0, (len(value),), STRING)


@implements("constant_of_shape")
def constant_of_shape(ctx: InferenceContext, args: Mapping[str, object]) -> None:
    """A tensor whose shape is the input's contents, filled with ``value`` (float 0 by default)."""
    elem, fill = FLOAT, 0.0
    value_name = args.get("value")
    value = ctx.attribute(value_name) if value_name in ctx.schema.attributes else None
    if value is not None:
        try:
            elem, value_shape, values = tensor_value(value)
        except TypeError as e:
            ctx.fail(f"attribute {value_name!r}: {e}")
        count = _count(value_shape) if values is None else len(values)
        if count is not None and count != 1:
            ctx.fail(f"'{value_name}' must hold exactly one element, got shape {format_shape(value_shape)}")
        fill = values[0] if values else None
    index = ctx.input_index(args.get("input", "input"))
    if index is None:
        ctx.set_output_shape(0, None, elem)
        return
    source = ctx.input_shape(index)
    if source is not None and len(source) != 1:
        ctx.fail(f"the shape input must be 1-D, got shape {format_shape(source)}")
    requested = ctx.input_values(index)
    if requested is None:
        length = source[0] if source is not None else None
        shape = tuple([ctx.fresh_dim() for _ in range(length)]) if type(length) is int else None
        ctx.set_output_shape(0, shape, elem)
        return
    dims = []
    for dim in requested:
        if type(dim) is int:
            if dim < 0:
                ctx.fail(f"requested shape {list(requested)} has a negative dim")
            dims.append(dim)
        else:
            dims.append(dim if type(dim) is Sym else ctx.fresh_dim())
    shape = tuple(dims)
    ctx.set_output_shape(0, shape, elem)
    count = _count(shape)
    if fill is not None and count is not None and count <= MAX_DATA_ELEMENTS and _numeric((fill,)):
        ctx.set_output_data(0, Data(shape, (fill,) * count))


def _scalar(ctx: InferenceContext, index: int, name: str):
    """The known value of scalar input ``index`` (int, float, Sym) or None."""
    shape = ctx.input_shape(index)
    if shape is not None and shape != () and _count(shape) not in (None, 1):
        ctx.fail(f"{name} must be a scalar, got shape {format_shape(shape)}")
    values = ctx.input_values(index)
    if values is None or len(values) != 1:
        return None
    value = values[0]
    return value if type(value) in (int, float, Sym) else None


def _range_length(start, limit, delta):
    """``max(ceil((limit - start) / delta), 0)``, symbolic when it can be; None if unknown."""
    if start is None or limit is None or delta is None:
        return None
    if type(start) is int and type(limit) is int and type(delta) is int:
        return max(-((start - limit) // delta), 0)
    if type(start) is Sym or type(limit) is Sym:
        if type(delta) is not int or type(start) is float or type(limit) is float:
            return None
        difference = limit - start
        if type(difference) is int:
            return max(-(-difference // delta), 0)
        # symbolic bounds are taken to be ordered along delta (as shape-derived values are)
        return ceil_div_dim(difference if delta > 0 else -difference, abs(delta))
    if type(delta) is Sym:
        return None
    ratio = (limit - start) / delta
    return max(math.ceil(ratio), 0) if math.isfinite(ratio) else None


@implements("range")
def range_(ctx: InferenceContext, args: Mapping[str, object]) -> None:
    """1-D, of ``max(ceil((limit - start) / delta), 0)`` elements when the inputs are known."""
    start, limit, delta = [_scalar(ctx, i, name) for i, name in enumerate(("start", "limit", "delta"))]
    if delta == 0:
        ctx.fail("delta must not be zero")
    length = _range_length(start, limit, delta)
    ctx.set_output_shape(0, (length if length is not None else ctx.fresh_dim(),))
    if type(length) is int and length <= MAX_DATA_ELEMENTS and type(start) is not Sym \
            and type(limit) is not Sym:
        if type(start) is int and type(delta) is int:
            values = tuple(range(start, start + length * delta, delta))
        else:
            values = tuple([start + i * delta for i in range(length)])
        ctx.set_output_data(0, Data((length,), values))
