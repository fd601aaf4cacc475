"""Rules for onnxruntime's fused normalizations of transformer models.

``skip_layer_norm`` serves SkipLayerNormalization and SkipSimplifiedLayerNormalization: a
residual sum normalized over its last axis. ``embed_layer_norm`` serves
EmbedLayerNormalization: three embedding lookups summed and normalized. Both check the
operands as every onnxruntime kernel does (ranks, the hidden size) and refine the output
from every operand that must share a dim with it.
"""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext, attribute, input, rule
from opspec.runtime.rules._dims import alike_shapes
from opspec.runtime.shape import ShapeError, format_dim, format_shape, merge_dim


def _operand(ctx: InferenceContext, key: str) -> tuple[str, tuple | None] | None:
    """The (name, shape) of the input that argument ``key`` names, when the node supplies it."""
    index = ctx.input_arg(key)
    if index is None:
        return None
    return ctx.input_name(index), ctx.input_shape(index)


def _merged(ctx: InferenceContext, dim, other, what: str):
    """``dim`` unified with ``other``, or a failure naming what had to agree."""
    try:
        return merge_dim(dim, other)
    except ShapeError:
        ctx.fail(f"{what}: {format_dim(dim)} and {format_dim(other)} differ")


def _vector_length(ctx: InferenceContext, name: str, shape: tuple | None):
    """The length of a 1-D operand (None when unknown); another rank fails."""
    if shape is None:
        return None
    if len(shape) != 1:
        ctx.fail(f"{name} {format_shape(shape)} must be 1-D (hidden_size,)")
    return shape[0]


# ---------------------------------------------------------------------------------- skip

def _check_rank(ctx: InferenceContext, name: str, shape: tuple | None) -> None:
    if shape is not None and len(shape) not in (2, 3):
        ctx.fail(f"{name} {format_shape(shape)} must be 2-D (tokens, hidden) or 3-D (batch, sequence, hidden)")


@rule("skip_layer_norm", "output and input_skip_bias_sum take input's shape; mean and inv_std_var take it "
      "with the last axis 1.",
      skip=input(), gamma=input(), beta=input(), bias=input())
def skip_layer_norm(ctx: InferenceContext) -> None:
    """input (and skip) are 2-D or 3-D with equal last two dims; gamma, beta and bias are
    ``(hidden,)``. A 3-D skip needs a 3-D input; a 2-D input needs skip of its very shape."""
    x = ctx.input_shape("input")
    skip = _operand(ctx, "skip")
    skip_shape = skip[1] if skip is not None else None
    _check_rank(ctx, "input", x)
    _check_rank(ctx, "skip", skip_shape)
    if x is None and skip_shape is not None and len(skip_shape) == 3:
        x = (None, skip_shape[1], skip_shape[2])  # a 3-D skip is refused beside a 2-D input
    if x is not None:
        out = list(x)
        if skip_shape is not None:
            if len(x) == 2 and len(skip_shape) == 3:
                ctx.fail(f"skip {format_shape(skip_shape)} is 3-D but input {format_shape(x)} is 2-D; "
                         "a 2-D input needs skip of its own shape")
            what = f"the last two dims of input {format_shape(x)} and skip {format_shape(skip_shape)}"
            out[-2] = _merged(ctx, out[-2], skip_shape[-2], what)
            out[-1] = _merged(ctx, out[-1], skip_shape[-1], what)
            if len(x) == 2:
                out[0] = _merged(ctx, out[0], skip_shape[0], what)
        for key in ("gamma", "beta", "bias"):
            operand = _operand(ctx, key)
            if operand is not None:
                name, shape = operand
                length = _vector_length(ctx, name, shape)
                out[-1] = _merged(ctx, out[-1], length,
                                  f"{name} {format_shape(shape)} must match the hidden size of input {format_shape(x)}")
        x = tuple(out)
    stats = x[:-1] + (1,) if x is not None else None
    ctx.set_output_shape("output", x)
    ctx.set_output_shape("mean", stats)
    ctx.set_output_shape("inv_std_var", stats)
    ctx.set_output_shape("input_skip_bias_sum", x)


# ---------------------------------------------------------------------------------- embed

