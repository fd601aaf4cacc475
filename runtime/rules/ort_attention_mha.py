"""Rules for onnxruntime's multi-head attention over projected Q, K and V (com.microsoft
MultiHeadAttention, DecoderMaskedMultiHeadAttention, PackedMultiHeadAttention, DecoderAttention).

The query is (batch, seq, hidden) or packs Q, K and V as (batch, seq, num_heads, 3, head_size);
key and value are (batch, kv_seq, hidden) each, split per head (batch, num_heads, kv_seq,
head_size), or packed together in the key as (batch, kv_seq, num_heads, 2, head_size). The
present cache (batch, num_heads, past + kv_seq, head_size) grows by the new keys, or keeps the
past buffer's shape when past and present share it.
"""
from __future__ import annotations

from typing import NamedTuple

from opspec.runtime.contract import InferenceContext, attribute, option, rule
from opspec.runtime.rules._dims import merged, one_value
from opspec.runtime.rules.ort_attention import divide_or_none, head_count
from opspec.runtime.shape import Dim, add_dim, format_shape, mul_dim



class Layout(NamedTuple):
    """What the query, key and value say: sizes as dims (None when unknown)."""

    batch: Dim
    seq: Dim
    kv_seq: Dim
    heads: Dim
    head_size: Dim
    v_head_size: Dim
    hidden: Dim  # the output's last axis


def _packed(ctx: InferenceContext, name: str, parts: int):
    """A packed (batch, seq, heads, parts, head_size) input's dims, checking the packing axis."""
    batch, seq, heads, count, size = ctx.input_with_rank(name, 5)
    if type(count) is int and count != parts:
        ctx.fail(f"{name} {format_shape(ctx.input_shape(name))} packs {parts} tensors on axis 3, "
                 f"not {count}")
    return batch, seq, heads, size


def _key_value(ctx: InferenceContext, heads):
    """(batch, kv_seq, heads, head_size, v_head_size, v_hidden) from separate key and value."""
    key = ctx.input_shape("key") if ctx.has_input("key") else None
    value = ctx.input_shape("value") if ctx.has_input("value") else None
    for name, shape in (("key", key), ("value", value)):
        if shape is not None and len(shape) not in (3, 4):
            ctx.fail(f"{name} {format_shape(shape)} must be 3-D (batch, kv_seq, hidden) or 4-D "
                     "(batch, num_heads, kv_seq, head_size)")
    batch: list = []
    kv_seq: list = []
    k_size: list = []
    v_size: list = []
    v_hidden = None
    for shape, sizes in ((key, k_size), (value, v_size)):
        if shape is None:
            continue
        batch.append(shape[0])
        if len(shape) == 3:
            kv_seq.append(shape[1])
            sizes.append(divide_or_none(shape[2], heads))
        else:
            heads = merged(ctx, "num_heads and the head axes of key and value", heads, shape[1])
            kv_seq.append(shape[2])
            sizes.append(shape[3])
    if value is not None:
        v_hidden = value[2] if len(value) == 3 else mul_dim(value[1], value[3])
    return (merged(ctx, "batch sizes of key and value", *batch),
            merged(ctx, "sequence lengths of key and value", *kv_seq), heads,
            k_size[0] if k_size else None, v_size[0] if v_size else None, v_hidden)


def layout(ctx: InferenceContext) -> Layout:
    """The sizes the query, key and value give, in whichever packing they use."""
    heads: Dim = head_count(ctx)
    query = ctx.input_shape("query")
    if query is not None and len(query) not in (3, 5):
        ctx.fail(f"query {format_shape(query)} must be 3-D (batch, seq, hidden) or 5-D packed "
                 "(batch, seq, num_heads, 3, head_size)")
    if query is not None and len(query) == 5:
        batch, seq, q_heads, size = _packed(ctx, "query", 3)
        heads = merged(ctx, "num_heads and the query's head axis", heads, q_heads)
        return Layout(batch, seq, seq, heads, size, size, mul_dim(heads, size))
    batch, seq, hidden = query if query is not None else (None, None, None)
    q_size = divide_or_none(hidden, heads)  # that num_heads divides it is declared in the YAML
    key = ctx.input_shape("key") if ctx.has_input("key") else None
    if ctx.has_input("key") != ctx.has_input("value") and not (key is not None and len(key) == 5):
        if ctx.has_input("value"):
            ctx.fail("value is given without key")
        if key is not None:  # a key of unknown rank may be the packed (5-D) one
            ctx.fail(f"key {format_shape(key)} is given without value; only a packed 5-D key goes alone")
    if key is not None and len(key) == 3:
        merged(ctx, f"hidden sizes of query {format_shape(query)} and key {format_shape(key)}", hidden, key[2])
    if key is not None and len(key) == 5:
        kv_batch, kv_seq, kv_heads, size = _packed(ctx, "key", 2)
        heads = merged(ctx, "num_heads and the packed key's head axis", heads, kv_heads)
        size = merged(ctx, "head sizes of query and packed key", q_size, size)
        return Layout(merged(ctx, "batch sizes of query and key", batch, kv_batch), seq, kv_seq, heads, size,
                      size, hidden)
    if not ctx.has_input("key") and not ctx.has_input("value"):
        # Q, K and V packed on the query's last axis: each head size depends on how the kernel splits it
        return Layout(batch, seq, seq, heads, None, None, None)
    kv_batch, kv_seq, heads, k_size, v_size, v_hidden = _key_value(ctx, heads)
    return Layout(merged(ctx, "batch sizes of query, key and value", batch, kv_batch), seq, kv_seq, heads,
                  merged(ctx, "head sizes of query and key", q_size, k_size), v_size, v_hidden)


