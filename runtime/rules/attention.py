"""Rules for attention and its state-carrying kin: Attention, FlexAttention, RotaryEmbedding,
LinearAttention and CausalConvWithState.

Attention takes Q, K and V either packed, (batch, seq, heads * head_size) with the head
counts as attributes, or split, (batch, heads, seq, head_size). The rules read every
operand as the split view and write each output back in the layout its source uses.
"""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext, attribute, option, rule
from opspec.runtime.rules._dims import merged
from opspec.runtime.shape import Dim, ShapeError, add_dim, div_dim, format_shape, merge_shapes, mul_dim

_UNKNOWN_VIEW = (None, None, None, None)


def head_count(ctx: InferenceContext, key: str, operand: str) -> int:
    """A positive head count from the attribute argument ``key`` names, which a packed (3-D)
    ``operand`` needs."""
    heads = ctx.attr(key)
    name = ctx.named(key) or key
    if heads is None:
        ctx.fail(f"{operand} is 3-D (packed heads), so attribute {name} is required")
    if type(heads) is not int or heads <= 0:
        ctx.fail(f"{name} must be a positive integer, got {heads!r}")
    return heads


def split_view(ctx: InferenceContext, name: str, heads_key: str):
    """Input ``name`` as (batch, heads, seq, head_size) and its rank (None when unknown).

    A packed 3-D input splits its last axis into the attribute's head count; an input that
    is absent or of unknown rank gives four unknown dims."""
    shape = ctx.input_shape(name)
    if shape is None:
        return None, _UNKNOWN_VIEW
    if len(shape) == 4:
        return 4, shape
    if len(shape) != 3:
        ctx.fail(f"{name} {format_shape(shape)} must be 3-D (batch, seq, hidden) or 4-D "
                 "(batch, heads, seq, head_size)")
    heads = head_count(ctx, heads_key, name)
    try:
        head_size = div_dim(shape[2], heads)
    except ShapeError:
        ctx.fail(f"{name} {format_shape(shape)}: hidden size {shape[2]} does not split into "
                 f"{heads} heads")
    return 3, (shape[0], heads, shape[1], head_size)


def check_groups(ctx: InferenceContext, q_heads, kv_heads) -> None:
    """Grouped-query attention: the query heads must split evenly among the key/value heads."""
    if type(q_heads) is int and type(kv_heads) is int and (kv_heads <= 0 or q_heads % kv_heads):
        ctx.fail(f"{q_heads} query heads do not split evenly into groups over {kv_heads} key/value heads")


@rule("attention", "Y in Q's layout with V's head size; present key and value (batch, kv_heads, past + kv_seq, "
      "head_size); the QK product (batch, q_heads, q_seq, past + kv_seq).",
      q_num_heads=attribute(), kv_num_heads=attribute(),
      strict=option("bool", False, doc="also refuse head-count attributes with 4-D Q, present_key without "
                    "present_value, nonpad_kv_seqlen with past_key and window sizes below -1"))
