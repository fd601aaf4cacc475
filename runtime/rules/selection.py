"""Rules for ops that keep some elements, so that sizes may depend on the data:
TopK, Compress, NonZero, Unique.

A size that depends on values the inference does not know becomes a fresh symbolic dim,
shared by every output of that size.
"""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext, attribute, element, input_or_attribute, rule
from opspec.runtime.rules._sizes import single_size
from opspec.runtime.shape import Dim, Shape, format_shape, num_elements


@rule("top_k", "X's shape with 'axis' shortened to k, for both the values and their indices.",
      k=input_or_attribute(required=True), axis=attribute())
def top_k(ctx: InferenceContext) -> None:
    source = ctx.input_shape("X")
    count = single_size(ctx, "k", 0)
    if source is not None:
        axis = ctx.normalize_axis(ctx.int_attr("axis", -1), len(source))
        size = source[axis]
        if type(count) is int and type(size) is int and count > size:
            ctx.fail(f"k {count} exceeds the {size} elements of axis {axis} of {format_shape(source)}")
        if count is None:
            count = ctx.fresh_dim()  # k is data
        source = source[:axis] + (count,) + source[axis + 1:]
    ctx.set_output_shape("Values", source)
    ctx.set_output_shape("Indices", source)


def _kept(ctx: InferenceContext, flags, size):
    """How many of the first ``size`` condition flags are true: an int when known, else a fresh dim."""
    if flags is not None and type(size) is int:
        picked = [element(flag) for flag in flags[:size]]
        if all(type(flag) is int for flag in picked):
            return sum(1 for flag in picked if flag)
    if flags is not None and all(type(element(flag)) is int and not element(flag) for flag in flags):
        return 0  # nothing is selected, whatever the size
    return ctx.fresh_dim()


@rule("compress", "Keep the slices along 'axis' (the flattened elements without it) that condition selects.",
      axis=attribute())
def compress(ctx: InferenceContext) -> None:
    source = ctx.input_shape("input")
    ctx.input_with_rank("condition", 1)
    data = ctx.input_data("condition")
    flags = data.values if data is not None else None
    axis = ctx.attr("axis")
    if axis is None:
        ctx.set_output_shape("output", (_kept(ctx, flags, num_elements(source) if source is not None else None),))
        return
    if source is None:
        ctx.set_output_shape("output", None)
        return
    if not source:
        ctx.fail("cannot compress a scalar along an axis")
    axis = ctx.normalize_axis(int(axis), len(source))
    ctx.set_output_shape("output", source[:axis] + (_kept(ctx, flags, source[axis]),) + source[axis + 1:])


@rule("non_zero", "(rank of X, count of non-zero elements): one column of coordinates per non-zero element.")
def non_zero(ctx: InferenceContext) -> None:
    source = ctx.input_shape("X")
    data = ctx.input_data("X")
    count: Dim = None
    if data is not None and all(type(value) in (int, float, bool) for value in data.values):
        count = sum(1 for value in data.values if value)
    if count is None:
        count = ctx.fresh_dim()
    rank = len(source) if source else None  # a scalar's coordinates are laid out as numpy's differ
    ctx.set_output_shape("Y", (rank, count))


@rule("unique", "The distinct elements (or slices along 'axis'), their first positions, the inverse map and counts.",
      axis=attribute())
def unique(ctx: InferenceContext) -> None:
    source = ctx.input_shape("X")
    distinct = ctx.fresh_dim()  # one count of distinct values for every output that has it
    axis = ctx.attr("axis")
    if axis is None:
        values: Shape
        values, inverse = (distinct,), (num_elements(source) if source is not None else None,)
    elif source is None:
        values, inverse = None, (None,)
    else:
        if not source:
            ctx.fail("cannot take unique slices of a scalar along an axis")
        axis = ctx.normalize_axis(int(axis), len(source))
        values, inverse = source[:axis] + (distinct,) + source[axis + 1:], (source[axis],)
    ctx.set_output_shape("Y", values)
    ctx.set_output_shape("indices", (distinct,))
    ctx.set_output_shape("inverse_indices", inverse)
    ctx.set_output_shape("counts", (distinct,))

