"""Rules for onnxruntime's linear attention: the gated linear-attention recurrence (LinearAttention)
and its gate projections (LinearAttentionGate).
"""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext, rule
from opspec.runtime.rules.ort_sparse_attention import exact_quotient
from opspec.runtime.shape import format_shape, mul_dim

#: The largest state_window LinearAttention accepts.
MAX_STATE_WINDOW = 8


def head_attribute(ctx: InferenceContext, name: str) -> int:
    """A head-count attribute, 0 when the node does not give a usable one."""
    value = ctx.attribute(name)
    return value if type(value) is int else 0


@rule("windowed_linear_attention", "output (B, T, max(q_heads, kv_heads) * d_v) from packed query and value; "
      "present_state (B, kv_heads, d_k, d_v), led by a state_window axis when it is set.")
def windowed_linear_attention(ctx: InferenceContext) -> None:
    window = ctx.attribute("state_window", 0)
    if type(window) is not int or not 0 <= window <= MAX_STATE_WINDOW:
        ctx.fail(f"state_window must be in [0, {MAX_STATE_WINDOW}], got {window!r}")
    q_heads, kv_heads = head_attribute(ctx, "q_num_heads"), head_attribute(ctx, "kv_num_heads")
    query, value = ctx.input_shape("query"), ctx.input_shape("value")
    past = ctx.input_index("past_state")
    elem = None if past is not None else ctx.input_elem("query") or None
    heads_known = q_heads > 0 and kv_heads > 0
    if heads_known and query is not None and value is not None:  # as onnxruntime checks them
        for name, shape in (("query", query), ("value", value)):
            if len(shape) < 3:
                ctx.fail(f"{name} {format_shape(shape)} must be (B, T, heads * head_size)")
    else:
        ctx.set_output_shape("output", (query[0], query[1], None) if query is not None and len(query) >= 3 else None)
        ctx.set_output_shape("present_state", ctx.input_shape(past) if past is not None else None, elem)
        return
    assert query is not None and value is not None
    value_size = exact_quotient(value[2], kv_heads)
    ctx.set_output_shape("output", (query[0], query[1], mul_dim(max(q_heads, kv_heads), value_size)))
    state = (query[0], kv_heads, exact_quotient(query[2], q_heads), value_size)
    ctx.set_output_shape("present_state", (window, *state) if window else state, elem)


@rule("linear_attention_gate", "decay takes a's shape; beta, when asked for, takes b's (b is then required).")
def linear_attention_gate(ctx: InferenceContext) -> None:
    gate = ctx.input_shape("a")
    ctx.set_output_shape("decay", gate)
    if ctx.has_output("beta"):
        if not ctx.has_input("b"):
            ctx.fail("input b is required when the beta output is asked for")
        rate = ctx.input_shape("b")
        ctx.set_output_shape("beta", rate if rate is not None else gate)