def _matrix_operand(ctx: InferenceContext, key: str, axes: str) -> tuple[str, tuple] | None:
    """The (name, shape) of the input argument ``key`` names when the node supplies it with a known
    shape, which must be 2-D, ``axes`` naming its two axes."""
    operand = _operand(ctx, key)
    if operand is None:
        return None
    name, shape = operand
    if shape is None:
        return None
    if len(shape) != 2:
        ctx.fail(f"{name} {format_shape(shape)} must be 2-D {axes}")
    return name, shape


def _token_grid(ctx: InferenceContext, ids: tuple | None, key: str, batch_may_be_one: bool = False) -> tuple:
    """(batch, sequence) of input_ids refined by a 2-D operand that must share them."""
    grid = ids if ids is not None else (None, None)
    operand = _matrix_operand(ctx, key, "(batch, sequence)")
    if operand is None:
        return grid
    name, shape = operand
    what = f"{name} {format_shape(shape)} must match input_ids {format_shape(ids)}"
    batch = grid[0] if batch_may_be_one else _merged(ctx, grid[0], shape[0], what)
    return batch, _merged(ctx, grid[1], shape[1], what)


def _embedding_width(ctx: InferenceContext, key: str):
    """The width (hidden size) of a 2-D embedding table, when the node supplies it."""
    operand = _matrix_operand(ctx, key, "(rows, hidden_size)")
    return operand[1][1] if operand is not None else None


@rule("embed_layer_norm", "output and embedding_sum (batch, sequence, hidden) from input_ids and the embeddings' "
      "width; mask_index (batch,), whatever 'mask_index_type' says.",
      segment_ids=input(), word_embedding=input(), position_embedding=input(),
      segment_embedding=input(), gamma=input(), beta=input(), mask=input(), position_ids=input())
def embed_layer_norm(ctx: InferenceContext) -> None:
    """input_ids, segment_ids and mask share one 2-D shape; position_ids is (batch or 1, sequence);
    the three tables are 2-D and, with gamma and beta, share the hidden size."""
    ids = ctx.input_shape("input_ids")
    if ids is not None and len(ids) != 2:
        ctx.fail(f"input_ids {format_shape(ids)} must be 2-D (batch, sequence)")
    grid = _token_grid(ctx, ids, "segment_ids")
    grid = _token_grid(ctx, grid, "mask")
    grid = _token_grid(ctx, grid, "position_ids", batch_may_be_one=True)
    hidden = None
    for key in ("word_embedding", "position_embedding", "segment_embedding"):
        hidden = _merged(ctx, hidden, _embedding_width(ctx, key), "the embedding tables' widths")
    for key in ("gamma", "beta"):
        operand = _operand(ctx, key)
        if operand is not None:
            hidden = _merged(ctx, hidden, _vector_length(ctx, *operand),
                             f"{operand[0]} {format_shape(operand[1])} must match the embeddings' width")
    output = (grid[0], grid[1], hidden)
    ctx.set_output_shape("output", output)
    # onnxruntime's kernel writes one count per sequence also when mask_index_type is 0
    ctx.set_output_shape("mask_index", (grid[0],))
    ctx.set_output_shape("embedding_sum", output)


@rule("gated_rms_norm", "Y takes X's shape (..., H * C); gate has X's shape, and scale's size C divides X's last axis.")
def gated_rms_norm(ctx: InferenceContext) -> None:
    """Each group of C = scale's element count along X's last axis is normalized on its own."""
    scale = ctx.input_shape("scale")
    shape = alike_shapes(ctx, "X", ctx.input_shape("X"), "gate", ctx.input_shape("gate"))
    sizes = [dim for dim in scale if type(dim) is int] if scale is not None else []
    if scale is not None and len(sizes) == len(scale):
        size = 1
        for dim in sizes:
            size *= dim
        if size == 0:
            ctx.fail(f"scale {format_shape(scale)} is empty")
        last = shape[-1] if shape else None
        if type(last) is int and last % size:
            ctx.fail(f"X's last axis ({last}) is not a multiple of scale's {size} elements {format_shape(scale)}")
    ctx.set_output_shape("Y", shape)

