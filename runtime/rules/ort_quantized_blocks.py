"""Rules for onnxruntime's quantized building blocks: attention, embedding, LSTM, 16-bit
matmul and block floating point.
"""
from __future__ import annotations

from opspec.runtime.contract import INT64, InferenceContext, attribute, input, rule
from opspec.runtime.contract.elements import INT32, UINT8
from opspec.runtime.rules.linalg import matmul
from opspec.runtime.shape import Dim, ShapeError, add_dim, div_dim, format_dim, format_shape, merge_dim


def _merged(ctx: InferenceContext, what: str, sources: list[tuple[str, Dim]]) -> Dim:
    """One dim that every named source must equal; a failure quotes the two that differ."""
    dim: Dim = None
    first: str | None = None
    for name, value in sources:
        try:
            dim = merge_dim(dim, value)
        except ShapeError:
            ctx.fail(f"{what}: {name} gives {format_dim(value)} but {first} gives {format_dim(dim)}")
        if value is not None and first is None:
            first = name
    return dim


def _divided(ctx: InferenceContext, dim, by: int, what: str):
    """``dim / by``, or a failure when it provably does not divide."""
    try:
        return div_dim(dim, by)
    except ShapeError:
        ctx.fail(f"{what} {format_dim(dim)} does not divide by {by}")


@rule("matmul_int32", "numpy.matmul shapes, in int32 whatever the 16-bit operand types.",
      a=input("A", doc="the left operand"), b=input("B", doc="the right operand"))
def matmul_int32(ctx: InferenceContext) -> None:
    """MatMulInteger16: the ``matmul`` rule's shape; the product is accumulated in int32."""
    matmul(ctx)
    result = ctx.output_type("Y")
    ctx.set_output_shape("Y", result.shape if result is not None else None, INT32)


# ---------------------------------------------------------------------------------- attention

@rule("quantized_attention", "output (batch, seq, hidden) with hidden = bias / 3; present (2, batch, heads, "
      "past + seq, head size).", num_heads=attribute(), past=input(),
      past_present_share_buffer=attribute())
def quantized_attention(ctx: InferenceContext) -> None:
    """QAttention: input (B, S, Hin), weight (Hin, 3 * hidden), bias (3 * hidden,)."""
    x, weight, bias = ctx.input_with_rank("input", 3), ctx.input_with_rank("weight", 2), ctx.input_with_rank("bias", 1)
    _merged(ctx, "input hidden size", [(f"input {format_shape(x)}", x[2]),
                                       (f"weight {format_shape(weight)}", weight[0])])
    packed = _merged(ctx, "packed Q, K, V size", [(f"bias {format_shape(bias)}", bias[0]),
                                                 (f"weight {format_shape(weight)}", weight[1])])
    hidden = _divided(ctx, packed, 3, "the packed Q, K, V size")
    ctx.set_output_shape("output", (x[0], x[1], hidden))
    if ctx.has_output("present"):
        ctx.set_output_shape("present", _present(ctx, x, hidden))


def _present(ctx: InferenceContext, x: tuple, hidden) -> tuple:
    """(2, B, heads, past + S, head size); past's length is unknown when past and present share a buffer."""
    heads = ctx.int_attr("num_heads", 0)
    if heads < 1:
        ctx.fail(f"num_heads {heads} must be positive")
    head_size = _divided(ctx, hidden, heads, f"for {heads} heads, the hidden size")
    batch, total = x[0], x[1]
    index = ctx.input_arg("past")
    if index is not None:
        past = ctx.input_with_rank(index, 5)
        for axis, (dim, expected) in enumerate(zip(past, (2, batch, heads, None, head_size))):
            _merged(ctx, f"past axis {axis}", [(f"past {format_shape(past)}", dim), ("the other inputs", expected)])
        batch = merge_dim(batch, past[1])
        total = None if ctx.flag_attr("past_present_share_buffer") else add_dim(past[3], x[1])
    return (2, batch, heads, total, head_size)


# ---------------------------------------------------------------------------------- embedding

