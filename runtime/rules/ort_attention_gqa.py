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
from opspec.runtime.rules._dims import merged, one_value, split_evenly
from opspec.runtime.rules.attention import check_groups
from opspec.runtime.rules.ort_attention import divide_or_none, head_count
from opspec.runtime.shape import ShapeError, Sym, div_dim, max_dim, mul_dim


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


def _head_size(ctx: InferenceContext, hidden, heads: int | None, packed: bool, kv_heads: int | None):
    """The head size: the query's last axis split evenly among its heads (Q, K and V's heads when
    packed, checked here; the YAML declares the unpacked split); the kernel also needs it a
    multiple of 8."""
    if heads is None or (packed and kv_heads is None):
        return None
    parts = heads + 2 * kv_heads if packed and kv_heads is not None else heads
    if packed:
        what = f"the packed query's hidden size (num_heads {heads} + 2 * kv_num_heads {kv_heads} heads)"
        size = split_evenly(ctx, what, hidden, parts)
    else:  # that num_heads divides it is declared in the YAML
        size = divide_or_none(hidden, parts)
    if type(size) is int and size % 8:
        ctx.fail(f"head size {size} (query hidden size {hidden} over {parts} heads) must be a multiple of 8")
    return size


def _check_key_value(ctx: InferenceContext, head_size, kv_heads: int | None) -> None:
    """key and value (batch, seq, kv_hidden): the same kv_hidden, kv_num_heads heads of head_size."""
    if not ctx.has_input("key"):
        if ctx.has_input("value"):
            ctx.fail("value is given without key; give both, or neither for a packed query")
        return
    if not ctx.has_input("value"):
        ctx.fail("key is given without value; give both, or neither for a packed query")
    key, value = ctx.input_with_rank("key", 3), ctx.input_with_rank("value", 3)
    kv_hidden = merged(ctx, "hidden sizes of key and value", key[2], value[2])
    kv_size = divide_or_none(kv_hidden, kv_heads)  # that kv_num_heads divides it is declared in the YAML
    merged(ctx, f"the query's head size and key's (hidden {kv_hidden} over {kv_heads} kv heads)", head_size, kv_size)


def _check_rotary_caches(ctx: InferenceContext, head_size, total) -> None:
    """cos_cache and sin_cache (max_positions, rotary_dim / 2), both or neither: the width a multiple
    of 8 and at most (head_size // 16) * 8, head_size a multiple of 16, a row per position."""
    cos, sin = ctx.has_input("cos_cache"), ctx.has_input("sin_cache")
    if cos != sin:
        ctx.fail("cos_cache and sin_cache must be given together")
    if not cos:
        return
    if type(head_size) is int and head_size % 16:
        ctx.fail(f"head size {head_size} must be a multiple of 16 to use cos_cache and sin_cache")
    shapes = {"cos_cache": ctx.input_with_rank("cos_cache", 2), "sin_cache": ctx.input_with_rank("sin_cache", 2)}
    width = merged(ctx, "widths of cos_cache and sin_cache", shapes["cos_cache"][1], shapes["sin_cache"][1])
    if type(width) is int:
        limit = (head_size // 16) * 8 if type(head_size) is int else None
        if width % 8 or (limit is not None and width > limit):
            ctx.fail(f"cos_cache width {width} must be a multiple of 8"
                     + (f" and at most {limit} (head size {head_size} // 16 * 8)" if limit is not None else ""))
    for name, shape in shapes.items():
        if type(shape[0]) is int and type(total) is int and shape[0] < total:
            ctx.fail(f"{name} has {shape[0]} rows, fewer than total_sequence_length {total}")


@rule("group_query_attention", "output (batch, seq, num_heads * head_size); present key and value (batch, "
      "kv_num_heads, max(total_sequence_length, cache_len), head_size), the cache's own length for a windowed "
      "cache and seq without a cache; output_qk (batch, num_heads, seq, total_sequence_length).",
      num_heads=attribute(), kv_num_heads=attribute(), qk_output=attribute(),
      sliding_window_cache=attribute())
def group_query_attention(ctx: InferenceContext) -> None:
    heads = head_count(ctx, "num_heads")
    kv_heads = head_count(ctx, "kv_num_heads")
    check_groups(ctx, heads, kv_heads)
    batch, seq, hidden = ctx.input_with_rank("query", 3)
    packed = not ctx.has_input("key")
    head_size = _head_size(ctx, hidden, heads, packed, kv_heads)
    _check_key_value(ctx, head_size, kv_heads)
    ctx.set_output_shape("output", (batch, seq, mul_dim(heads, head_size) if packed else hidden))

    total = one_value(ctx, "total_sequence_length")
    _check_rotary_caches(ctx, head_size, total)
    if ctx.has_input("past_key") != ctx.has_input("past_value"):
        given, missing = ("past_key", "past_value") if ctx.has_input("past_key") else ("past_value", "past_key")
        ctx.fail(f"{given} is given without {missing}; the cache needs both or neither")
    if ctx.has_input("past_key"):
        key, value, total = _present_with_cache(ctx, batch, kv_heads, seq, total, head_size)
        elem = None  # the cache's own element type, bound by the engine
    else:
        # without a cache the kernel needs total_sequence_length == seq
        key = value = (batch, kv_heads, seq, head_size)
        total = seq if total is None else total
        elem = ctx.input_elem("query") or None
    ctx.set_output_shape("present_key", key, elem)
    ctx.set_output_shape("present_value", value, elem)
    if ctx.has_output("output_qk"):
        if ctx.input_shape("past_key") is not None and ctx.int_attr("qk_output", 0) == 0:
            ctx.fail("output_qk is requested but attribute qk_output is 0 (no output)")
        ctx.set_output_shape("output_qk", (batch, heads, seq, total))


def _present_with_cache(ctx: InferenceContext, batch, kv_heads, seq, total, head_size):
    """present_key, present_value and the total sequence length when past_key is given.

    An empty cache (length 0) needs total_sequence_length == seq, as no cache does."""
    past_key = ctx.input_with_rank("past_key", 4)
    past_value = ctx.input_with_rank("past_value", 4)
    merged(ctx, f"the head size {head_size} and the last axes of past_key and past_value", head_size,
           past_key[3], past_value[3])
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
