"""Reduction rules: collapse some axes of the input, keeping them as 1 or dropping them."""
from __future__ import annotations

from opspec.runtime.contract.elements import INT_WIDTHS
from opspec.runtime.contract import (INT64, Data, InferenceContext, IntList, TensorType, attribute,
                                     input_or_attribute, option, rule)
from opspec.runtime.rules._binarydata import BINARY
from opspec.runtime.rules._elementdata import cast_value
from opspec.runtime.shape import Sym


def _reduce_axes(ctx: InferenceContext) -> tuple | IntList:
    """The axes to reduce: a tuple (empty when none are given), or the :class:`IntList`
    read from an axes input whose values are not known (its ``length`` may be)."""
    axes = ctx.ints_arg("axes")
    if not axes.present or axes.length == 0:
        return ()
    if axes.ints is not None:
        return axes.ints
    return axes


@rule("reduce", "Reduce the listed axes (all when none), keeping them as 1 if keepdims.",
      axes=input_or_attribute(), keepdims=attribute(), noop_with_empty_axes=attribute(),
      compute=option("string", choices=("min", "max", "add", "mul"),
                     doc="the element function folding known input data, for data propagation"))
def reduce(ctx: InferenceContext) -> None:
    """Reduce the given axes (all when none, or nothing with ``noop_with_empty_axes``)."""
    _reduce_shape(ctx)
    compute, data, out = ctx.option("compute"), ctx.input_data(0), ctx.output_type(0)
    if compute is not None and data is not None and out is not None and out.shape is not None:
        folded = _fold_all(data, out.shape, compute, out.elem)
        if folded is not None:
            ctx.set_output_data(0, folded)


def _fold_all(data: Data, shape: tuple, compute: str, elem: int | None) -> Data | None:
    """Known ``data`` folded to one element with ``compute``, when the output (``shape``) holds
    just one element, so every input element was reduced into it; None otherwise. Sums and
    products are folded over integers only (a float's rounding depends on the order) and only
    while they stay in the range of the (integer) element type ``elem``."""
    values = data.values
    if any(d != 1 for d in shape) or values is None or not values:
        return None
    if any(type(d) is not int for d in data.shape) or len(values) != _count(data.shape):
        return None
    arithmetic = compute in ("add", "mul")
    if arithmetic and (elem not in INT_WIDTHS or not all(v is None or type(v) in (int, Sym) for v in values)):
        return None
    function, result = BINARY[compute], values[0]
    for value in values[1:]:
        result = function(result, value)
        if arithmetic and type(result) is int and cast_value(result, elem) != result:
            return None  # wrapped around
    return Data(shape, (result,))


def _count(shape: tuple) -> int:
    count = 1
    for d in shape:
        count *= d
    return count


def _reduce_shape(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    keepdims = ctx.int_attr("keepdims", 1)
    noop = ctx.int_attr("noop_with_empty_axes", 0)
    axes = _reduce_axes(ctx)
    if type(axes) is IntList:
        ctx.set_output_shape(0, _unknown_axes_shape(ctx, shape, axes.length, keepdims, noop))
        return
    if not axes:
        if noop:
            ctx.set_output_shape(0, shape)
            return
        if not keepdims:
            ctx.set_output_shape(0, ())  # a scalar, whatever the input rank
        else:
            ctx.set_output_shape(0, None if shape is None else (1,) * len(shape))
        return
    if shape is None:
        ctx.set_output_shape(0, None)
        return
    rank = len(shape)
    reduced = set()
    for axis in axes:
        axis = ctx.normalize_axis(axis, rank, "axes value")
        if axis in reduced:
            ctx.fail(f"axis {axis} is reduced twice in axes {list(axes)}")
        reduced.add(axis)
    if keepdims:
        out = tuple([1 if i in reduced else d for i, d in enumerate(shape)])
    else:
        out = tuple([d for i, d in enumerate(shape) if i not in reduced])
    ctx.set_output_shape(0, out)


def _unknown_axes_shape(ctx: InferenceContext, shape, count: int | None, keepdims: int, noop: int):
    """The output shape when an axes input is given but its values are not known (``count``
    of them, when that is known)."""
    if shape is None:
        return None
    if keepdims:  # the rank stays; a dim of 1 stays 1 whether reduced or not
        return tuple([d if d == 1 else None for d in shape])
    if count is None or noop:
        return None  # unknown count, or possibly empty axes meaning "no change"
    if count > len(shape):
        ctx.fail(f"cannot reduce {count} axes of a rank-{len(shape)} input")
    return (None,) * (len(shape) - count)


@rule("arg_reduce", "Reduce one axis to its arg-max or arg-min index.", axis=attribute(), keepdims=attribute())
def arg_reduce(ctx: InferenceContext) -> None:
    """Reduce one axis to the index of its extreme element; the output is int64."""
    shape = ctx.input_shape(0)
    axis = ctx.int_attr("axis", 0)
    keepdims = ctx.int_attr("keepdims", 1)
    if shape is None:
        ctx.set_output_shape(0, None, INT64)
        return
    axis = ctx.normalize_axis(axis, len(shape))
    if keepdims:
        out = shape[:axis] + (1,) + shape[axis + 1:]
    else:
        out = shape[:axis] + shape[axis + 1:]
    ctx.set_output(0, TensorType(INT64, out))
