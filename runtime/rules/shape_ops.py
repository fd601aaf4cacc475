"""Rules for operators that give a tensor a new shape: Reshape, Flatten, Transpose, Expand, Shape, Size.

Besides output shapes, the rules carry known contents of small integer tensors through
(``Shape`` -> ``Gather``/``Slice`` -> ``Concat`` -> ``Reshape``), so shapes computed inside
a graph still resolve to concrete or symbolic dims.
"""
from __future__ import annotations

from typing import Sequence

from opspec.runtime.contract import INT64, Data, InferenceContext, attribute, input, input_or_attribute, rule
from opspec.runtime.rules._axes import NEGATIVE_AXES, pass_data, refuse_negative, shape_of
from opspec.runtime.rules._dims import named_where_undecided
from opspec.runtime.rules._sizes import same_size, size_quotient
from opspec.runtime.shape import broadcast_shapes, div_dim, format_dim, format_shape, num_elements, ShapeError


@rule("reshape", "New shape from the shape input or attribute; 0 copies, -1 infers.",
      shape=input_or_attribute(required=True), allowzero=attribute())
def reshape(ctx: InferenceContext) -> None:
    """Target shape from the ``shape`` input (v5+) or attribute (v1); 0 copies, one -1 infers."""
    source = shape_of(ctx, 0)
    target = ctx.ints_arg("shape")
    if target.values is None:
        ctx.set_output_shape("reshaped", (None,) * target.length if target.length is not None else None)
        return
    allowzero = ctx.flag_attr("allowzero")
    requested = target.values

    def text() -> str:  # the requested shape as errors show it, made only for one
        return "(" + ", ".join(format_dim(v) for v in requested) + ")"

    if requested.count(-1) > 1:
        ctx.fail(f"shape {text()} has more than one -1")
    if allowzero and -1 in requested and 0 in requested:
        ctx.fail(f"shape {text()} has both 0 and -1, which allowzero=1 forbids")
    out: list = []
    inferred = None
    for i, value in enumerate(requested):
        if type(value) is int and value < -1:
            ctx.fail(f"shape {text()} has the invalid entry {value}")
        if value == -1:
            inferred = i
            out.append(None)
        elif value == 0 and not allowzero:
            if source is not None and i >= len(source):
                ctx.fail(f"shape {text()} copies dim {i} (0) but the input {format_shape(source)} "
                         f"has rank {len(source)}")
            out.append(source[i] if source is not None else None)
        else:
            out.append(value)
    if inferred is not None:
        others = out[:inferred] + out[inferred + 1:]
        quotient = size_quotient(source, others)
        if quotient is not None:
            out[inferred] = quotient
        else:
            total, rest = num_elements(source), num_elements(tuple(others))
            if rest == 0:
                if type(total) is int and total != 0:
                    ctx.fail(f"cannot reshape {format_shape(source)} ({total} elements) into {text()}")
            elif total is not None and rest is not None:
                try:
                    out[inferred] = div_dim(total, rest)
                except ShapeError:
                    ctx.fail(f"cannot reshape {format_shape(source)} ({format_dim(total)} elements) into "
                             f"{text()}: {format_dim(total)} is not a multiple of {format_dim(rest)}")
    elif not same_size(source, out):
        total, wanted = num_elements(source), num_elements(tuple(out))
        if total is not None and wanted is not None:
            difference = total - wanted
            if type(difference) is int and difference != 0:
                ctx.fail(f"cannot reshape {format_shape(source)} ({format_dim(total)} elements) into "
                         f"{text()} ({format_dim(wanted)} elements)")
    shape = tuple(out)
    ctx.set_output_shape("reshaped", shape)
    pass_data(ctx, shape)