@rule("quantized_embed_layer_norm", "layernorm_out (batch, seq, hidden) and mask_index_out (batch,): hidden is "
      "the embeddings' width.")
def quantized_embed_layer_norm(ctx: InferenceContext) -> None:
    """QEmbedLayerNormalization: ids (B, S); segment ids and mask, when given, share their shape."""
    ids = ctx.input_with_rank("input_ids", 2)
    batch, seq = ids
    for name in ("segment_ids", "mask"):
        if ctx.has_input(name):
            other = ctx.input_with_rank(name, 2)
            batch = _merged(ctx, "batch", [("input_ids", batch), (name, other[0])])
            seq = _merged(ctx, "sequence length", [("input_ids", seq), (name, other[1])])
    widths = []
    for name, rank in (("word_embedding_quant", 2), ("position_embedding_quant", 2), ("segment_embedding", 2),
                       ("gamma_quant", 1), ("beta_quant", 1)):
        if ctx.has_input(name):
            shape = ctx.input_with_rank(name, rank)
            widths.append((f"{name} {format_shape(shape)}", shape[-1]))
    hidden = _merged(ctx, "hidden size", widths)
    ctx.set_output_shape("layernorm_out", (batch, seq, hidden))
    ctx.set_output_shape("mask_index_out", (batch,), INT32)


# ---------------------------------------------------------------------------------- lstm

@rule("quantized_lstm", "Y (seq, directions, batch, hidden), Y_h and Y_c (directions, batch, hidden); weights "
      "are laid out (directions, input or hidden, 4 * hidden).", hidden_size=attribute(), direction=attribute())
def quantized_lstm(ctx: InferenceContext) -> None:
    """DynamicQuantizeLSTM: X (T, B, I), W (D, I, 4H), R (D, H, 4H): W and R are transposed
    against the standard LSTM's, so the hidden size is read from R."""
    direction = ctx.attr("direction", "forward")
    if direction not in ("forward", "reverse", "bidirectional"):
        ctx.fail(f"direction {direction!r} is not forward, reverse or bidirectional")
    directions = 2 if direction == "bidirectional" else 1
    x, w, r = (ctx.input_with_rank(name, 3) for name in ("X", "W", "R"))
    _merged(ctx, "directions", [(f"direction {direction!r}", directions), (f"W {format_shape(w)}", w[0]),
                                (f"R {format_shape(r)}", r[0])])
    _merged(ctx, "input size", [(f"X {format_shape(x)}", x[2]), (f"W {format_shape(w)}", w[1])])
    hidden = _merged(ctx, "hidden size", [
        ("hidden_size", ctx.attr("hidden_size")), (f"R {format_shape(r)}", r[1]),
        (f"R {format_shape(r)} / 4 gates", _divided(ctx, r[2], 4, "R's gate width")),
        (f"W {format_shape(w)} / 4 gates", _divided(ctx, w[2], 4, "W's gate width"))])
    ctx.set_output_shape("Y", (x[0], directions, x[1], hidden))
    for name in ("Y_h", "Y_c"):
        ctx.set_output_shape(name, (directions, x[1], hidden))


# ---------------------------------------------------------------------------------- block floating point

@rule("quantize_bfp", "y: uint8 bytes of a size the format decides; shape and strides: one int64 per axis of x.")
def quantize_bfp(ctx: InferenceContext) -> None:
    """QuantizeBFP: the packed bytes' count depends on the format, so only their type is known."""
    x = ctx.input_shape("x")
    ctx.set_output_shape("y", None, UINT8)
    for name in ("shape", "strides"):
        ctx.set_output_shape(name, (len(x) if x is not None else None,), INT64)


@rule("dequantize_bfp", "y in the element type 'dtype' names; its shape is not inferred.",
      dtype=attribute(doc="the attribute holding the output element type"))
def dequantize_bfp(ctx: InferenceContext) -> None:
    """DequantizeBFP: the element type from ``dtype``; onnxruntime infers no shape either."""
    ctx.set_output_shape("y", None, ctx.elem_attr("dtype", ctx.output_elem("y")))

