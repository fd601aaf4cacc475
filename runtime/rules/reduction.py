"""Reduction rules: collapse some axes of the input, keeping them as 1 or dropping them."""
from __future__ import annotations

from typing import Mapping

from opspec.runtime.inference.context import InferenceContext
from opspec.runtime.inference.values import INT64, TensorType
from opspec.runtime.rules import implements
from opspec.runtime.rules.arguments import IntList, read_ints

def _int_attribute(ctx: InferenceContext, name: object, default: int) -> int:
    """The value of attribute ``name`` when the op version has it, else ``default``."""
    if name is None or name not in ctx.schema.attributes:
        return default
    return int(ctx.attribute(name, default))


def _reduce_axes(ctx: InferenceContext, name: object) -> tuple | IntList:
    """The axes to reduce: a tuple (empty when none are given), or the :class:`IntList`
    read from an axes input whose values are not known (its ``length`` may be)."""
    axes = read_ints(ctx, name)
    if not axes.present or axes.length == 0:
        return ()
    if axes.values is not None and all(type(v) is int for v in axes.values):
        return axes.values
    return axes


@implements("reduce")
def reduce(ctx: InferenceContext, args: Mapping[str, object]) -> None:
    """Reduce the given axes (all when none, or nothing with ``noop_with_empty_axes``)."""
    shape = ctx.input_shape(0)
    keepdims = _int_attribute(ctx, args.get("keepdims"), 1)
    noop = _int_attribute(ctx, args.get("noop_with_empty_axes"), 0)
    axes = _reduce_axes(ctx, args.get("axes"))
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


@implements("arg_reduce")
def arg_reduce(ctx: InferenceContext, args: Mapping[str, object]) -> None:
    """Reduce one axis to the index of its extreme element; the output is int64."""
    shape = ctx.input_shape(0)
    axis = _int_attribute(ctx, args.get("axis"), 0)
    keepdims = _int_attribute(ctx, args.get("keepdims"), 1)
    if shape is None:
        ctx.set_output_shape(0, None, INT64)
        return
    axis = ctx.normalize_axis(axis, len(shape))
    if keepdims:
        out = shape[:axis] + (1,) + shape[axis + 1:]
    else:
        out = shape[:axis] + shape[axis + 1:]
    ctx.set_output(0, TensorType(INT64, out))
