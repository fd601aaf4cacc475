"""Reduction rules: collapse some axes of the input, keeping them as 1 or dropping them."""
from __future__ import annotations

from opspec.runtime.contract import INT64, InferenceContext, IntList, TensorType, attribute, input_or_attribute, rule


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
      axes=input_or_attribute(), keepdims=attribute(), noop_with_empty_axes=attribute())
def reduce(ctx: InferenceContext) -> None:
    """Reduce the given axes (all when none, or nothing with ``noop_with_empty_axes``)."""
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
