"""Rules that join, cut and pick along one axis: Concat, Split, Gather.

Known 1-D data flows through them (shapes assembled with ``Concat``, picked with ``Gather``).
"""
from __future__ import annotations

from opspec.runtime.contract import (DATA_LIMIT, Data, InferenceContext, attribute, dims_of, element,
                                     input_or_attribute, rule)
from opspec.runtime.rules._axes import NEGATIVE_AXES, all_ints, axis_arg, shape_of
from opspec.runtime.shape import (
    Dim,
    ShapeError,
    add_dim,
    ceil_div_dim,
    div_dim,
    format_dim,
    format_shape,
    merge_dim,
    mul_dim,
)


@rule("concat", "Join inputs along 'axis'.", axis=attribute(required=True), negative_axes=NEGATIVE_AXES)
def concat(ctx: InferenceContext) -> None:
    """Equal ranks; dims off ``axis`` merge, the ``axis`` dim is the (symbolic) sum."""
    axis = ctx.attr("axis")
    if axis is None:
        name = ctx.named("axis")
        if name is not None and ctx.schema.attributes[name].required:
            ctx.fail(f"attribute '{ctx.named('axis')}' is required")
        axis = 1  # the first version's documented default, which its schema does not record
    indices = ctx.input_range(ctx.schema.inputs[0].name)
    shapes = [shape_of(ctx, i) for i in indices]
    known = [s for s in shapes if s is not None]
    if not known:
        ctx.set_output_shape("concat_result", None)
        return
    rank = len(known[0])
    for i, s in zip(indices, shapes):
        if s is not None and len(s) != rank:
            ctx.fail(f"input {i} has shape {format_shape(s)} of rank {len(s)}, "
                     f"but input {indices[shapes.index(known[0])]} has rank {rank}")
    if rank == 0:
        ctx.fail("cannot concatenate scalars")
    axis = axis_arg(ctx, axis, rank)
    out: list = [None] * rank
    for i, s in zip(indices, shapes):
        if s is None:
            continue
        for j in range(rank):
            if j != axis:
                try:
                    out[j] = merge_dim(out[j], s[j])
                except ShapeError:
                    ctx.fail(f"input {i} has shape {format_shape(s)} with dim {format_dim(s[j])} at axis {j}, "
                             f"where other inputs have {format_dim(out[j])}")
    total: Dim = 0
    for s in shapes:
        total = add_dim(total, s[axis]) if s is not None else None
        if total is None:
            break
    out[axis] = total
    ctx.set_output_shape("concat_result", tuple(out))
    if rank == 1:
        _concat_data(ctx, indices, shapes)


def _concat_data(ctx: InferenceContext, indices: range, shapes: list) -> None:
    """Join 1-D data; an input without data but of known length contributes unknown elements."""
    values: list = []
    any_known = False
    for i, s in zip(indices, shapes):
        data = ctx.input_data(i)
        if data is not None:
            values.extend(dims_of(data.values))
            any_known = True
        elif s is not None and type(s[0]) is int and s[0] <= DATA_LIMIT:
            values.extend([None] * s[0])
        else:
            return
        if len(values) > DATA_LIMIT:  # data is for shapes and sizes, not for big tensors
            return
    if any_known:
        ctx.set_output_data(0, Data((len(values),), tuple(values)))


@rule("split", "Cut the input into the outputs along 'axis'.",
      axis=attribute(), split=input_or_attribute(), num_outputs=attribute(), negative_axes=NEGATIVE_AXES)
def split(ctx: InferenceContext) -> None:
    """Pieces from ``split`` (input or attribute), ``num_outputs`` (v18) or an even cut."""
    source = shape_of(ctx, 0)
    count = ctx.output_count
    axis = ctx.int_attr("axis", 0)
    sizes_param = ctx.ints_arg("split")
    parts = ctx.attr("num_outputs")
    if parts is not None:
        if sizes_param.present:
            ctx.fail("'split' and 'num_outputs' cannot both be given")
        if parts < 1:
            ctx.fail(f"num_outputs {parts} must be positive")
        if parts != count:
            ctx.fail(f"num_outputs is {parts} but the node has {count} outputs")
    if source is None:
        for i in range(count):
            ctx.set_output_shape(i, None)
        return
    axis = axis_arg(ctx, axis, len(source))
    dim = source[axis]
    if sizes_param.present:
        if sizes_param.length is not None and sizes_param.length != count:
            ctx.fail(f"split has {sizes_param.length} entries but the node has {count} outputs")
        if sizes_param.values is not None:
            pieces = list(sizes_param.values)
            for size in pieces:
                if type(size) is int and size < 0:
                    ctx.fail(f"split {pieces} has a negative size")
            known = all_ints(pieces)
            if known is not None and type(dim) is int and sum(known) != dim:
                ctx.fail(f"split {list(known)} adds up to {sum(known)}, but axis {axis} of "
                         f"{format_shape(source)} has {dim}")
        else:
            pieces = [None] * count
    elif parts is not None:  # equal pieces of ceil(dim / parts), the last one smaller
        chunk = ceil_div_dim(dim, count)
        last = None
        if chunk is not None:
            rest = mul_dim(chunk, count - 1)
            if type(dim) is int and type(rest) is int:
                if rest > dim:
                    ctx.fail(f"axis {axis} of {format_shape(source)} has {dim} elements, too few for "
                             f"{count} pieces of {chunk}")
                last = dim - rest
            elif dim is not None and rest is not None:
                last = dim - rest
        pieces = [chunk] * (count - 1) + [last]
    else:
        try:
            piece = div_dim(dim, count)
        except ShapeError:
            ctx.fail(f"axis {axis} of {format_shape(source)} has {format_dim(dim)} elements, "
                     f"which do not divide evenly into {count} outputs")
        pieces = [piece] * count
    for i, size in enumerate(pieces):
        ctx.set_output_shape(i, source[:axis] + (size,) + source[axis + 1:])
    data = ctx.input_data("input")
    known = all_ints(pieces)
    if data is not None and len(source) == 1 and known is not None and sum(known) == len(data.values):
        start = 0
        for i, size in enumerate(known):
            ctx.set_output_data(i, Data((size,), tuple(data.values[start:start + size])))
            start += size


@rule("gather", "Replace the 'axis' dimension of data with the shape of indices.", axis=attribute())
def gather(ctx: InferenceContext) -> None:
    """``data.shape[:axis] + indices.shape + data.shape[axis+1:]``."""
    source = shape_of(ctx, 0)
    indices = shape_of(ctx, 1)
    axis = ctx.int_attr("axis", 0)
    if source is not None:
        if len(source) == 0:
            ctx.fail("cannot gather from a scalar")
        axis = ctx.normalize_axis(axis, len(source))
    if source is None or indices is None:
        ctx.set_output_shape(0, None)
        return
    shape = source[:axis] + tuple(indices) + source[axis + 1:]
    ctx.set_output_shape(0, shape)
    data = ctx.input_data(0)
    if data is None or len(source) != 1 or len(data.values) != source[0]:
        return
    picks = ctx.input_data(1)  # read only where it matters: results are kept by the data a rule reads
    if picks is None:
        return
    size = len(data.values)
    values: list[object] = []
    for index in picks.values:
        index = element(index)
        if type(index) is not int:
            values.append(None)
            continue
        if not -size <= index < size:
            ctx.fail(f"index {index} is out of range for an axis of size {size}")
        values.append(element(data.values[index]))
    ctx.set_output_data(0, Data(tuple(picks.shape), tuple(values)))
