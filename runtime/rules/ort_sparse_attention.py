"""Rules for onnxruntime's cache-carrying sparse attention: SparseAttention, DynamicSparseAttention,
PagedAttention, SparsePagedAttention and the two sparse-attention indexers.

Queries come as (batch, seq, hidden) or, for the paged ops, token-major (tokens, hidden). A query
with neither key nor value given packs Q, K and V together along its last axis, which then holds
(num_heads + 2 * kv_num_heads) heads. Caches are updated in place, so each present cache takes its
past cache's shape.
"""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext, rule
from opspec.runtime.rules._dims import one_value
from opspec.runtime.shape import ShapeError, Sym, add_dim, div_dim, format_shape, merge_dim, mul_dim

_POLICIES = ("qsa", "csa")
_LAYOUTS = ("SEPARATE", "LATENT")


def exact_quotient(a, b):
    """``a / b`` when it divides exactly, else unknown (never an error)."""
    try:
        return div_dim(a, b)
    except ShapeError:
        return None


def int_attribute(ctx: InferenceContext, name: str, default: int = 0) -> int:
    """An int attribute (the schema default, else ``default``), or a node error naming it."""
    value = ctx.attribute(name, default)
    if type(value) is not int:
        ctx.fail(f"attribute '{name}' must be an int, got {value!r}")
    return value


def text_attribute(ctx: InferenceContext, name: str, default: str) -> str:
    """A string attribute decoded to text (the schema default, else ``default``)."""
    value = ctx.attribute(name, default)
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def query_of_rank(ctx: InferenceContext, rank: int):
    """The query's shape checked to have ``rank`` dims (None when unknown)."""
    query = ctx.input_shape("query")
    if query is not None and len(query) != rank:
        ctx.fail(f"query {format_shape(query)} must be {rank}-D")
    return query


def head_size(ctx: InferenceContext, query, packed: bool):
    """Head size from the query's last axis: num_heads heads, or num_heads + 2 * kv_num_heads packed."""
    heads = int_attribute(ctx, "num_heads")
    if packed:
        heads += 2 * int_attribute(ctx, "kv_num_heads")
    return exact_quotient(query[-1], heads) if query is not None and heads > 0 else None


def attention_output(ctx: InferenceContext, query):
    """The output: the query's shape, or num_heads heads of the packed query's head size."""
    if query is None or ctx.has_input("value"):
        return query
    return (*query[:-1], mul_dim(int_attribute(ctx, "num_heads"), head_size(ctx, query, True)))


def pass_caches(ctx: InferenceContext) -> None:
    """present_key and present_value take past_key's and past_value's shapes (one buffer updated in place)."""
    ctx.set_output_shape("present_key", ctx.input_shape("past_key") if ctx.has_input("past_key") else None)
    ctx.set_output_shape("present_value", ctx.input_shape("past_value") if ctx.has_input("past_value") else None)


@rule("sparse_attention", "output in the query's layout with num_heads heads; present key and value take "
      "the past caches' shapes (one buffer, max_cache_sequence_length long).")
def sparse_attention(ctx: InferenceContext) -> None:
    query = query_of_rank(ctx, 3)
    ctx.input_with_rank("past_key", 4)
    ctx.set_output_shape("output", attention_output(ctx, query))
    pass_caches(ctx)


@rule("dynamic_sparse_attention", "output in the query's layout with num_heads heads; present key and value "
      "take the past caches' shapes, else (batch, kv_num_heads, total_sequence_length, head_size).")
def dynamic_sparse_attention(ctx: InferenceContext) -> None:
    query = query_of_rank(ctx, 3)
    ctx.set_output_shape("output", attention_output(ctx, query))
    if ctx.has_input("past_key"):
        pass_caches(ctx)
        return
    batch, size = (query[0], head_size(ctx, query, not ctx.has_input("value"))) if query is not None else (None, None)
    length = one_value(ctx, "total_sequence_length")
    if not (type(length) is Sym or type(length) is int and length >= 0):
        length = None
    kv_heads = int_attribute(ctx, "kv_num_heads")
    present = (batch, kv_heads if kv_heads > 0 else None, length, size)
    ctx.set_output_shape("present_key", present)
    ctx.set_output_shape("present_value", present)


@rule("paged_attention", "output (tokens, num_heads * v_head_size) from the token-major query; the cache "
      "outputs take the block caches' shapes and types.")
def paged_attention(ctx: InferenceContext) -> None:
    layout = text_attribute(ctx, "kv_cache_layout", "SEPARATE")
    if layout not in _LAYOUTS:
        ctx.fail(f"kv_cache_layout must be SEPARATE or LATENT, got {layout!r}")
    query = query_of_rank(ctx, 2)
    if layout == "LATENT":
        ctx.set_output_shape("output", _latent_output(ctx, query))
    else:
        ctx.set_output_shape("output", _separate_output(ctx, query))
    if ctx.has_output("key_cache_out"):
        _check_cache_outputs(ctx, layout)
        ctx.input_with_rank("key_cache", 4)
        ctx.set_output_shape("key_cache_out", ctx.input_shape("key_cache"), ctx.input_elem("key_cache") or None)
        ctx.set_output_shape("value_cache_out", ctx.input_shape("value_cache"), ctx.input_elem("value_cache") or None)


