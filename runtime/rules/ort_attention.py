"""Rules for onnxruntime's attention ops that project their input themselves (com.microsoft Attention,
DecoderMaskedSelfAttention, PackedAttention) and for GemmaRotaryEmbedding.

The merged weights are (input_hidden, q_hidden + k_hidden + v_hidden) and the bias holds the
same three sizes; ``qkv_hidden_sizes`` names them, else the three are equal. The output has
v_hidden features per token. The key/value cache stacks K and V on a leading axis of 2:
(2, batch, num_heads, past, head_size) grows by the new tokens, or keeps its (maximum) length
when past and present share one buffer.
"""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext, attribute, input, rule
from opspec.runtime.rules._dims import merged, split_evenly
from opspec.runtime.shape import Dim, ShapeError, add_dim, div_dim, format_shape



def divide_or_none(whole, parts):
    """whole / parts when it divides evenly (symbolically too), else None."""
    if whole is None or parts is None:
        return None
    try:
        return div_dim(whole, parts)
    except ShapeError:
        return None


def projection_width(ctx: InferenceContext):
    """The merged Q/K/V width of weights and bias, which must agree."""
    _, width = ctx.input_with_rank("weights", 2)
    if ctx.has_input("bias"):
        width = merged(ctx, "widths of weights and bias (q + k + v hidden sizes)", width,
                       ctx.input_with_rank("bias", 1)[0])
    return width


def v_hidden_size(ctx: InferenceContext, width):
    """V's hidden size: the last of ``qkv_hidden_sizes`` when set (three sizes summing to the
    projection width), else a third of the width."""
    sizes = ctx.ints_attr("qkv_hidden_sizes")
    if sizes is None or len(sizes) == 0:
        return divide_or_none(width, 3)
    if len(sizes) != 3:
        ctx.fail(f"qkv_hidden_sizes must hold 3 sizes (q, k, v), got {list(sizes)}")
    if any(size <= 0 for size in sizes):
        ctx.fail(f"qkv_hidden_sizes must be positive, got {list(sizes)}")
    merged(ctx, f"the projection width and the sum of qkv_hidden_sizes {list(sizes)}", width, sum(sizes))
    return sizes[2]


def head_count(ctx: InferenceContext, name: str = "num_heads") -> int | None:
    """A head-count attribute: positive when set, None when the node leaves it out."""
    heads = ctx.attribute(name)
    if heads is None:
        return None
    if type(heads) is not int or heads <= 0:
        ctx.fail(f"{name} must be a positive integer, got {heads!r}")
    return heads


def _check_head_split(ctx: InferenceContext, width, heads) -> None:
    """What the kernels hold of the three hidden sizes (qkv_hidden_sizes, else a third of the
    projection width each): each splits evenly into num_heads, Q's equals K's, and with past K's
    equals V's."""
    sizes = ctx.ints_attr("qkv_hidden_sizes")
    if sizes and len(sizes) == 3:
        q, k, v = sizes
    else:
        q = k = v = divide_or_none(width, 3)
    if type(heads) is int:
        for name, size in (("Q", q), ("K", k), ("V", v)):
            split_evenly(ctx, f"{name}'s hidden size (num_heads {heads})", size, heads)
    if type(q) is int and type(k) is int and q != k:
        ctx.fail(f"Q's hidden size {q} and K's {k} differ (qkv_hidden_sizes {list(sizes or ())})")
    if ctx.has_input("past") and type(k) is int and type(v) is int and k != v:
        ctx.fail(f"with past, K's hidden size {k} and V's {v} must be equal (qkv_hidden_sizes {list(sizes or ())})")


@rule("ort_attention", "output (batch, seq, v_hidden); present (2, batch, num_heads, past + seq, head_size), "
      "or past's shape when past and present share one buffer.",
      share_buffer=attribute("past_present_share_buffer"), qkv_hidden_sizes=attribute())
def ort_attention(ctx: InferenceContext) -> None:
    batch, seq, features = ctx.input_with_rank("input", 3)
    rows = ctx.input_with_rank("weights", 2)[0]
    merged(ctx, "the input's hidden size and the rows of weights", features, rows)
    width = projection_width(ctx)
    v_hidden = v_hidden_size(ctx, width)
    heads: Dim = head_count(ctx)
    _check_head_split(ctx, width, heads)
    ctx.set_output_shape("output", (batch, seq, v_hidden))
    if not ctx.has_output("present"):
        return
    # kernels differ on the present's head size (V's or Q's) when the hidden sizes differ
    sizes = ctx.ints_attr("qkv_hidden_sizes")
    head_size = divide_or_none(v_hidden, heads) if not sizes or len(set(sizes)) == 1 else None
    if not ctx.has_input("past"):
        ctx.set_output_shape("present", (2, batch, heads, seq, head_size))
        return
    two, past_batch, past_heads, past, past_size = ctx.input_with_rank("past", 5)
    merged(ctx, "past's leading axis (key and value) and 2", two, 2)
    batch = merged(ctx, "batch sizes of input and past", batch, past_batch)
    heads = merged(ctx, "num_heads and past's head axis", heads, past_heads)
    head_size = merged(ctx, "head sizes of V and past", head_size, past_size)
    length = past if ctx.flag_attr("share_buffer") else add_dim(past, seq)
    ctx.set_output_shape("present", (2, batch, heads, length, head_size))