def attention(ctx: InferenceContext) -> None:
    if ctx.option("strict"):
        _check_usage(ctx)
    q_rank, (q_batch, q_heads, q_seq, q_size) = split_view(ctx, "Q", "q_num_heads")
    _, (k_batch, k_heads, k_seq, k_size) = split_view(ctx, "K", "kv_num_heads")
    _, (v_batch, v_heads, v_seq, v_size) = split_view(ctx, "V", "kv_num_heads")
    batch = merged(ctx, "batch sizes of Q, K and V", q_batch, k_batch, v_batch)
    kv_heads = merged(ctx, "head counts of K and V", k_heads, v_heads)
    kv_seq = merged(ctx, "sequence lengths of K and V", k_seq, v_seq)
    merged(ctx, "head sizes of Q and K", q_size, k_size)
    check_groups(ctx, q_heads, kv_heads)

    past_key = _past(ctx, "past_key")
    past_value = _past(ctx, "past_value")
    if (past_key is None) != (past_value is None):
        ctx.fail("past_key and past_value must be given together")
    if past_key is None:
        total = kv_seq
        key = (batch, kv_heads, kv_seq, k_size)
        value = (batch, kv_heads, kv_seq, v_size)
    else:
        past = merged(ctx, "sequence lengths of past_key and past_value", past_key[2], past_value[2])
        total = add_dim(past, kv_seq)
        key = (merged(ctx, "batch sizes of past_key and K", past_key[0], batch),
               merged(ctx, "head counts of past_key and K", past_key[1], kv_heads), total,
               merged(ctx, "head sizes of past_key and K", past_key[3], k_size))
        value = (merged(ctx, "batch sizes of past_value and V", past_value[0], batch),
                 merged(ctx, "head counts of past_value and V", past_value[1], kv_heads), total,
                 merged(ctx, "head sizes of past_value and V", past_value[3], v_size))

    if q_rank == 4:
        ctx.set_output_shape("Y", (batch, q_heads, q_seq, v_size))
    elif q_rank == 3:
        ctx.set_output_shape("Y", (batch, q_seq, mul_dim(q_heads, v_size)))
    else:
        ctx.set_output_shape("Y", None)
    ctx.set_output_shape("present_key", key)
    ctx.set_output_shape("present_value", value)
    ctx.set_output_shape("qk_matmul_output", (batch, q_heads, q_seq, total))


def _check_usage(ctx: InferenceContext) -> None:
    """What the op's later versions refuse beyond the shapes."""
    for name in ("left_window_size", "right_window_size"):
        size = ctx.attribute(name, -1)
        if type(size) is not int or size < -1:
            ctx.fail(f"{name} must be -1 (unbounded) or at least 0, got {size}")
    q = ctx.input_shape("Q")
    if q is not None and len(q) == 4 and (ctx.has_attribute("q_num_heads") or ctx.has_attribute("kv_num_heads")):
        ctx.fail("q_num_heads and kv_num_heads are for 3-D (packed) inputs; Q is 4-D")
    if ctx.output_count == 2:  # an output the node leaves out in the middle is not seen, so only this is sure
        ctx.fail("present_key and present_value must be asked for together")
    if ctx.input_index("nonpad_kv_seqlen") is not None and ctx.input_index("past_key") is not None:
        ctx.fail("nonpad_kv_seqlen cannot be combined with a past key/value cache")


def _past(ctx: InferenceContext, name: str):
    """A past cache input as (batch, kv_heads, past_seq, head_size), or None when the node omits it."""
    index = ctx.input_index(name)
    if index is None:
        return None
    return ctx.input_with_rank(index, 4)


@rule("flex_attention", "Y (batch, q_heads, q_seq, v_head_size) from split (4-D) Q, K and V.")
def flex_attention(ctx: InferenceContext) -> None:
    q_batch, q_heads, q_seq, q_size = ctx.input_with_rank("Q", 4)
    k_batch, k_heads, k_seq, k_size = ctx.input_with_rank("K", 4)
    v_batch, v_heads, v_seq, v_size = ctx.input_with_rank("V", 4)
    batch = merged(ctx, "batch sizes of Q, K and V", q_batch, k_batch, v_batch)
    kv_heads = merged(ctx, "head counts of K and V", k_heads, v_heads)
    merged(ctx, "sequence lengths of K and V", k_seq, v_seq)
    merged(ctx, "head sizes of Q and K", q_size, k_size)
    check_groups(ctx, q_heads, kv_heads)
    ctx.set_output_shape("Y", (batch, q_heads, q_seq, v_size))


@rule("rotary_embedding", "Y takes X's shape; X is (batch, seq, hidden), which needs 'num_heads', or "
      "(batch, heads, seq, head_size).", num_heads=attribute())
def rotary_embedding(ctx: InferenceContext) -> None:
    x = ctx.input_shape("X")
    if x is not None and len(x) not in (3, 4):
        ctx.fail(f"input {format_shape(x)} must be 3-D (batch, seq, hidden) or 4-D (batch, heads, seq, head_size)")
    if x is not None and len(x) == 3:
        head_count(ctx, "num_heads", "input")
    ctx.set_output_shape("Y", x)


