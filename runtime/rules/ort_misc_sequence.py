"""Rules for onnxruntime's stateful sequence-model operators of the com.microsoft domain:
CausalConvWithState and its packed variable-length form, GatedDeltaNet, NGramHashMapping and
its packed form, EngramGate, and the hyper-connection stream mixes.

Packed ("varlen") operators hold a batch of requests token after token; their batch size is
the length of cumulative_sequence_length minus one.
"""
from __future__ import annotations

from opspec.runtime.contract import FLOAT, InferenceContext, attribute, rule
from opspec.runtime.rules._dims import merged
from opspec.runtime.shape import Dim, ShapeError, add_dim, div_dim, format_shape, mul_dim, sub_dim

#: The largest state window or capture capacity the operators accept.
_MAX_WINDOW = 8


def _window(ctx: InferenceContext, key: str) -> int:
    """A window or capacity attribute, checked to lie in [0, 8]."""
    value = ctx.int_attr(key, 0)
    if not 0 <= value <= _MAX_WINDOW:
        ctx.fail(f"{ctx.named(key)} must be in [0, {_MAX_WINDOW}], got {value}")
    return value


def _dilation(ctx: InferenceContext) -> int:
    value = ctx.int_attr("dilation", 1)
    if value < 1:
        ctx.fail(f"dilation must be at least 1, got {value}")
    return value


def _state_length(kernel, dilation: int):
    """``(kernel - 1) * dilation``: the positions a causal convolution carries between calls."""
    if kernel is None or type(kernel) is int and kernel < 1:
        return None
    return mul_dim(add_dim(kernel, -1), dilation)


def _batch_of(cumulative):
    """The request count of a packed batch: one less than cumulative_sequence_length's length."""
    try:
        return sub_dim(cumulative, 1) if cumulative is not None else None
    except ShapeError:
        return None


@rule("ort_causal_conv_with_state", "output takes input's shape; present_state (W?, B, C, spatial..., "
      "(k - 1) * dilation), or (W?, B, (k - 1) * dilation, channel axes...) channels-last.",
      ndim=attribute(), dilation=attribute(), channels_last=attribute(), state_window=attribute())
def ort_causal_conv_with_state(ctx: InferenceContext) -> None:
    window, dilation = _window(ctx, "state_window"), _dilation(ctx)
    channels_last, ndim = ctx.int_attr("channels_last", 0), ctx.int_attr("ndim", 1)
    if channels_last not in (0, 1):
        ctx.fail(f"channels_last must be 0 or 1, got {channels_last}")
    if channels_last and ndim != 1:
        ctx.fail(f"channels_last needs ndim 1, got {ndim}")
    x, weight = ctx.input_with_rank_at_least("input", 2), ctx.input_with_rank_at_least("weight", 2)
    ctx.set_output_shape("output", x)
    if not ctx.has_output("present_state"):
        return
    carried = _state_length(weight[-1] if weight is not None else None, dilation)
    leading = (window,) if window else ()
    if x is None or not channels_last and len(x) != 2 + ndim:
        state = None
    elif channels_last:
        state = leading + (x[0], carried) + x[2:]
    else:
        state = leading + (x[0], x[1]) + x[2:-1] + (carried,)
    if state is not None and ctx.input_shape("past_state") is not None:
        state = tuple(merged(ctx, f"dim {i} of past_state and the carried state", a, b)
                      for i, (a, b) in enumerate(zip(state, ctx.input_with_rank("past_state", len(state)))))
    ctx.set_output_shape("present_state", state)


@rule("ort_varlen_causal_conv_with_state", "output takes input's shape (T, C); final_state (B, C, (k - 1) * "
      "dilation) and state_update (B, capacity, C), B being cumulative_sequence_length's length - 1.",
      dilation=attribute(), state_update_capacity=attribute())