@rule("multi_head_attention", "output (batch, seq, v_hidden); present key and value (batch, num_heads, past + "
      "kv_seq, head_size), or the past buffers' shapes when shared; qk (batch, num_heads, seq, past + kv_seq).",
      share_buffer=attribute("past_present_share_buffer"),
      length_shares=option("bool", False, doc="a past_sequence_length input means past and present share "
                           "their buffers"),
      single_token=option("bool", False, doc="the query must hold one token (sequence length 1)"))
def multi_head_attention(ctx: InferenceContext) -> None:
    view = layout(ctx)
    if ctx.option("single_token") and type(view.seq) is int and view.seq != 1:
        ctx.fail(f"the query holds {view.seq} tokens; this op decodes one token at a time (sequence length 1)")
    ctx.set_output_shape("output", (view.batch, view.seq, view.hidden))
    past_key_index = ctx.input_index("past_key")
    if past_key_index is None and ctx.input_index("past_value") is not None:
        ctx.fail("past_value is given without past_key; the cache needs both or neither")
    past_length_index = ctx.input_index("past_sequence_length")
    shared = past_key_index is not None and (
        ctx.flag_attr("share_buffer") or (ctx.option("length_shares") and past_length_index is not None))
    batch, heads = view.batch, view.heads
    past: Dim = 0
    # without a cache, kernels disagree on present_value's head size when V's differs from K's
    value_size = view.v_head_size if view.v_head_size == view.head_size else None
    if past_key_index is None:
        key = (batch, heads, view.kv_seq, view.head_size)
        value = (batch, heads, view.kv_seq, value_size)
    else:
        past_key = ctx.input_with_rank(past_key_index, 4)
        value_index = ctx.input_index("past_value")
        if value_index is None:
            ctx.fail("past_key is given without past_value; the cache needs both or neither")
        past_value = ctx.input_with_rank(value_index, 4)
        # the kernels hold past_value's last axis to the query's head size, whatever V's is
        merged(ctx, f"the query's head size and past_value's last axis {format_shape(ctx.input_shape(value_index))}",
               view.head_size, past_value[3])
        batch = merged(ctx, "batch sizes of query and the past key and value", batch, past_key[0], past_value[0])
        heads = merged(ctx, "num_heads and the head axes of the past key and value", heads, past_key[1],
                       past_value[1])
        past = merged(ctx, "lengths of the past key and value", past_key[2], past_value[2])
        length = past if shared else add_dim(past, view.kv_seq)
        key = (batch, heads, length, merged(ctx, "head sizes of key and past_key", view.head_size, past_key[3]))
        # present_value has V's head size, which past_value's need not show when V's differs from K's
        value = (batch, heads, length, value_size)
    ctx.set_output_shape("present_key", key)
    ctx.set_output_shape("present_value", value)
    if ctx.has_output("qk"):
        if shared:
            past = one_value(ctx, past_length_index) if past_length_index is not None else None
        ctx.set_output_shape("qk", (batch, heads, view.seq, add_dim(past, view.kv_seq)))


@rule("packed_multi_head_attention", "output (token_count, v_hidden) from query (token_count, hidden) and value "
      "(token_count, v_hidden), or (token_count, num_heads * head_size) from packed (token_count, num_heads, 3, "
      "head_size).")
def packed_multi_head_attention(ctx: InferenceContext) -> None:
    query = ctx.input_shape("query")
    if query is None:
        ctx.set_output_shape("output", (None, None))
        return
    if len(query) == 4:
        tokens, heads, three, size = query
        if type(three) is int and three != 3:
            ctx.fail(f"packed query {format_shape(query)} must be (token_count, num_heads, 3, head_size)")
        heads = merged(ctx, "num_heads and the packed query's head axis", head_count(ctx), heads)
        ctx.set_output_shape("output", (tokens, mul_dim(heads, size)))
        return
    if len(query) != 2:
        ctx.fail(f"query {format_shape(query)} must be 2-D (token_count, hidden) or 4-D (token_count, num_heads, "
                 "3, head_size)")
    v_hidden = None
    if ctx.has_input("value"):
        v_hidden = ctx.input_with_rank("value", 2)[1]
    ctx.set_output_shape("output", (query[0], v_hidden))


@rule("decoder_attention", "output takes query's shape (seq, batch, hidden); new caches (batch, num_heads, new "
      "length, head_size), their length set by the run-time flags.")
def decoder_attention(ctx: InferenceContext) -> None:
    query = ctx.input_shape("query")
    ctx.set_output_shape("output", query)
    if not ctx.has_output("new_key_cache"):
        return

    if query is not None and len(query) == 3:
        heads = head_count(ctx)
        cache: tuple[Dim, ...] = (query[1], heads, None, divide_or_none(query[2], heads))
    else:
        cache = (None, None, None, None)
    if ctx.has_input("key_cache") and ctx.has_input("value_cache"):
        key_cache = ctx.input_with_rank("key_cache", 4)
        value_cache = ctx.input_with_rank("value_cache", 4)
        cache = (merged(ctx, "batch sizes of query and the caches", cache[0], key_cache[0], value_cache[0]),
                 merged(ctx, "num_heads and the caches' head axes", cache[1], key_cache[1], value_cache[1]),
                 None,
                 merged(ctx, "head sizes of query and the caches", cache[3], key_cache[3], value_cache[3]))
    ctx.set_output_shape("new_key_cache", cache)
    ctx.set_output_shape("new_value_cache", cache)
