"""Rules for neural-network operators: convolution, pooling and normalization.

Window arithmetic (kernel, pads, strides, dilations, ``auto_pad``, ``ceil_mode``) lives in
``_window`` and is shared by ``conv``, ``pool``, ``conv_transpose`` and MaxUnpool's rule.
"""
from __future__ import annotations

from typing import Sequence

from opspec.runtime.contract import INT64, InferenceContext, attribute, input, rule
from opspec.runtime.rules._window import Window, transposed_length
from opspec.runtime.shape import (
    Dim,
    Shape,
    ShapeError,
    format_dim,
    format_shape,
    merge_dim,
    mul_dim,
    unidirectional_broadcast,
)


def _spatial_count(ctx: InferenceContext, candidates: Sequence[tuple[str, object, int | None]]) -> int | None:
    """The spatial rank that every known source agrees on (None when none knows it). Each
    candidate is ``(name, value, count)``, its text made only for an error."""
    count, first = None, None
    for position, (_, _, value) in enumerate(candidates):
        if value is None:
            continue
        if count is None:
            count, first = value, position
        elif value != count:
            assert first is not None
            ctx.fail(f"{_shown(candidates[position])} implies {value} spatial axes but "
                     f"{_shown(candidates[first])} implies {count}")
    return count


def _shown(candidate: tuple[str, object, int | None]) -> str:
    """A :func:`_spatial_count` candidate as its error names it (``X (N, 3, 8)``, ``strides (1, 1)``)."""
    name, value, _ = candidate
    return f"{name} {format_shape(value) if isinstance(value, tuple) else value}"


# ---------------------------------------------------------------------------------- conv

@rule("conv", "Convolution output size from kernel, pads, strides, dilations, auto_pad.",
      kernel_shape=attribute(), pads=attribute(), strides=attribute(), dilations=attribute(),
      auto_pad=attribute(), group=attribute(), x=input("X", doc="the data operand"),
      w=input("W", doc="the weights"), bias=input("B", doc="the optional bias"))