@rule("qordered_attention", "output (batch, seq, qkv_hidden_sizes[0]): the width the CUDA kernel allocates, which "
      "Q_weight's columns must match; Q_weight's columns when the sizes are not set.",
      qkv_hidden_sizes=attribute(), q_weight=input("Q_weight"))
def qordered_attention(ctx: InferenceContext) -> None:
    batch, seq, _ = ctx.input_with_rank("input", 3)
    weight = ctx.input_arg("q_weight")
    columns = ctx.input_with_rank(weight, 2)[1] if weight is not None else None
    sizes = ctx.ints_attr("qkv_hidden_sizes")
    width = merged(ctx, f"Q_weight's columns and qkv_hidden_sizes[0] = {sizes[0]}", columns, sizes[0]) \
        if sizes else columns
    ctx.set_output_shape("output", (batch, seq, width))


def rotated_head_size(ctx: InferenceContext, heads_needed: bool) -> Dim:
    """The head size of a rotary embedding's input, checking what the kernels check: a 3-D or 4-D
    input, num_heads with rotary_embedding_dim (and, with ``heads_needed``, with any 3-D input); the
    YAML declares that num_heads divides a 3-D input's hidden size."""
    heads = ctx.int_attr("num_heads", 0)
    rotary = ctx.int_attr("rotary_embedding_dim", 0)
    if rotary > 0 and heads <= 0:
        ctx.fail(f"rotary_embedding_dim {rotary} needs num_heads (positive), which is not set")
    x = ctx.input_shape("input")
    if x is None:
        return None
    if len(x) not in (3, 4):
        ctx.fail(f"input {format_shape(x)} must be 3-D (batch, seq, hidden) or 4-D (batch, heads, seq, head_size)")
    if len(x) == 4:
        return x[3]
    if heads <= 0:
        if heads_needed:
            ctx.fail(f"input {format_shape(x)} is 3-D, which needs num_heads (positive) to find the head size")
        return None
    return divide_or_none(x[2], heads)  # that num_heads divides it is declared in the YAML


@rule("ort_rotary_embedding", "output takes input's shape: (batch, seq, hidden) or (batch, heads, seq, head_size).",
      num_heads=attribute(), rotary_embedding_dim=attribute())
def ort_rotary_embedding(ctx: InferenceContext) -> None:
    rotated_head_size(ctx, heads_needed=False)
    ctx.set_output_shape("output", ctx.input_shape("input"))



@rule("mrotary_embedding", "output takes input's shape: (batch, seq, hidden) or (batch, heads, seq, head_size); "
      "mrope_section's three sizes sum to half the rotated channels.",
      num_heads=attribute(), rotary_embedding_dim=attribute(), mrope_section=attribute())
def mrotary_embedding(ctx: InferenceContext) -> None:
    """The rotated channels are rotary_embedding_dim, else the whole head; their pairs are what
    mrope_section shares out among the temporal, height and width positions."""
    head_size = rotated_head_size(ctx, heads_needed=True)
    rotary = ctx.int_attr("rotary_embedding_dim", 0) or head_size
    sections = ctx.ints_attr("mrope_section")
    if type(rotary) is int and rotary > 0:
        if rotary % 2:
            ctx.fail(f"the rotated channels ({rotary}) must be even")
        if sections is not None and sum(sections) != rotary // 2:
            ctx.fail(f"mrope_section {list(sections)} sums to {sum(sections)}, but half the rotated channels "
                     f"is {rotary // 2}")
    ctx.set_output_shape("output", ctx.input_shape("input"))



@rule("packed_attention", "output (token_count, v_hidden) from packed input (token_count, input_hidden).",
      qkv_hidden_sizes=attribute())
def packed_attention(ctx: InferenceContext) -> None:
    tokens, features = ctx.input_with_rank("input", 2)
    rows = ctx.input_with_rank("weights", 2)[0]
    merged(ctx, "the input's hidden size and the rows of weights", features, rows)
    ctx.set_output_shape("output", (tokens, v_hidden_size(ctx, projection_width(ctx))))


@rule("gemma_rotary_embedding", "output1 and output2 take q's shape (batch, heads, seq, dim); emb is (batch, seq, "
      "dim).")
def gemma_rotary_embedding(ctx: InferenceContext) -> None:
    emb_batch, emb_seq, emb_dim = ctx.input_with_rank("emb", 3)
    batch, heads, seq, dim = ctx.input_with_rank("q", 4)
    q = ctx.input_shape("q")
    emb = ctx.input_shape("emb")
    shape = (merged(ctx, f"batch sizes of emb {format_shape(emb)} and q {format_shape(q)}", batch, emb_batch),
             heads,
             merged(ctx, f"sequence lengths of emb {format_shape(emb)} and q {format_shape(q)}", seq, emb_seq),
             merged(ctx, f"rotary dims of emb {format_shape(emb)} and q {format_shape(q)}", dim, emb_dim))
    ctx.set_output_shape("output1", shape)
    ctx.set_output_shape("output2", shape)

