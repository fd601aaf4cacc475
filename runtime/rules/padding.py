"""Rules for ops that grow, shrink or rearrange a tensor's axes by amounts they are given:
Pad, CenterCropPad, Tile, DepthToSpace, SpaceToDepth."""
from __future__ import annotations

from opspec.runtime.contract import DATA_LIMIT, Data, InferenceContext, attribute, input, input_or_attribute, rule
from opspec.runtime.rules._axes import all_ints, axes_arg
from opspec.runtime.rules._sizes import within_limits
from opspec.runtime.shape import ShapeError, add_dim, div_dim, format_shape, mul_dim


def _target_axes(ctx: InferenceContext, rank: int, axes) -> list | None:
    """The axes an axes argument names (all of them when absent); None when they are unknown."""
    if axes is None:
        return list(range(rank))
    known = all_ints(axes)
    return axes_arg(ctx, known, rank) if known is not None else None


@rule("pad", "Each padded dim grows by its begin and end amounts from 'pads' (negative amounts crop).",
      pads=input_or_attribute(required=True), axes=input())
def pad(ctx: InferenceContext) -> None:
    source = ctx.input_shape("data")
    pads = ctx.ints_arg("pads")
    axes = ctx.ints_arg("axes")
    if not pads.present:
        ctx.fail("'pads' is required")
    if source is None:
        rank = pads.length // 2 if pads.length is not None and not axes.present else None
        ctx.set_output_shape("output", ctx.unknown_dims(rank))
        return
    rank = len(source)
    targets = _target_axes(ctx, rank, axes.values if axes.present else None)
    if targets is None or axes.present and axes.values is None:
        ctx.set_output_shape("output", (None,) * rank)  # which axes grow is unknown
        return
    if pads.length is not None and pads.length != 2 * len(targets):
        ctx.fail(f"{pads.length} pads for {len(targets)} axes: there must be a begin and an end for each")
    out = list(source)
    for position, axis in enumerate(targets):
        out[axis] = None
        if pads.values is None:
            continue
        begin, end = pads.values[position], pads.values[position + len(targets)]
        grown = add_dim(source[axis], add_dim(begin, end)) if begin is not None and end is not None else None
        if type(grown) is int and grown < 0:
            ctx.fail(f"pads {begin} and {end} crop axis {axis} of {format_shape(source)} below zero")
        out[axis] = grown
    ctx.set_output_shape("output", within_limits(ctx, tuple(out)))


@rule("center_crop_pad", "The listed axes (all when none) take the sizes of the shape input.",
      shape=input(required=True), axes=attribute())
def center_crop_pad(ctx: InferenceContext) -> None:
    source = ctx.input_shape("input_data")
    sizes = ctx.ints_arg("shape")
    axes = ctx.ints_attr("axes")
    if source is None:
        rank = sizes.length if axes is None else None
        ctx.set_output_shape("output_data", ctx.unknown_dims(rank))
        return
    targets = _target_axes(ctx, len(source), axes)
    if targets is None:  # not for an ints attribute, whose values are always known
        ctx.set_output_shape("output_data", ctx.unknown_dims(len(source)))
        return
    if sizes.length is not None and sizes.length != len(targets):
        ctx.fail(f"shape holds {sizes.length} sizes for {len(targets)} axes")
    out = list(source)
    for position, axis in enumerate(targets):
        size = sizes.values[position] if sizes.values is not None else None
        if type(size) is int and size < 0:
            ctx.fail(f"size {size} for axis {axis} is negative")
        out[axis] = size
    ctx.set_output_shape("output_data", tuple(out))


@rule("tile", "Each dim multiplied by its entry of 'repeats'; data of a known vector is repeated too.",
      repeats=input())
def tile(ctx: InferenceContext) -> None:
    source = ctx.input_shape("input")
    if not ctx.declares("repeats"):  # the first version repeats along one axis given as data
        ctx.set_output_shape("output", ctx.unknown_dims(None if source is None else len(source)))
        return
    repeats = ctx.ints_arg("repeats")
    if source is None:
        ctx.set_output_shape("output", ctx.unknown_dims(repeats.length))
        return
    if repeats.length is not None and repeats.length != len(source):
        ctx.fail(f"{repeats.length} repeats for an input of rank {len(source)}")
    if repeats.values is None:
        ctx.set_output_shape("output", (None,) * len(source))
        return
    for count in repeats.values:
        if type(count) is int and count < 0:
            ctx.fail(f"repeats {list(repeats.values)} must not be negative")
    shape = within_limits(ctx, tuple(mul_dim(dim, count) for dim, count in zip(source, repeats.values)))
    ctx.set_output_shape("output", shape)
    data = ctx.input_data("input")
    count, size = repeats.values[0] if source else None, shape[0] if shape else None
    if (data is not None and len(source) == 1 and type(count) is int and type(size) is int and size <= DATA_LIMIT
            and len(data.values) == source[0]):
        values = tuple(data.values) * count
        ctx.set_output_data("output", Data((len(values),), values))


def _blocksize(ctx: InferenceContext) -> int:
    size = ctx.int_attr("blocksize", 0)
    if size < 1:
        ctx.fail(f"blocksize {size} must be positive")
    return size


@rule("depth_to_space", "(N, C, H, W) -> (N, C/(b*b), H*b, W*b) for blocksize b.",
      blocksize=attribute(required=True))
def depth_to_space(ctx: InferenceContext) -> None:
    block = _blocksize(ctx)
    n, c, h, w = ctx.input_with_rank(0, 4)
    try:
        channels = div_dim(c, block * block)
    except ShapeError:
        ctx.fail(f"{c} channels do not divide into blocks of {block}x{block}")
    ctx.set_output_shape(0, within_limits(ctx, (n, channels, mul_dim(h, block), mul_dim(w, block))))


@rule("space_to_depth", "(N, C, H, W) -> (N, C*b*b, H/b, W/b) for blocksize b.",
      blocksize=attribute(required=True))
def space_to_depth(ctx: InferenceContext) -> None:
    block = _blocksize(ctx)
    n, c, h, w = ctx.input_with_rank(0, 4)
    try:
        height, width = div_dim(h, block), div_dim(w, block)
    except ShapeError:
        ctx.fail(f"height {h} and width {w} must be multiples of blocksize {block}")
    ctx.set_output_shape(0, within_limits(ctx, (n, mul_dim(c, block * block), height, width)))
