"""Rules for attention: Attention, FlexAttention, LinearAttention, CausalConvWithState, RotaryEmbedding.

Attention tensors come in two layouts: 4-D ``(batch, heads, length, head size)``, or 3-D
``(batch, length, heads * head size)`` with the head count in an attribute. ``_Heads`` reads
either layout into the same four dims, so that each rule states its result once.
"""
from __future__ import annotations

from typing import NamedTuple

from opspec.runtime.contract import InferenceContext, attribute, rule
from opspec.runtime.shape import ShapeError, add_dim, div_dim, format_dim, format_shape, merge_dim, mul_dim


class _Heads(NamedTuple):
    """One attention operand read into ``(batch, heads, length, head size)``; ``packed`` when 3-D."""

    batch: object
    heads: object
    length: object
    size: object
    packed: bool


def _read(ctx: InferenceContext, index: int, heads_key: str | None, ranks: tuple = (3, 4)) -> _Heads | None:
    """Input ``index`` in either layout (None when its shape is unknown); a 3-D operand needs
    attribute ``heads_key`` for its head count."""
    shape = ctx.input_shape(index)
    if shape is None:
        return None
    name = ctx.input_name(index)
    if len(shape) not in ranks:
        ctx.fail(f"{name} {format_shape(shape)} must have rank {' or '.join(map(str, ranks))}")
    if len(shape) == 4:
        return _Heads(shape[0], shape[1], shape[2], shape[3], False)
    heads = ctx.int_attr(heads_key, None) if heads_key else None
    if heads is None:
        ctx.fail(f"{name} {format_shape(shape)} is 3-D, which needs the '{heads_key}' attribute")
    if heads < 1:
        ctx.fail(f"{heads_key} {heads} must be positive")
    try:
        size = div_dim(shape[2], heads)
    except ShapeError:
        ctx.fail(f"{name}'s last dim {format_dim(shape[2])} does not divide into {heads} heads")
    return _Heads(shape[0], heads, shape[1], size, True)


def _merge(ctx: InferenceContext, what: str, *dims):
    """One dim that several operands must share."""
    found = None
    for dim in dims:
        try:
            found = merge_dim(found, dim)
        except ShapeError:
            ctx.fail(f"the operands disagree on the {what}: {', '.join(format_dim(d) for d in dims)}")
    return found


def _grouped(ctx: InferenceContext, q_heads, kv_heads) -> None:
    """Query heads are shared out in equal groups over the key/value heads."""
    if type(q_heads) is int and type(kv_heads) is int and kv_heads and q_heads % kv_heads:
        ctx.fail(f"{q_heads} query heads do not divide into groups over {kv_heads} key/value heads")


def _out(heads: _Heads, batch, count, length, size) -> tuple:
    """A result laid out as the operand ``heads`` is: 3-D packs the heads into the last dim."""
    if heads.packed:
        return (batch, length, mul_dim(count, size))
    return (batch, count, length, size)


@rule("attention", "Y in Q's layout with V's head size; the present cache and scores span past + new keys.",
      q_num_heads=attribute(), kv_num_heads=attribute())
def attention(ctx: InferenceContext) -> None:
    q = _read(ctx, 0, "q_num_heads")
    k = _read(ctx, 1, "kv_num_heads")
    v = _read(ctx, 2, "kv_num_heads")
    past_key = _read(ctx, 4, None, (4,)) if ctx.has_input(4) else None
    past_value = _read(ctx, 5, None, (4,)) if ctx.has_input(5) else None
    if ctx.has_input(4) != ctx.has_input(5):
        ctx.fail("past_key and past_value come together")
    q_dims = q or _Heads(None, None, None, None, False)
    kv = [x for x in (k, v, past_key, past_value) if x is not None]
    batch = _merge(ctx, "batch size", q_dims.batch, *(x.batch for x in kv))
    kv_heads = _merge(ctx, "key/value head count", *(x.heads for x in kv))
    _grouped(ctx, q_dims.heads, kv_heads)
    _merge(ctx, "head size of queries and keys", q_dims.size, *(x.size for x in (k, past_key) if x is not None))
    key_size = _merge(ctx, "key head size", *(x.size for x in (k, past_key) if x is not None))
    value_size = _merge(ctx, "value head size", *(x.size for x in (v, past_value) if x is not None))
    new_length = _merge(ctx, "key/value length", *(x.length for x in (k, v) if x is not None))
    if ctx.has_input(4):
        past = _merge(ctx, "past length", *(x.length for x in (past_key, past_value) if x is not None))
        total = add_dim(past, new_length)
    else:
        total = new_length
    if q is not None:
        ctx.set_output_shape(0, _out(q, batch, q.heads, q.length, value_size))
    ctx.set_output_shape(1, (batch, kv_heads, total, key_size))
    ctx.set_output_shape(2, (batch, kv_heads, total, value_size))
    ctx.set_output_shape(3, (batch, q_dims.heads, q_dims.length, total))