def conv(ctx: InferenceContext) -> None:
    """``(N, M, out...)`` for X ``(N, C, D...)`` and W ``(M, C/group, k...)``."""
    x_index, w_index, bias_index = ctx.input_arg("x"), ctx.input_arg("w"), ctx.input_arg("bias")
    x = ctx.input_shape(x_index) if x_index is not None else None
    w = ctx.input_shape(w_index) if w_index is not None else None
    kernel_attr = ctx.ints_attr("kernel_shape")
    strides, dilations, pads = (ctx.ints_attr(k) for k in ("strides", "dilations", "pads"))
    count = _spatial_count(ctx, [
        ("X", x, len(x) - 2 if x is not None else None),
        ("W", w, len(w) - 2 if w is not None else None),
        ("kernel_shape", kernel_attr, len(kernel_attr) if kernel_attr is not None else None),
        ("strides", strides, len(strides) if strides is not None else None),
        ("dilations", dilations, len(dilations) if dilations is not None else None),
        ("pads", pads, len(pads) // 2 if pads is not None else None),
    ])
    if count is None:
        ctx.set_output_shape(0, None)
        return
    if count < 1:
        ctx.fail(f"X {format_shape(x)} and W {format_shape(w)} need rank 3 or more")
    x = x if x is not None else (None,) * (count + 2)
    w = w if w is not None else (None,) * (count + 2)
    group = ctx.int_attr("group", 1)
    if group < 1:
        ctx.fail(f"group {group} must be positive")
    channels, per_group, filters = x[1], w[1], w[0]
    if type(channels) is int and type(per_group) is int and channels != per_group * group:
        ctx.fail(f"X has {channels} channels but W {format_shape(w)} expects {per_group} per group "
                 f"x {group} groups = {per_group * group}")
    if type(channels) is int and channels % group:
        ctx.fail(f"X's {channels} channels do not divide into {group} groups")
    if type(filters) is int and filters % group:
        ctx.fail(f"W's {filters} filters do not divide into {group} groups")
    if bias_index is not None:
        bias = ctx.input_shape(bias_index)
        if bias is not None:
            if len(bias) != 1 or (type(bias[0]) is int and type(filters) is int and bias[0] != filters):
                ctx.fail(f"B {format_shape(bias)} must be 1-D with the {format_dim(filters)} filters of W")
            filters = merge_dim(filters, bias[0])
    kernel = w[2:]
    if kernel_attr is not None:
        for k, dim in zip(kernel_attr, kernel):
            if type(dim) is int and dim != k:
                ctx.fail(f"kernel_shape {list(kernel_attr)} disagrees with W {format_shape(w)}")
        kernel = kernel_attr
    window = Window(ctx, count, kernel, (strides, dilations, pads))
    ctx.set_output_shape(0, (x[0], filters) + window.output_dims(ctx, x[2:]))


# ---------------------------------------------------------------------------------- pooling

@rule("pool", "Pooling output size from kernel, pads, strides, dilations, auto_pad, ceil_mode.",
      kernel_shape=attribute(required=True), pads=attribute(), strides=attribute(), dilations=attribute(),
      auto_pad=attribute(), ceil_mode=attribute())
def pool(ctx: InferenceContext) -> None:
    """``(N, C, out...)``; MaxPool's optional Indices output (int64) has the same shape."""
    kernel = ctx.ints_attr("kernel_shape")
    if kernel is None:
        ctx.fail("attribute 'kernel_shape' is required")
    count = len(kernel)
    x = ctx.input_with_rank(0, count + 2)
    window = Window(ctx, count, kernel)
    shape = x[:2] + window.output_dims(ctx, x[2:])
    ctx.set_output_shape(0, shape)
    for index in range(1, ctx.output_count):
        ctx.set_output_shape(index, shape, elem=INT64)


@rule("global_pool", "Every spatial dimension pooled down to 1.")
def global_pool(ctx: InferenceContext) -> None:
    """``(N, C, 1, ..., 1)``."""
    x = ctx.input_with_rank_at_least(0, 2)
    ctx.set_output_shape(0, None if x is None else x[:2] + (1,) * (len(x) - 2))


# ---------------------------------------------------------------------------------- normalization

@rule("batch_norm", "Y takes X's shape; statistics outputs take the channel count.",
      training_mode=attribute(), spatial=attribute())
def batch_norm(ctx: InferenceContext) -> None:
    """Y takes X's shape; statistics (inputs and optional outputs) are per channel, ``(C,)``."""
    x = ctx.input_with_rank_at_least(0, 1)
    if ctx.declares("training_mode") and not ctx.flag_attr("training_mode") and ctx.output_count > 1:
        ctx.fail(f"{ctx.output_count} outputs need training_mode=1; only Y exists otherwise")
    per_channel = ctx.int_attr("spatial", 1)
    stats: Shape
    if per_channel:
        stats = ((x[1] if len(x) > 1 else 1),) if x is not None else (None,)
        for index in range(1, min(ctx.input_count, len(ctx.schema.inputs))):
            given = ctx.input_shape(index)
            if given is None:
                continue
            if len(given) != 1:
                ctx.fail(f"{ctx.schema.inputs[index].name} {format_shape(given)} must be 1-D (C,)")
            try:
                stats = (merge_dim(stats[0], given[0]),)
            except ShapeError:
                ctx.fail(f"{ctx.schema.inputs[index].name} {format_shape(given)} does not match "
                         f"{format_dim(stats[0])} channels of X {format_shape(x)}")
    else:  # the obsolete per-feature statistics: one per element of a batch item
        stats = x[1:] if x is not None else None
    ctx.set_output_shape(0, x)
    for index in range(1, ctx.output_count):
        ctx.set_output_shape(index, stats)


@rule("layer_norm", "Y takes X's shape; statistics keep the leading axes before 'axis'.",
      axis=attribute(), stash_type=attribute())
def layer_norm(ctx: InferenceContext) -> None:
    """Y takes X's shape; Mean and InvStdDev keep the axes before ``axis`` (the rest become 1)."""
    x = ctx.input_shape("X")
    stash = ctx.int_attr("stash_type", 1)
    axis = ctx.int_attr("axis", -1)
    stats = None
    if x is not None:
        axis = ctx.normalize_axis(axis, len(x))
        stats = x[:axis] + (1,) * (len(x) - axis)
        for index in range(1, min(ctx.input_count, 3)):
            if ctx.has_input(index):
                unidirectional_broadcast(x, ctx.input_shape(index))
    ctx.set_output_shape("Y", x)
    for index in range(1, ctx.output_count):
        ctx.set_output_shape(index, stats, elem=stash)


def conv_transpose_operands(ctx: InferenceContext) -> tuple[tuple, tuple, Dim] | None:
    """X and W of a transposed convolution (inputs 0 and 1), of one rank of 3 or more, with the
    output's channel count ``W.shape[1] * group``; None when neither rank is known. Fails where X's
    channels are not W's first dim or ``group`` is not positive."""
    x, w = ctx.input_shape(0), ctx.input_shape(1)
    count = _spatial_count(ctx, [("X", x, len(x) - 2 if x is not None else None),
                                 ("W", w, len(w) - 2 if w is not None else None)])
    if count is None:
        return None
    if count < 1:
        ctx.fail(f"X {format_shape(x)} and W {format_shape(w)} need rank 3 or more")
    x = x if x is not None else (None,) * (count + 2)
    w = w if w is not None else (None,) * (count + 2)
    group = ctx.int_attr("group", 1)
    if group < 1:
        ctx.fail(f"group {group} must be positive")
    if type(x[1]) is int and type(w[0]) is int and x[1] != w[0]:
        ctx.fail(f"X has {x[1]} channels but W {format_shape(w)} expects {w[0]}")
    return x, w, mul_dim(w[1], group)


def conv_transpose_window(ctx: InferenceContext, kernel_dims: tuple) -> tuple[Sequence, Sequence, Sequence, Sequence]:
    """kernel_shape (default: the weights' spatial dims ``kernel_dims``), strides, dilations (default 1)
    and output_padding (default 0) of a transposed convolution; their lengths are unchecked."""
    count = len(kernel_dims)
    return (ctx.ints_attr("kernel_shape") or kernel_dims, ctx.ints_attr("strides") or (1,) * count,
            ctx.ints_attr("dilations") or (1,) * count, ctx.ints_attr("output_padding") or (0,) * count)


@rule("conv_transpose", "(N, W.shape[1] * group, out...): each spatial dim stride * (in - 1) + output_padding "
      "+ dilated kernel - pads, or output_shape.",
      kernel_shape=attribute(), pads=attribute(), strides=attribute(), dilations=attribute(), auto_pad=attribute(),
      group=attribute(), output_padding=attribute(), output_shape=attribute())
def conv_transpose(ctx: InferenceContext) -> None:
    """The inverse of a convolution's window arithmetic, per spatial axis."""
    operands = conv_transpose_operands(ctx)
    if operands is None:
        ctx.set_output_shape(0, None)
        return
    x, w, channels = operands
    count = len(x) - 2
    kernel, strides, dilations, padding = conv_transpose_window(ctx, w[2:])
    pads = ctx.ints_attr("pads") or (0,) * (2 * count)
    for name, values, length in (("strides", strides, count), ("dilations", dilations, count),
                                 ("output_padding", padding, count), ("pads", pads, 2 * count),
                                 ("kernel_shape", kernel, count)):
        if len(values) != length:
            ctx.fail(f"{name} {list(values)} must have {length} values for {count} spatial axes")
    requested = ctx.ints_attr("output_shape")
    spatial: Shape
    if requested is not None:
        spatial = tuple(requested[-count:]) if len(requested) >= count else None
        if spatial is None:
            ctx.fail(f"output_shape {list(requested)} has fewer than {count} spatial dims")
    else:
        auto_pad = ctx.attr("auto_pad", "NOTSET") or "NOTSET"
        lengths: list[Dim] = []
        for i in range(count):
            size, k = x[2 + i], kernel[i]
            if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
                lengths.append(mul_dim(size, strides[i]))
                continue
            if size is None or k is None:
                lengths.append(None)
                continue
            begin, end = (0, 0) if auto_pad == "VALID" else (pads[i], pads[i + count])
            extent = (k - 1) * dilations[i] + 1
            lengths.append(transposed_length(size, strides[i], extent + padding[i], begin + end))
        spatial = tuple(lengths)
    ctx.set_output_shape(0, (x[0], channels) + spatial)


@rule("dropout", "The data's shape and type, and a mask of that shape; ratio and training_mode must be scalars.",
      ratio=input(), training_mode=input())
def dropout(ctx: InferenceContext) -> None:
    for key in ("ratio", "training_mode"):
        index = ctx.input_arg(key)
        if index is None:
            continue
        shape = ctx.input_shape(index)
        if shape is not None and shape != ():
            ctx.fail(f"{ctx.input_name(index)} must be a scalar, got shape {format_shape(shape)}")
    shape = ctx.input_shape("data")
    for index in range(ctx.output_count):
        ctx.set_output_shape(index, shape)