def ort_varlen_causal_conv_with_state(ctx: InferenceContext) -> None:
    capacity, dilation = _window(ctx, "state_update_capacity"), _dilation(ctx)
    x = ctx.input_with_rank("input", 2)
    weight = ctx.input_with_rank("weight", 3)
    (cumulative,) = ctx.input_with_rank("cumulative_sequence_length", 1)
    if type(cumulative) is int and cumulative < 2:
        ctx.fail(f"cumulative_sequence_length has {cumulative} elements; it needs at least 2")
    batch = _batch_of(cumulative)
    if type(x[0]) is int and type(batch) is int and x[0] < batch:
        ctx.fail(f"{x[0]} tokens cannot hold {batch} requests of at least one token each")
    if ctx.has_input("capture_count"):
        batch = merged(ctx, "request counts of cumulative_sequence_length and capture_count",
                        batch, ctx.input_with_rank("capture_count", 1)[0])
    channels = merged(ctx, "channel counts of input and weight", x[1], weight[0])
    state: tuple[Dim, ...] = (batch, channels, _state_length(weight[2], dilation))
    if ctx.has_input("initial_state"):
        state = tuple(merged(ctx, f"dim {i} of initial_state and the carried state", a, b)
                      for i, (a, b) in enumerate(zip(state, ctx.input_with_rank("initial_state", 3))))
    ctx.set_output_shape("output", (x[0], state[1]))
    ctx.set_output_shape("final_state", state)
    ctx.set_output_shape("state_update", (state[0], capacity, state[1]))


@rule("ort_gated_delta_net", "output (tokens..., max(Hq, Hv), d_v); final_state takes initial_state's shape; "
      "state_update (B, capacity * (Hv + Hk * d_k + Hv * d_v)), all states float.",
      state_update_capacity=attribute())
def ort_gated_delta_net(ctx: InferenceContext) -> None:
    capacity = _window(ctx, "state_update_capacity")
    state = ctx.input_with_rank("initial_state", 4) if ctx.has_input("initial_state") else None
    ctx.set_output_shape("final_state", state, FLOAT)
    query, value = ctx.input_shape("query"), ctx.input_shape("value")
    if query is None or value is None:
        ctx.set_output_shape("output", None)
        ctx.set_output_shape("state_update", (None, None), FLOAT)
        return
    if len(query) not in (3, 4) or len(value) != len(query):
        ctx.fail(f"query {format_shape(query)} and value {format_shape(value)} must both be rank 3 or both rank 4")
    tokens = len(query) - 2
    q_heads, head_size, v_heads, v_size = query[tokens], query[tokens + 1], value[tokens], value[tokens + 1]
    heads = max(q_heads, v_heads) if type(q_heads) is int and type(v_heads) is int else None
    ctx.set_output_shape("output", query[:tokens] + (heads, v_size))
    count_shape = ctx.input_shape("capture_count")
    if count_shape is not None and len(count_shape) == 1:
        batch = count_shape[0]
    elif tokens == 2:
        batch = query[0]
    else:
        batch = state[0] if state is not None else None
    width = None
    if all(d is not None for d in (q_heads, head_size, v_heads, v_size)):
        width = mul_dim(capacity, add_dim(add_dim(v_heads, mul_dim(q_heads, head_size)), mul_dim(v_heads, v_size)))
    ctx.set_output_shape("state_update", (batch, width), FLOAT)


def _ngram_heads(ctx: InferenceContext) -> tuple[int, int]:
    """(max_ngram_size - 1, the hash heads per token), after checking the attributes."""
    order, per_order = ctx.int_attr("max_ngram_size", -1), ctx.int_attr("n_head_per_ngram", -1)
    if order < 2:
        ctx.fail(f"max_ngram_size must be at least 2, got {order}")
    if per_order < 1:
        ctx.fail(f"n_head_per_ngram must be positive, got {per_order}")
    return order - 1, (order - 1) * per_order


def _check_ngram_tables(ctx: InferenceContext, history: int, heads: int) -> None:
    """multipliers (at least max_ngram_size,), vocab_sizes and head_offsets (heads,), a scalar eos_token_id."""
    (multipliers,) = ctx.input_with_rank("multipliers", 1)
    if type(multipliers) is int and multipliers < history + 1:
        ctx.fail(f"multipliers has {multipliers} elements; max_ngram_size needs at least {history + 1}")
    for name in ("vocab_sizes", "head_offsets"):
        if ctx.has_input(name):
            (length,) = ctx.input_with_rank(name, 1)
            if type(length) is int and length != heads:
                ctx.fail(f"{name} has {length} elements; there are {heads} hash heads")
    if ctx.has_input("eos_token_id"):
        ctx.input_with_rank("eos_token_id", 0)


@rule("ort_ngram_hash_mapping", "hash_ids (B, S, (max_ngram_size - 1) * n_head_per_ngram); present_ids "
      "(B, max_ngram_size - 1).", max_ngram_size=attribute(required=True), n_head_per_ngram=attribute(required=True))