@rule("flex_attention", "(batch, query heads, query length, V's head size), all operands 4-D.")
def flex_attention(ctx: InferenceContext) -> None:
    q, k, v = (_read(ctx, index, None, (4,)) for index in range(3))
    q_dims = q or _Heads(None, None, None, None, False)
    kv = [x for x in (k, v) if x is not None]
    batch = _merge(ctx, "batch size", q_dims.batch, *(x.batch for x in kv))
    _grouped(ctx, q_dims.heads, _merge(ctx, "key/value head count", *(x.heads for x in kv)))
    _merge(ctx, "head size of queries and keys", q_dims.size, k.size if k else None)
    _merge(ctx, "key/value length", *(x.length for x in kv))
    ctx.set_output_shape(0, (batch, q_dims.heads, q_dims.length, v.size if v else None))


@rule("linear_attention", "output (batch, length, query heads * value size); the state (batch, key/value heads, "
      "key size, value size).", q_num_heads=attribute(), kv_num_heads=attribute())
def linear_attention(ctx: InferenceContext) -> None:
    q = _read(ctx, 0, "q_num_heads", (3,))
    k = _read(ctx, 1, "kv_num_heads", (3,))
    v = _read(ctx, 2, "kv_num_heads", (3,))
    q_heads, kv_heads = ctx.int_attr("q_num_heads", None), ctx.int_attr("kv_num_heads", None)
    _grouped(ctx, q_heads, kv_heads)
    state = ctx.input_with_rank(3, 4) if ctx.has_input(3) else (None,) * 4
    operands = [x for x in (q, k, v) if x is not None]
    batch = _merge(ctx, "batch size", state[0], *(x.batch for x in operands))
    length = _merge(ctx, "length", *(x.length for x in operands))
    _merge(ctx, "key/value head count", kv_heads, state[1])
    key_size = _merge(ctx, "key size", state[2], *(x.size for x in (q, k) if x is not None))
    value_size = _merge(ctx, "value size", state[3], v.size if v else None)
    ctx.set_output_shape(0, (batch, length, mul_dim(q_heads, value_size)))
    state_elem = ctx.input_elem(3) if ctx.has_input(3) else ctx.input_elem(0)  # a new state takes the query's
    ctx.set_output_shape(1, (batch, kv_heads, key_size, value_size), state_elem or ctx.output_elem(1))


@rule("causal_conv_with_state", "output like the input (batch, channels, length); the state keeps the last "
      "kernel size - 1 positions.")
def causal_conv_with_state(ctx: InferenceContext) -> None:
    x = ctx.input_with_rank(0, 3)
    weight = ctx.input_with_rank(1, 3)
    if weight[1] is not None and weight[1] != 1:
        ctx.fail(f"weight {format_shape(weight)} must have 1 in dim 1 (one kernel per channel)")
    channels = _merge(ctx, "channel count", x[1], weight[0])
    if ctx.has_input(2):
        bias = ctx.input_with_rank(2, 1)
        channels = _merge(ctx, "channel count", channels, bias[0])
    kernel = weight[2]
    if type(kernel) is int and kernel < 1:
        ctx.fail(f"weight {format_shape(weight)} has an empty kernel")
    kept = None if kernel is None else add_dim(kernel, -1)
    batch = x[0]
    if ctx.has_input(3):
        state = ctx.input_with_rank(3, 3)
        batch = _merge(ctx, "batch size", batch, state[0])
        channels = _merge(ctx, "channel count", channels, state[1])
        kept = _merge(ctx, "state length", kept, state[2])
    ctx.set_output_shape(0, (batch, channels, x[2]))
    ctx.set_output_shape(1, (batch, channels, kept))


@rule("rotary_embedding", "Y takes X's shape: (batch, heads, length, head size), or 3-D with num_heads packed.",
      num_heads=attribute(), rotary_embedding_dim=attribute())
def rotary_embedding(ctx: InferenceContext) -> None:
    x = _read(ctx, 0, "num_heads")  # checks the rank, and that a 3-D X splits into num_heads heads
    if x is not None and type(x.size) is int:
        rotated = ctx.int_attr("rotary_embedding_dim", 0) or x.size  # features rotate in pairs
        if rotated > x.size or rotated % 2:
            ctx.fail(f"{rotated} rotated features of {format_shape(ctx.input_shape(0))} must be an even count "
                     f"within the head size {x.size}")
    ctx.set_output_shape(0, ctx.input_shape(0))
