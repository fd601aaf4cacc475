"""Rules for onnxruntime's ops that prepare attention's operands: padding removal and restoration,
and relative position biases.

RemovePadding packs a right-padded (batch, seq, hidden) batch into (tokens, hidden) rows of real
tokens, a count only the data tells; RestorePadding scatters them back. The position-bias ops build
(batch or 1, heads, query length, key length) additive attention biases.
"""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext, rule
from opspec.runtime.rules._dims import one_value
from opspec.runtime.shape import add_dim, format_shape


def shape_of_rank(ctx: InferenceContext, name: str, rank: int, what: str):
    """Input ``name``'s shape, a node error when its known rank is not ``rank``."""
    shape = ctx.input_shape(name)
    if shape is not None and len(shape) != rank:
        ctx.fail(f"{ctx.input_name(name)} {format_shape(shape)} must be {rank}-D {what}")
    return shape


@rule("remove_padding", "output (tokens, hidden), token_offset (batch, seq), cumulated_seq_len (batch + 1) and "
      "max_seq_len (1) from a (batch, seq, hidden) input.")
def remove_padding(ctx: InferenceContext) -> None:
    batch, steps, hidden = ctx.input_with_rank("input", 3)
    ctx.set_output_shape("output", (None, hidden))
    ctx.set_output_shape("token_offset", (batch, steps))
    ctx.set_output_shape("cumulated_seq_len", (add_dim(batch, 1),))
    ctx.set_output_shape("max_seq_len", (1,))


@rule("restore_padding", "output (batch, seq, hidden) from (tokens, hidden) rows and a (batch, seq) token_offset.")
def restore_padding(ctx: InferenceContext) -> None:
    rows, offsets = ctx.input_shape("input"), ctx.input_shape("token_offset")
    if rows is not None and offsets is not None:  # onnxruntime checks the ranks of the pair only
        shape_of_rank(ctx, "input", 2, "(tokens, hidden)")
        shape_of_rank(ctx, "token_offset", 2, "(batch, seq)")
    hidden = rows[1] if rows is not None and len(rows) == 2 else None
    batch, steps = offsets if offsets is not None and len(offsets) == 2 else (None, None)
    ctx.set_output_shape("output", (batch, steps, hidden))


@rule("gated_relative_position_bias", "output (batch, num_heads, seq, seq), batch and seq from token_offset when "
      "given, else from a 3-D query_layer.")
def gated_relative_position_bias(ctx: InferenceContext) -> None:
    heads = ctx.attribute("num_heads")
    heads = heads if type(heads) is int and heads > 0 else None
    offsets = ctx.input_shape("token_offset") if ctx.has_input("token_offset") else None
    if offsets is not None:
        if len(offsets) < 2:
            ctx.fail(f"token_offset {format_shape(offsets)} must be (batch, seq)")
        ctx.set_output_shape("output", (offsets[0], heads, offsets[1], offsets[1]))
        return
    query = ctx.input_shape("query_layer")
    if ctx.has_input("token_offset") or query is None or len(query) != 3:
        ctx.set_output_shape("output", (None, heads, None, None))  # the layout is known to be 4-D
        return
    ctx.set_output_shape("output", (query[0], heads, query[1], query[1]))


def length_value(ctx: InferenceContext, name: str):
    """The sequence length a scalar input holds, when known."""
    value = one_value(ctx, name)
    return value if type(value) is int and value >= 0 else None


@rule("relative_position_bias", "output (1, num_heads, query_length, key_length), num_heads from the bias "
      "table's second axis and the lengths from the scalar inputs' values.")
def relative_position_bias(ctx: InferenceContext) -> None:
    table = ctx.input_with_rank_at_least("bias_table", 2)
    heads = table[1] if table is not None else None
    ctx.set_output_shape("output", (1, heads, length_value(ctx, "query_length"), length_value(ctx, "key_length")))