def ort_ngram_hash_mapping(ctx: InferenceContext) -> None:
    history, heads = _ngram_heads(ctx)
    _check_ngram_tables(ctx, history, heads)
    batch, steps = ctx.input_with_rank("input_ids", 2)
    if ctx.has_input("segment_ids"):
        segment_batch, segment_steps = ctx.input_with_rank("segment_ids", 2)
        batch = merged(ctx, "batch sizes of input_ids and segment_ids", batch, segment_batch)
        steps = merged(ctx, "sequence lengths of input_ids and segment_ids", steps, segment_steps)
    if ctx.has_input("past_ids"):
        past_batch, past_history = ctx.input_with_rank("past_ids", 2)
        batch = merged(ctx, "batch sizes of input_ids and past_ids", batch, past_batch)
        merged(ctx, "past_ids' length and max_ngram_size - 1", history, past_history)
    ctx.set_output_shape("hash_ids", (batch, steps, heads))
    ctx.set_output_shape("present_ids", (batch, history))


@rule("ort_varlen_ngram_hash_mapping", "hash_ids (T, heads); present ids and segment ids (B, max_ngram_size - 1); "
      "state_update (B, capacity, max_ngram_size - 1).", max_ngram_size=attribute(required=True),
      n_head_per_ngram=attribute(required=True), state_update_capacity=attribute())
def ort_varlen_ngram_hash_mapping(ctx: InferenceContext) -> None:
    history, heads = _ngram_heads(ctx)
    capacity = _window(ctx, "state_update_capacity")
    _check_ngram_tables(ctx, history, heads)
    (tokens,) = ctx.input_with_rank("input_ids", 1)
    (cumulative,) = ctx.input_with_rank("cumulative_sequence_length", 1)
    if type(cumulative) is int and cumulative < 2:
        ctx.fail(f"cumulative_sequence_length has {cumulative} elements; it needs at least 2")
    batch = _batch_of(cumulative)
    for name in ("past_ids", "past_segment_ids"):
        if ctx.has_input(name):
            past_batch, past_history = ctx.input_with_rank(name, 2)
            batch = merged(ctx, f"request counts of cumulative_sequence_length and {name}", batch, past_batch)
            merged(ctx, f"{name}' length and max_ngram_size - 1", history, past_history)
    ctx.set_output_shape("hash_ids", (tokens, heads))
    ctx.set_output_shape("present_ids", (batch, history))
    ctx.set_output_shape("present_segment_ids", (batch, history))
    ctx.set_output_shape("state_update", (batch, capacity, history))


@rule("ort_engram_gate", "output and gated_value_normed take key's shape (B, S, hc_mult, hidden).")
def ort_engram_gate(ctx: InferenceContext) -> None:
    key, query = ctx.input_with_rank("key", 4), ctx.input_with_rank("query", 4)
    value = ctx.input_with_rank("value", 3)
    shape = tuple(merged(ctx, f"dim {i} of key and query", a, b) for i, (a, b) in enumerate(zip(key, query)))
    batch = merged(ctx, "batch sizes of key and value", shape[0], value[0])
    steps = merged(ctx, "sequence lengths of key and value", shape[1], value[1])
    hidden = merged(ctx, "hidden sizes of key and value", shape[3], value[2])
    shape = (batch, steps, shape[2], hidden)
    ctx.set_output_shape("output", shape)
    ctx.set_output_shape("gated_value_normed", shape)


@rule("ort_hyper_connection_pre_mix", "Y (..., H): grouped streams (..., C, H), or flattened (..., C * H) with "
      "'num_branches' C, summed over the C streams.", num_branches=attribute())
def ort_hyper_connection_pre_mix(ctx: InferenceContext) -> None:
    branches = ctx.int_attr("num_branches", 0)
    if branches < 0:
        ctx.fail(f"num_branches must be positive for flattened streams, got {branches}")
    streams = ctx.input_shape("streams")
    if streams is None:
        ctx.set_output_shape("output", None)
        return
    if not branches:
        if len(streams) < 2:
            ctx.fail(f"grouped streams {format_shape(streams)} need rank 2 or more: (..., C, H)")
        ctx.set_output_shape("output", streams[:-2] + streams[-1:])
        return
    if not streams:
        ctx.fail("flattened streams need rank 1 or more: (..., C * H)")
    try:
        hidden = div_dim(streams[-1], branches) if streams[-1] is not None else None
    except ShapeError:
        ctx.fail(f"the width of streams {format_shape(streams)} does not divide into {branches} branches")
    ctx.set_output_shape("output", streams[:-1] + (hidden,))


@rule("ort_hyper_connection_post_mix", "output takes the shape of streams.")
def ort_hyper_connection_post_mix(ctx: InferenceContext) -> None:
    ctx.set_output_shape("output", ctx.input_shape("streams"))

