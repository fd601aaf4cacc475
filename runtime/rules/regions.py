"""Rules for ops that pick or pool regions of an image: NonMaxSuppression, MaxRoiPool,
RoiAlign, Col2Im, AffineGrid, ImageDecoder."""
from __future__ import annotations

from opspec.runtime.contract import INT64, InferenceContext, attribute, input, rule
from opspec.runtime.shape import ShapeError, div_dim, format_shape, num_elements


@rule("non_max_suppression", "(selected, 3) int64 indices; how many boxes survive depends on the data.")
def non_max_suppression(ctx: InferenceContext) -> None:
    boxes, scores = ctx.input_with_rank("boxes", 3), ctx.input_with_rank("scores", 3)
    if type(boxes[2]) is int and boxes[2] != 4:
        ctx.fail(f"boxes {format_shape(boxes)} must hold 4 coordinates per box")
    for i, j in ((0, 0), (1, 2)):
        if type(boxes[i]) is int and type(scores[j]) is int and boxes[i] != scores[j]:
            ctx.fail(f"boxes {format_shape(boxes)} and scores {format_shape(scores)} disagree")
    ctx.set_output_shape("selected_indices", (ctx.fresh_dim(), 3), INT64)


@rule("max_roi_pool", "(rois, C, pooled height, pooled width): each region of interest pooled to a fixed size.",
      pooled_shape=attribute(required=True))
def max_roi_pool(ctx: InferenceContext) -> None:
    x, rois = ctx.input_with_rank("X", 4), ctx.input_with_rank("rois", 2)
    pooled = ctx.ints_attr("pooled_shape")
    if pooled is None or len(pooled) != 2 or any(p < 1 for p in pooled):
        ctx.fail(f"pooled_shape {pooled} must be two positive sizes")
    if type(rois[1]) is int and rois[1] != 5:
        ctx.fail(f"rois {format_shape(rois)} must hold 5 numbers per region (batch index, corners)")
    ctx.set_output_shape("Y", (rois[0], x[1]) + tuple(pooled))


@rule("roi_align", "(rois, C, output_height, output_width): each region of interest sampled to a fixed size.",
      output_height=attribute(), output_width=attribute())
def roi_align(ctx: InferenceContext) -> None:
    x, rois = ctx.input_with_rank("X", 4), ctx.input_with_rank("rois", 2)
    indices = ctx.input_with_rank("batch_indices", 1)

    size = (ctx.int_attr("output_height", 1), ctx.int_attr("output_width", 1))
    if any(s < 1 for s in size):
        ctx.fail(f"output_height and output_width {list(size)} must be positive")
    if type(rois[1]) is int and rois[1] != 4:
        ctx.fail(f"rois {format_shape(rois)} must hold 4 corner coordinates per region")
    count = rois[0]
    if type(count) is int and type(indices[0]) is int and count != indices[0]:
        ctx.fail(f"rois {format_shape(rois)} and batch_indices {format_shape(indices)} count different regions")
    ctx.set_output_shape("Y", (count if count is not None else indices[0], x[1]) + size)


def _sizes(ctx: InferenceContext, key: str):
    """The known values of a 1-D size input (ints or symbols), or None."""
    values = ctx.ints_arg(key)
    return values.values if values.present else None


@rule("col2im", "(N, C, *image_shape) from (N, C * prod(block_shape), L) columns.",
      image_shape=input(required=True), block_shape=input(required=True))
def col2im(ctx: InferenceContext) -> None:
    x = ctx.input_with_rank("input", 3)
    image, block = _sizes(ctx, "image_shape"), _sizes(ctx, "block_shape")
    if image is not None and block is not None and len(image) != len(block):
        ctx.fail(f"image_shape {list(image)} and block_shape {list(block)} differ in length")
    channels = None
    if block is not None and None not in block:
        try:
            channels = div_dim(x[1], num_elements(tuple(block)))
        except ShapeError:
            ctx.fail(f"input {format_shape(x)}: {x[1]} is not a multiple of the block size {num_elements(tuple(block))}")
    count = len(image) if image is not None else len(block) if block is not None else None
    if count is None:
        count = ctx.ints_arg("image_shape").length
    spatial = tuple(image) if image is not None else ctx.unknown_dims(count)
    ctx.set_output_shape("output", None if spatial is None else (x[0], channels) + spatial)


@rule("affine_grid", "(N, H, W, 2) or (N, D, H, W, 3) sampling grid for a batch of affine matrices.",
      size=input(required=True))
def affine_grid(ctx: InferenceContext) -> None:
    theta = ctx.input_shape("theta")
    size = _sizes(ctx, "size")
    if size is not None and len(size) not in (4, 5):
        ctx.fail(f"size {list(size)} must be (N, C, H, W) or (N, C, D, H, W)")
    if size is not None:
        spatial = len(size) - 2
    elif theta is not None and len(theta) == 3 and type(theta[1]) is int:
        spatial = theta[1]
    else:
        spatial = None
    if spatial not in (2, 3):
        ctx.set_output_shape("grid", None)
        return
    if theta is not None and (len(theta) != 3 or any(type(d) is int and d != e for d, e in
                                                     zip(theta[1:], (spatial, spatial + 1)))):
        ctx.fail(f"theta {format_shape(theta)} must be (N, {spatial}, {spatial + 1})")
    batch = size[0] if size is not None else theta[0] if theta is not None else None
    dims = tuple(size[2:]) if size is not None else (None,) * spatial
    ctx.set_output_shape("grid", (batch,) + dims + (spatial,))


@rule("image_decoder", "(height, width, channels): the image size depends on the data; channels on the format.",
      pixel_format=attribute())
def image_decoder(ctx: InferenceContext) -> None:
    ctx.input_with_rank("encoded_stream", 1)
    channels = {"RGB": 3, "BGR": 3, "Grayscale": 1}.get(ctx.attr("pixel_format", "RGB"))
    if channels is None:
        ctx.fail(f"pixel_format {ctx.attr('pixel_format')!r} is not RGB, BGR or Grayscale")
    ctx.set_output_shape("image", (ctx.fresh_dim(), ctx.fresh_dim(), channels))