_UPDATE_RULES = ("linear", "gated", "delta", "gated_delta")


@rule("linear_attention", "output (B, T, q_heads * d_v) from packed query, key and value; present_state "
      "(B, kv_heads, d_k, d_v).", q_num_heads=attribute(), kv_num_heads=attribute(), update_rule=attribute())
def linear_attention(ctx: InferenceContext) -> None:
    update_rule = ctx.attr("update_rule", "gated_delta")
    if update_rule not in _UPDATE_RULES:
        ctx.fail(f"update_rule {update_rule!r} is not one of {', '.join(_UPDATE_RULES)}")
    q_heads = head_count(ctx, "q_num_heads", "query")
    kv_heads = head_count(ctx, "kv_num_heads", "key")
    check_groups(ctx, q_heads, kv_heads)
    query, key, value = (ctx.input_with_rank(name, 3) for name in ("query", "key", "value"))
    key_size = merged(ctx, "key head sizes of query and key",
                      _head_size(ctx, "query", query[2], q_heads), _head_size(ctx, "key", key[2], kv_heads))
    value_size = _head_size(ctx, "value", value[2], kv_heads)
    batch = merged(ctx, "batch sizes of query, key and value", query[0], key[0], value[0])
    steps = merged(ctx, "sequence lengths of query, key and value", query[1], key[1], value[1])
    state: tuple[Dim, ...] = (batch, kv_heads, key_size, value_size)
    past = ctx.has_input("past_state")
    if past:
        past_state = ctx.input_with_rank("past_state", 4)
        try:
            state = merge_shapes(state, past_state)
        except ShapeError:
            ctx.fail(f"past_state {format_shape(past_state)} must be (B, kv_heads, d_k, d_v) = {format_shape(state)}")
    ctx.set_output_shape("output", (state[0], steps, mul_dim(q_heads, state[3])))
    # without past_state the state takes the query's element type
    ctx.set_output_shape("present_state", state, None if past else ctx.input_elem("query") or None)


def _head_size(ctx: InferenceContext, name: str, hidden, heads):
    try:
        return div_dim(hidden, heads)
    except ShapeError:
        ctx.fail(f"{name}: hidden size {hidden} does not split into {heads} heads")


_ACTIVATIONS = ("none", "silu", "swish")


@rule("causal_conv_with_state", "output takes input's shape (B, C, L); present_state (B, C, k - 1) for a "
      "depthwise kernel (C, 1, k).", activation=attribute())
def causal_conv_with_state(ctx: InferenceContext) -> None:
    activation = ctx.attr("activation", "none")
    if activation not in _ACTIVATIONS:
        ctx.fail(f"activation {activation!r} is not one of {', '.join(_ACTIVATIONS)}")
    batch, channels, length = ctx.input_with_rank("input", 3)
    kernel_channels, one, kernel = ctx.input_with_rank("weight", 3)
    if type(one) is int and one != 1:
        ctx.fail(f"weight's second axis is {one}: a depthwise kernel is (C, 1, k)")
    if type(kernel) is int and kernel < 1:
        ctx.fail(f"kernel size k must be at least 1, got {kernel}")
    channel_dims = [channels, kernel_channels]
    if ctx.has_input("bias"):
        channel_dims.append(ctx.input_with_rank("bias", 1)[0])
    carried = None if kernel is None else add_dim(kernel, -1)
    if ctx.has_input("past_state"):
        past_batch, past_channels, past_carried = ctx.input_with_rank("past_state", 3)
        batch = merged(ctx, "batch sizes of input and past_state", batch, past_batch)
        channel_dims.append(past_channels)
        carried = merged(ctx, "past_state's length and the kernel size minus one", carried, past_carried)
    channels = merged(ctx, "channel counts of input, weight, bias and past_state", *channel_dims)
    ctx.set_output_shape("output", (batch, channels, length))
    ctx.set_output_shape("present_state", (batch, channels, carried))

