"""Rule for onnxruntime's GroupQueryAttention (com.microsoft).

The query is (batch, seq, num_heads * head_size), or packs Q, K and V along its last axis,
(batch, seq, (num_heads + 2 * kv_num_heads) * head_size), when key and value are absent.
The key/value cache is (batch, kv_num_heads, cache_len, head_size). The kernel accepts a
total_sequence_length T that equals past + seq (a cache that grows) or is at most the
cache buffer's length (a buffer shared by past and present), and its present cache is
max(T, cache_len) long; a windowed cache (sliding_window_cache = 1) keeps its capacity.
Without a cache T must equal seq, so the present cache is seq long.
"""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext, attribute, rule
from opspec.runtime.rules._dims import merged, one_value
from opspec.runtime.rules.attention import check_groups
from opspec.runtime.rules.ort_attention import head_count
from opspec.runtime.shape import ShapeError, Sym, div_dim, max_dim, mul_dim

_QUERY, _KEY, _VALUE, _PAST_KEY, _PAST_VALUE, _TOTAL = 0, 1, 2, 3, 4, 6
_PRESENT_KEY, _PRESENT_VALUE, _OUTPUT_QK = 1, 2, 3


def known_max(a, b):
    """max(a, b) simplified when one of them is provably the larger; None when either is unknown."""
    if a is None or b is None:
        return None
    if type(a) is Sym or type(b) is Sym:
        difference = a - b
        if type(difference) is int:
            return a if difference >= 0 else b
        if difference.never_negative:
            return a
        if (-difference).never_negative:
            return b
    return max_dim(a, b)


def _head_size(hidden, heads: int | None, packed: bool, kv_heads: int | None):
    """The head size the kernel derives from the query's last axis (it truncates integers)."""
    if heads is None:
        return None
    parts = heads
    if packed:
        if kv_heads is None:
            return None
        parts += 2 * kv_heads
    if type(hidden) is int:
        return hidden // parts
    try:
        return div_dim(hidden, parts)
    except ShapeError:
        return None


@rule("group_query_attention", "output (batch, seq, num_heads * head_size); present key and value (batch, "
      "kv_num_heads, max(total_sequence_length, cache_len), head_size), the cache's own length for a windowed "
      "cache and seq without a cache; output_qk (batch, num_heads, seq, total_sequence_length).",
      num_heads=attribute(), kv_num_heads=attribute(), qk_output=attribute(),
      sliding_window_cache=attribute())
def group_query_attention(ctx: InferenceContext) -> None:
    heads = head_count(ctx, "num_heads")
    kv_heads = head_count(ctx, "kv_num_heads")
    check_groups(ctx, heads, kv_heads)
    batch, seq, hidden = ctx.input_with_rank(_QUERY, 3)
    packed = not ctx.has_input(_KEY)
    head_size = _head_size(hidden, heads, packed, kv_heads)
    ctx.set_output_shape(0, (batch, seq, mul_dim(heads, head_size) if packed else hidden))

    total = one_value(ctx, _TOTAL)
    if ctx.has_input(_PAST_KEY):
        key, value, total = _present_with_cache(ctx, batch, kv_heads, seq, total)
        elem = None  # the cache's own element type, bound by the engine
    else:
        # without a cache the kernel needs total_sequence_length == seq
        key = value = (batch, kv_heads, seq, head_size)
        total = seq if total is None else total
        elem = ctx.input_elem(_QUERY) or None
    if ctx.output_count > _PRESENT_KEY:
        ctx.set_output_shape(_PRESENT_KEY, key, elem)
    if ctx.output_count > _PRESENT_VALUE:
        ctx.set_output_shape(_PRESENT_VALUE, value, elem)
    if ctx.output_count > _OUTPUT_QK:
        if ctx.input_shape(_PAST_KEY) is not None and ctx.int_attr("qk_output", 0) == 0:
            ctx.fail("output_qk is requested but attribute qk_output is 0 (no output)")
        ctx.set_output_shape(_OUTPUT_QK, (batch, heads, seq, total))


def _present_with_cache(ctx: InferenceContext, batch, kv_heads, seq, total):
    """present_key, present_value and the total sequence length when past_key is given.

    An empty cache (length 0) needs total_sequence_length == seq, as no cache does."""
    past_key = ctx.input_with_rank(_PAST_KEY, 4)
    past_value = ctx.input_with_rank(_PAST_VALUE, 4) if ctx.has_input(_PAST_VALUE) else (None,) * 4
    batch = merged(ctx, "batch sizes of query, past_key and past_value", batch, past_key[0], past_value[0])
    kv_heads = merged(ctx, f"kv_num_heads ({kv_heads}) and the head axes of past_key and past_value",
                      kv_heads, past_key[1], past_value[1])
    cache = merged(ctx, "cache lengths of past_key and past_value", past_key[2], past_value[2])
    if total is None and cache == 0:
        total = seq
    if ctx.int_attr("sliding_window_cache", 0) == 1:
        length = cache  # a windowed cache keeps its capacity
    else:
        length = known_max(total, cache)
    return (batch, kv_heads, length, past_key[3]), (batch, kv_heads, length, past_value[3]), total
