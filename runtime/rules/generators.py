"""Generator rules: tensors made from attributes (Constant) or from requested sizes.

Tensor-valued attributes arrive already read (as
:class:`~opspec.runtime.contract.TensorValue`), so these rules never touch protobuf.
"""
from __future__ import annotations

import math

from opspec.runtime.contract import (
    DATA_LIMIT,
    FLOAT,
    INT64,
    STRING,
    Data,
    InferenceContext,
    attribute,
    input,
    option,
    rule,
)
from opspec.runtime.shape import Dim, Shape, Sym, ceil_div_dim, format_shape, num_elements


def _count(shape: Shape) -> int | None:
    count = num_elements(shape)
    return count if type(count) is int else None


def tensor_value(value: object) -> tuple[int, tuple | None, tuple | None]:
    """``(elem, shape, values)`` of a tensor attribute as the engine passes it (a
    :class:`~opspec.runtime.contract.TensorValue`, or any object with ``elem``,
    ``shape`` and ``values``); ``values`` is None when the contents are not known."""
    if not hasattr(value, "elem"):
        raise TypeError(f"not a tensor value: {type(value).__name__}")
    shape, values = getattr(value, "shape", None), getattr(value, "values", None)
    return value.elem, None if shape is None else tuple(shape), None if values is None else tuple(values)


def _numeric(values) -> bool:
    return all(type(v) in (int, float, bool) for v in values)


def _set_constant(ctx: InferenceContext, elem: int, shape: Shape, values: tuple | None) -> None:
    ctx.set_output_shape(0, shape, elem)
    if values is not None and len(values) <= DATA_LIMIT and _numeric(values):
        ctx.set_output_data(0, Data(shape, tuple(values)))


_VALUE_ATTRIBUTES = ("value", "sparse_value", "value_float", "value_floats", "value_int",
                     "value_ints", "value_string", "value_strings")


@rule("constant", "The type and shape of whichever value attribute is set.", constant_output=True)
def constant(ctx: InferenceContext) -> None:
    """Type, shape and (small numeric) data of whichever value attribute the node sets."""
    declared, set_here = ctx.schema.attributes, ctx.node_attributes
    offered = [name for name in _VALUE_ATTRIBUTES if name in declared]
    # Only an attribute the node sets, or one with a default, can hold a value.
    given = [name for name in offered if (name in set_here or declared[name].default is not None)
             and ctx.attribute(name) is not None]
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
        ctx.set_output_shape("output", (), STRING)
    else:
        ctx.set_output_shape("output", (len(value),), STRING)


@rule("constant_of_shape", "A tensor of the requested shape filled with 'value'.",
      input=input(required=True), value=attribute())
def constant_of_shape(ctx: InferenceContext) -> None:
    """A tensor whose shape is the input's contents, filled with ``value`` (float 0 by default)."""
    elem = FLOAT
    fill: object = 0.0
    value_name = ctx.named("value")
    value = ctx.attr("value")
    if value is not None:
        try:
            elem, value_shape, values = tensor_value(value)
        except TypeError as e:
            ctx.fail(f"attribute {value_name!r}: {e}")
        count = _count(value_shape) if values is None else len(values)
        if (count is not None and count != 1) or (value_shape is not None and len(value_shape) != 1):
            ctx.fail(f"'{value_name}' must be a 1-D tensor of one element, got shape {format_shape(value_shape)}")
        fill = values[0] if values else None
    index = ctx.input_arg("input")
    if index is None:
        ctx.set_output_shape("output", None, elem)
        return
    source = ctx.input_shape(index)
    if source is not None and len(source) != 1:
        ctx.fail(f"the shape input must be 1-D, got shape {format_shape(source)}")
    requested = ctx.input_values(index)
    if requested is None:
        length = source[0] if source is not None else None
        dims = ctx.unknown_dims(length) if type(length) is int else None
        shape: Shape = tuple([ctx.fresh_dim() for _ in dims]) if dims is not None else None
        ctx.set_output_shape("output", shape, elem)
        return
    sizes: list[Dim] = []
    for dim in requested:
        if type(dim) is int:
            if dim < 0:
                ctx.fail(f"requested shape {list(requested)} has a negative dim")
            sizes.append(dim)
        else:
            sizes.append(dim if type(dim) is Sym else ctx.fresh_dim())
    shape = tuple(sizes)
    ctx.set_output_shape("output", shape, elem)
    count = _count(shape)
    if fill is not None and count is not None and count <= DATA_LIMIT and _numeric((fill,)):
        ctx.set_output_data("output", Data(shape, (fill,) * count))


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


@rule("range", "A 1-D tensor of ceil((limit - start) / delta) elements.",
      default_delta=option("int", doc="the step when the node omits delta, for an op whose delta is optional"))
def range_(ctx: InferenceContext) -> None:
    """1-D, of ``max(ceil((limit - start) / delta), 0)`` elements when the inputs are known."""
    start, limit = _scalar(ctx, 0, "start"), _scalar(ctx, 1, "limit")
    delta = _scalar(ctx, 2, "delta") if ctx.has_input(2) else ctx.option("default_delta")
    if delta == 0:
        ctx.fail("delta must not be zero")
    length = _range_length(start, limit, delta)
    ctx.set_output_shape(0, (length if length is not None else ctx.fresh_dim(),))
    if type(length) is int and length <= DATA_LIMIT and type(start) is not Sym \
            and type(limit) is not Sym:
        if type(start) is int and type(delta) is int:
            values = tuple(range(start, start + length * delta, delta))
        else:
            values = tuple([start + i * delta for i in range(length)])
        ctx.set_output_data(0, Data((length,), values))
