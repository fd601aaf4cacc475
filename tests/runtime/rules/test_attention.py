"""Tests for the attention rules: Attention, FlexAttention, LinearAttention, CausalConvWithState."""
from __future__ import annotations

import pytest
from ruletest import run, t

from opspec.runtime.contract import InferenceError
from opspec.runtime.shape import Sym

B, S, P = Sym("B"), Sym("S"), Sym("P")
F16 = 10


def _outputs(ctx):
    return [ctx.output_type(i) for i in range(ctx.output_count)]


def test_attention_4d_with_a_cache_sums_past_and_new_lengths():
    q, k, v = t(B, 8, S, 64), t(B, 2, S, 64), t(B, 2, S, 32)
    past_k, past_v = t(B, 2, P, 64), t(B, 2, P, 32)
    ctx = run("Attention", 23, [q, k, v, None, past_k, past_v], output_count=4,
              names=["q", "k", "v", "", "pk", "pv"])
    assert _outputs(ctx) == [t(B, 8, S, 32), t(B, 2, P + S, 64), t(B, 2, P + S, 32), t(B, 8, S, P + S)]


def test_attention_3d_packs_heads_and_takes_the_value_head_size():
    q, k, v = t(B, S, 8 * 16), t(B, 10, 2 * 16), t(B, 10, 2 * 24)
    ctx = run("Attention", 24, [q, k, v], {"q_num_heads": 8, "kv_num_heads": 2}, output_count=4)
    assert _outputs(ctx) == [t(B, S, 8 * 24), t(B, 2, 10, 16), t(B, 2, 10, 24), t(B, 8, S, 10)]


def test_attention_keeps_value_types_apart():
    ctx = run("Attention", 23, [t(1, 2, 3, 4), t(1, 2, 5, 4), t(1, 2, 5, 6, elem=F16)], output_count=3)
    assert ctx.output_type(0) == t(1, 2, 3, 6) and ctx.output_type(2) == t(1, 2, 5, 6, elem=F16)


def test_attention_with_unknown_inputs_knows_only_what_the_known_ones_say():
    ctx = run("Attention", 23, [t(B, 8, S, 64), None, None, None, None, None], output_count=4,
              names=["q", "k", "v", "", "pk", "pv"])
    assert _outputs(ctx) == [t(B, 8, S, None), t(B, None, None, None), t(B, None, None, None, elem=0),
                             t(B, 8, S, None)]  # V's element type is V's own
    # a cache that is present but unknown leaves the total length unknown, never the new length alone
    ctx = run("Attention", 23, [t(B, 8, S, 64), t(B, 2, S, 64), t(B, 2, S, 64), None, None, None],
              output_count=4, names=["q", "k", "v", "", "pk", "pv"])
    assert ctx.output_type(1) == t(B, 2, None, 64) and ctx.output_type(3) == t(B, 8, S, None)


@pytest.mark.parametrize("inputs, attributes, message", [
    ([t(2, 3, 24), t(2, 5, 24), t(2, 5, 24)], {"kv_num_heads": 3}, "needs the 'q_num_heads' attribute"),
    ([t(2, 3, 24), t(2, 5, 24), t(2, 5, 24)], {"q_num_heads": 5, "kv_num_heads": 3}, "does not divide into 5"),
    ([t(2, 6, 3, 4), t(2, 4, 5, 4), t(2, 4, 5, 4)], {}, "do not divide into groups"),
    ([t(2, 2, 3, 4), t(2, 2, 5, 8), t(2, 2, 5, 4)], {}, "head size of queries and keys"),
    ([t(2, 2, 3), t(2, 2, 5, 8), t(2, 2, 5, 4)], {"q_num_heads": 2}, "does not divide"),
    ([t(2, 3), t(2, 2, 5, 8), t(2, 2, 5, 4)], {}, "must have rank 3 or 4"),
])
def test_attention_errors(inputs, attributes, message):
    with pytest.raises(InferenceError, match=message):
        run("Attention", 23, inputs, attributes)


def test_attention_past_key_and_value_come_together():
    with pytest.raises(InferenceError, match="come together"):
        run("Attention", 23, [t(1, 2, 3, 4), t(1, 2, 5, 4), t(1, 2, 5, 4), None, t(1, 2, 7, 4)],
            names=["q", "k", "v", "", "pk"])


def test_flex_attention_takes_the_value_head_size():
    ctx = run("FlexAttention", 1, [t(B, 8, S, 64), t(B, 2, 10, 64), t(B, 2, 10, 32)], domain="ai.onnx.preview")
    assert ctx.output_type(0) == t(B, 8, S, 32)


def test_linear_attention_output_and_state():
    q, k, v = t(B, S, 4 * 8), t(B, S, 2 * 8), t(B, S, 2 * 16)
    ctx = run("LinearAttention", 27, [q, k, v], {"q_num_heads": 4, "kv_num_heads": 2}, output_count=2)
    assert _outputs(ctx) == [t(B, S, 4 * 16), t(B, 2, 8, 16)]
    state = t(B, 2, 8, 16, elem=F16)
    ctx = run("LinearAttention", 27, [q, k, v, state], {"q_num_heads": 4, "kv_num_heads": 2}, output_count=2)
    assert ctx.output_type(1) == state  # the state keeps its own element type


def test_linear_attention_state_must_agree():
    with pytest.raises(InferenceError, match="value size"):
        run("LinearAttention", 27, [t(1, 3, 8), t(1, 3, 8), t(1, 3, 8), t(1, 2, 4, 5)],
            {"q_num_heads": 2, "kv_num_heads": 2})


def test_causal_conv_with_state_keeps_kernel_minus_one_positions():
    ctx = run("CausalConvWithState", 27, [t(B, 4, S), t(4, 1, 3)], output_count=2)
    assert _outputs(ctx) == [t(B, 4, S), t(B, 4, 2)]
    with pytest.raises(InferenceError, match="state length"):
        run("CausalConvWithState", 27, [t(B, 4, S), t(4, 1, 3), None, t(B, 4, 5)], output_count=2,
            names=["x", "w", "", "s"])
    with pytest.raises(InferenceError, match="one kernel per channel"):
        run("CausalConvWithState", 27, [t(B, 4, S), t(4, 2, 3)], output_count=2)


def test_rotary_embedding_keeps_the_shape_and_checks_the_heads():
    assert run("RotaryEmbedding", 23, [t(B, 4, S, 16), t(S, 8), t(S, 8)]).output_type(0) == t(B, 4, S, 16)
    assert run("RotaryEmbedding", 23, [t(B, S, 64), t(S, 8), t(S, 8)], {"num_heads": 4}).output_type(0) == t(B, S, 64)
    with pytest.raises(InferenceError, match="needs the 'num_heads' attribute"):
        run("RotaryEmbedding", 23, [t(B, S, 64), t(S, 8), t(S, 8)])
    with pytest.raises(InferenceError, match="does not divide into 5 heads"):
        run("RotaryEmbedding", 23, [t(B, S, 64), t(S, 8), t(S, 8)], {"num_heads": 5})
    with pytest.raises(InferenceError, match="even count within the head size 16"):
        run("RotaryEmbedding", 23, [t(B, 4, S, 16), t(S, 8), t(S, 8)], {"rotary_embedding_dim": 20})
