"""Rules for ops that read or write a tensor at positions held by another tensor:
GatherElements, GatherND, ScatterElements, ScatterND, OneHot; and the ops whose output takes
the input's shape along its axes: EyeLike, Trilu, CumSum."""
from __future__ import annotations

from opspec.runtime.contract import MAX_RANK, InferenceContext, attribute, input, rule
from opspec.runtime.rules._axes import NEGATIVE_AXES, axis_arg
from opspec.runtime.rules._sizes import single_size
from opspec.runtime.shape import ShapeError, format_shape, merge_dim, merge_shapes


def _same_rank(ctx: InferenceContext, first: int, second: int) -> None:
    """Fail when inputs ``first`` and ``second`` both have known, different ranks."""
    a, b = ctx.input_shape(first), ctx.input_shape(second)
    if a is not None and b is not None and len(a) != len(b):
        ctx.fail(f"{ctx.input_name(second)} {format_shape(b)} must have the rank of "
                 f"{ctx.input_name(first)} {format_shape(a)}")


def _merged(ctx: InferenceContext, first: int, second: int):
    """The shapes of inputs ``first`` and ``second``, which must agree, merged."""
    try:
        return merge_shapes(ctx.input_shape(first), ctx.input_shape(second))
    except ShapeError:
        ctx.fail(f"{ctx.input_name(first)} {format_shape(ctx.input_shape(first))} and "
                 f"{ctx.input_name(second)} {format_shape(ctx.input_shape(second))} must have one shape")


def _check_axis(ctx: InferenceContext, axis_key: str) -> None:
    """Check the axis attribute against data's rank (input 0), when known."""
    data = ctx.input_shape(0)
    if data is not None:
        if not data:
            ctx.fail(f"{ctx.input_name(0)} must have rank 1 or more, not be a scalar")
        axis_arg(ctx, ctx.int_attr(axis_key, 0), len(data))


@rule("gather_elements", "The output takes the shape of indices, which has data's rank.",
      axis=attribute(), negative_axes=NEGATIVE_AXES)
def gather_elements(ctx: InferenceContext) -> None:
    _check_axis(ctx, "axis")
    _same_rank(ctx, 0, 1)
    indices = ctx.input_shape("indices")
    data = ctx.input_shape("data")
    ctx.set_output_shape("output",
                         indices if indices is not None else ctx.unknown_dims(None if data is None else len(data)))



@rule("gather_nd", "indices.shape[:-1] + data.shape[batch_dims + m:], m being indices' last dim.",
      batch_dims=attribute())
def gather_nd(ctx: InferenceContext) -> None:
    data = ctx.input_with_rank_at_least("data", 1)
    indices = ctx.input_with_rank_at_least("indices", 1)
    batch = ctx.int_attr("batch_dims", 0)
    if batch < 0:
        ctx.fail(f"batch_dims {batch} must not be negative")
    for shape, index in ((data, 0), (indices, 1)):
        if shape is not None and batch >= len(shape):
            ctx.fail(f"batch_dims {batch} must be less than the rank of {ctx.input_name(index)} {format_shape(shape)}")
    if indices is None or data is None:
        ctx.set_output_shape("output", None)
        return
    depth = indices[-1]
    if type(depth) is not int:
        ctx.set_output_shape("output", None)  # the output rank depends on m
        return
    if depth > len(data) - batch:
        ctx.fail(f"the last dim of indices {format_shape(indices)} must not exceed {len(data) - batch} "
                 f"for data {format_shape(data)} and batch_dims {batch}")
    leading = list(indices[:-1])
    for axis in range(batch):
        try:
            leading[axis] = merge_dim(indices[axis], data[axis])
        except ShapeError:
            ctx.fail(f"batch dim {axis} differs between data {format_shape(data)} and indices {format_shape(indices)}")
    ctx.set_output_shape("output", tuple(leading) + tuple(data[batch + depth:]))


@rule("scatter_elements", "The output takes data's shape; indices and updates share one shape of data's rank.",
      axis=attribute(), negative_axes=NEGATIVE_AXES)
def scatter_elements(ctx: InferenceContext) -> None:
    _check_axis(ctx, "axis")
    _same_rank(ctx, 0, 1)
    _merged(ctx, 1, 2)
    ctx.set_output_shape("output", ctx.input_shape("data"))


@rule("scatter_nd", "The output takes data's shape; updates are shaped indices.shape[:-1] + data.shape[m:].")
def scatter_nd(ctx: InferenceContext) -> None:
    data = ctx.input_with_rank_at_least("data", 1)
    indices = ctx.input_with_rank_at_least("indices", 1)
    updates = ctx.input_shape("updates")
    if data is not None and indices is not None and type(indices[-1]) is int:
        depth = indices[-1]
        if depth > len(data):
            ctx.fail(f"the last dim of indices {format_shape(indices)} exceeds the rank of data {format_shape(data)}")
        try:
            merge_shapes(updates, tuple(indices[:-1]) + tuple(data[depth:]))
        except ShapeError:
            ctx.fail(f"updates {format_shape(updates)} must be shaped indices.shape[:-1] + data.shape[{depth}:] "
                     f"= {format_shape(tuple(indices[:-1]) + tuple(data[depth:]))}")
    ctx.set_output_shape("output", data)


@rule("one_hot", "indices' shape with a new axis of 'depth' elements inserted at 'axis'.",
      depth=input(required=True), axis=attribute())
def one_hot(ctx: InferenceContext) -> None:
    indices = ctx.input_shape("indices")
    size = single_size(ctx, "depth", 0)
    values = ctx.input_shape("values")
    if values is not None and (len(values) != 1 or type(values[0]) is int and values[0] != 2):
        ctx.fail(f"values {format_shape(values)} must hold two elements (off, on)")
    if size is None:
        size = ctx.fresh_dim()  # the depth is data
    if indices is None:
        ctx.set_output_shape("output", None)
        return
    axis = ctx.normalize_axis(ctx.int_attr("axis", -1), len(indices) + 1)
    ctx.set_output_shape("output", tuple(indices[:axis]) + (size,) + tuple(indices[axis:]))


@rule("eye_like", "A matrix shaped like the 2-D input, of the 'dtype' attribute's element type or else the input's.",
      dtype=attribute())
def eye_like(ctx: InferenceContext) -> None:
    shape = ctx.input_with_rank("input", 2)
    ctx.set_output_shape("output", shape, ctx.elem_attr("dtype", ctx.input_elem("input")))


@rule("triangle", "The output takes the shape of the input, a batch of matrices (rank 2 or more).")
def triangle(ctx: InferenceContext) -> None:
    ctx.set_output_shape(0, ctx.input_with_rank_at_least(0, 2))


@rule("cumulative", "The output takes the shape of the input; the axis input names one of its axes.",
      axis=input(required=True))
def cumulative(ctx: InferenceContext) -> None:
    source = ctx.input_shape("x")
    axis = single_size(ctx, "axis", -MAX_RANK)
    if source and type(axis) is int:
        ctx.normalize_axis(axis, len(source))
    ctx.set_output_shape("y", source)