@rule("flatten", "Collapse to 2-D around 'axis'.", axis=attribute(), negative_axes=NEGATIVE_AXES)
def flatten(ctx: InferenceContext) -> None:
    """``(prod(dims[:axis]), prod(dims[axis:]))``; ``axis`` lies in ``[-r, r]``."""
    source = shape_of(ctx, 0)
    axis = ctx.int_attr("axis", 1)
    if source is None:
        ctx.set_output_shape("output", (1 if axis == 0 else None, None))
        return
    rank = len(source)
    refuse_negative(ctx, axis, "axis")
    if not -rank <= axis <= rank:
        ctx.fail(f"axis {axis} is out of range for rank {rank}")
    if axis < 0:
        axis += rank
    shape = (num_elements(source[:axis]), num_elements(source[axis:]))
    ctx.set_output_shape("output", shape)
    pass_data(ctx, shape)


@rule("transpose", "Permute the dimensions ('perm', reversed when absent).", perm=attribute())
def transpose(ctx: InferenceContext) -> None:
    """Output axis ``i`` is input axis ``perm[i]``; the axes reverse when ``perm`` is absent."""
    source = shape_of(ctx, 0)
    perm = ctx.ints_attr("perm")
    if perm is None:
        if source is None:
            ctx.set_output_shape("transposed", None)
            return
        perm = tuple(range(len(source) - 1, -1, -1))
    perm = tuple(perm)
    if sorted(perm) != list(range(len(perm))):
        ctx.fail(f"perm {list(perm)} is not a permutation of 0..{len(perm) - 1}")
    if source is None:
        ctx.set_output_shape("transposed", (None,) * len(perm))
        return
    if len(perm) != len(source):
        ctx.fail(f"perm {list(perm)} has {len(perm)} entries but the input {format_shape(source)} "
                 f"has rank {len(source)}")
    shape = tuple(source[p] for p in perm)
    ctx.set_output_shape("transposed", shape)
    data = ctx.input_data("data")
    if data is not None and all(type(d) is int for d in source) and len(data.values) == num_elements(source):
        ctx.set_output_data("transposed", Data(shape, _transpose_values(data.values, source, perm)))


def _transpose_values(values: Sequence, shape: tuple, perm: tuple) -> tuple:
    """Row-major ``values`` of ``shape`` rearranged as the transpose by ``perm``."""
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    out_shape = [shape[p] for p in perm]
    out_strides = [strides[p] for p in perm]
    offsets = [0]
    for size, stride in zip(out_shape, out_strides):
        offsets = [o + k * stride for o in offsets for k in range(size)]
    return tuple(values[o] for o in offsets)


@rule("expand", "Broadcast the input against the requested shape.", shape=input(required=True))
def expand(ctx: InferenceContext) -> None:
    """Bidirectional broadcast of the input shape with the requested shape."""
    source = shape_of(ctx, 0)
    target = ctx.ints_arg("shape")
    if target.values is not None:
        for value in target.values:
            if type(value) is int and value < 0:
                ctx.fail(f"shape {list(target.values)} has the negative entry {value}")
        requested = tuple(target.values)
    elif target.length is not None:
        requested = (None,) * target.length
    else:
        ctx.set_output_shape("output", None)
        return
    ctx.set_output_shape("output",
                         named_where_undecided(ctx, broadcast_shapes(source, requested), source, requested))



@rule("shape", "A 1-D int64 tensor holding (a slice of) the input's shape.", start=attribute(), end=attribute())
def shape(ctx: InferenceContext) -> None:
    """1-D int64 of the input's dims (``start``/``end`` clamped to the rank); data = the dims."""
    source = shape_of(ctx, 0)
    start = ctx.int_attr("start", 0)
    end = ctx.attr("end")
    if source is None:
        empty = end is not None and (start >= 0) == (end >= 0) and end <= start
        ctx.set_output_shape("shape", (0 if empty else None,), elem=INT64)
        return
    dims = source[slice(start, end)]
    ctx.set_output_shape("shape", (len(dims),), elem=INT64)
    ctx.set_output_data("shape", Data((len(dims),), tuple(dims)))


@rule("size", "A scalar int64 holding the input's element count.")
def size(ctx: InferenceContext) -> None:
    """A scalar int64 holding the element count (symbolic when the dims are)."""
    source = shape_of(ctx, 0)
    ctx.set_output_shape("size", (), elem=INT64)
    if source is not None:
        ctx.set_output_data("size", Data((), (num_elements(source),)))