def _separate_output(ctx: InferenceContext, query):
    """Output with separate key and value caches: the query's shape, or the packed query unpacked."""
    if query is None or ctx.has_input("value"):
        return query
    heads, kv_heads = int_attribute(ctx, "num_heads"), int_attribute(ctx, "kv_num_heads")
    hidden = query[1]
    if type(hidden) is int:
        if hidden <= 0 or heads <= 0 or kv_heads < 0:
            ctx.fail(f"packed query {format_shape(query)} needs a positive hidden size and head counts, "
                     f"got num_heads {heads}, kv_num_heads {kv_heads}")
        if hidden % (heads + 2 * kv_heads):
            ctx.fail(f"packed query {format_shape(query)}: hidden size {hidden} does not split into "
                     f"num_heads + 2 * kv_num_heads = {heads + 2 * kv_heads} heads")
    return (query[0], mul_dim(heads, head_size(ctx, query, True)))


def _latent_output(ctx: InferenceContext, query):
    """Output of absorbed latent attention: v_head_size channels per head (0: the query's width)."""
    heads = int_attribute(ctx, "num_heads")
    if heads <= 0:
        ctx.fail(f"num_heads must be positive, got {heads}")
    value_size = int_attribute(ctx, "v_head_size")
    if query is None or value_size == 0:
        return query
    hidden = query[1]
    if type(hidden) is not int or hidden <= 0:
        return (query[0], None)
    if hidden % heads:
        ctx.fail(f"query {format_shape(query)}: hidden size {hidden} does not split into {heads} heads")
    if value_size > hidden // heads:
        ctx.fail(f"v_head_size {value_size} exceeds the head size {hidden // heads}")
    return (query[0], heads * value_size)


def _check_cache_outputs(ctx: InferenceContext, layout: str) -> None:
    """The cache outputs the layout allows: key_cache_out alone for LATENT, both for SEPARATE."""
    if layout == "LATENT":
        if ctx.output_count > 2:
            ctx.fail("value_cache_out must be absent when kv_cache_layout is LATENT")
        return
    if ctx.output_count != 3:
        ctx.fail("key_cache_out and value_cache_out must be both present or both absent")
    if not ctx.has_input("value_cache"):
        ctx.fail("value_cache is required when value_cache_out is present")


def selection_capacity(ctx: InferenceContext) -> int:
    """How many candidates each query row holds: token_budget + compress_ratio - 1 ('qsa') or
    index_topk ('csa'), a node error when the attributes do not define it."""
    policy = text_attribute(ctx, "policy_mode", "")
    if policy not in _POLICIES:
        ctx.fail(f"policy_mode must be 'qsa' or 'csa', got {policy!r}")
    ratio = int_attribute(ctx, "compress_ratio")
    if ratio <= 0:
        ctx.fail(f"compress_ratio must be positive, got {ratio}")
    if policy == "csa":
        topk = ctx.attribute("index_topk")
        if type(topk) is not int or topk <= 0:
            ctx.fail(f"policy_mode 'csa' needs a positive index_topk, got {topk!r}")
        return topk
    budget = ctx.attribute("token_budget")
    if type(budget) is not int or budget <= 0 or budget % ratio:
        ctx.fail(f"policy_mode 'qsa' needs a positive token_budget divisible by compress_ratio {ratio}, "
                 f"got {budget!r}")
    return budget + ratio - 1


@rule("sparse_attention_indexer", "selected_indices (batch, seq, capacity) fixed by the attributes; for "
      "'qsa' present_key (batch, past + seq, head_size).")
def sparse_attention_indexer(ctx: InferenceContext) -> None:
    capacity = selection_capacity(ctx)
    qsa = text_attribute(ctx, "policy_mode", "") == "qsa"
    if qsa and ctx.output_count > 2:
        ctx.fail("policy_mode 'qsa' produces no present_proj_buffer: the node must declare 2 outputs")
    query = query_of_rank(ctx, 3)
    batch, steps = (query[0], query[1]) if query is not None else (None, None)
    ctx.set_output_shape("selected_indices", (batch, steps, capacity))
    if qsa:
        past = ctx.input_with_rank("past_key", 3)
        try:
            batch = merge_dim(batch, past[0])
        except ShapeError:
            ctx.fail(f"query {format_shape(query)} and past_key {format_shape(past)} differ in batch size")
        ctx.set_output_shape("present_key", (batch, add_dim(past[1], steps), None))


@rule("packed_sparse_attention_indexer", "selected_indices (tokens, capacity) and selected_counts (tokens); the "
      "fixed-size key state and pending buffer keep their shapes.")
def packed_sparse_attention_indexer(ctx: InferenceContext) -> None:
    capacity = selection_capacity(ctx)
    query = ctx.input_shape("query")
    tokens = query[0] if query else None
    ctx.set_output_shape("selected_indices", (tokens, capacity))
    ctx.set_output_shape("selected_counts", (tokens,))
    ctx.set_output_shape("present_key_state", ctx.input_shape("past_key_state"))
    ctx.set_output_shape("present_kv_buffer", ctx.input_shape("past_kv_buffer"))
