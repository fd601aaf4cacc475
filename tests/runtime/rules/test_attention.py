"""Tests for the attention rules: Attention, FlexAttention, LinearAttention, CausalConvWithState and
RotaryEmbedding."""
from __future__ import annotations

import pytest

from opspec.runtime.contract import InferenceError
from opspec.runtime.shape import ShapeError, Sym
from opspec.runtime.testing import FLOAT, INT64, run_rule, t

B, S, P, H, K = Sym("B"), Sym("S"), Sym("P"), Sym("H"), Sym("K")
F16 = 10
HEADS = {"q_num_heads": 4, "kv_num_heads": 2}


def attention(version, inputs, attributes=None, outputs=4, names=None):
    ctx = run_rule("Attention", version, inputs, attributes, output_count=outputs, names=names)
    return [ctx.output_type(i) for i in range(ctx.output_count)]


@pytest.mark.parametrize("version", [23, 24, 25])
def test_attention_split_heads_with_a_cache(version):
    q, k, v = t(B, 4, S, 8), t(B, 2, S, 8), t(B, 2, S, 16)
    y, key, value, qk = attention(version, [q, k, v, None, t(B, 2, P, 8), t(B, 2, P, 16)])
    assert y == t(B, 4, S, 16)
    assert key == t(B, 2, P + S, 8) and value == t(B, 2, P + S, 16)
    assert qk == t(B, 4, S, P + S)


def test_attention_packed_heads():
    q, k, v = t(B, S, 32), t(B, 7, 16), t(B, 7, 24)
    y, key, value, qk = attention(23, [q, k, v, None, t(B, 2, 3, 8), t(B, 2, 3, 12)], HEADS)
    assert y == t(B, S, 48)  # 4 query heads of V's head size 24 / 2
    assert key == t(B, 2, 10, 8) and value == t(B, 2, 10, 12)
    assert qk == t(B, 4, S, 10)


def test_attention_without_a_cache_presents_key_and_value_split():
    y, key, value, qk = attention(23, [t(2, 3, 16), t(2, 5, 8), t(2, 5, 8)], HEADS)
    assert (y, key, value, qk) == (t(2, 3, 16), t(2, 2, 5, 4), t(2, 2, 5, 4), t(2, 4, 3, 5))
    assert attention(23, [t(2, 3, 16), t(2, 5, 8), t(2, 5, 8)], HEADS, outputs=1) == [t(2, 3, 16)]


def test_attention_symbolic_hidden_sizes_split_exactly():
    y, key, _, _ = attention(23, [t(B, S, 4 * H), t(B, S, 2 * H), t(B, S, 2 * H)], HEADS)
    assert y == t(B, S, 4 * H) and key == t(B, 2, S, H)


def test_attention_unknown_inputs_give_unknown_dims():
    y, key, value, qk = attention(23, [None, t(B, 2, S, 8), None], names=["q", "k", "v"])
    assert y == t(None, elem=FLOAT)
    assert key == t(B, 2, S, 8) and value == t(B, 2, S, None, elem=0)  # V gives its type
    assert qk == t(B, None, None, S)
    # a cache that is present but unknown makes the total length unknown, never the K length alone
    _, key, _, qk = attention(24, [t(1, 4, 3, 8), t(1, 2, 3, 8), t(1, 2, 3, 8), None, None, None],
                              names=["q", "k", "v", "", "pk", "pv"])
    assert key == t(1, 2, None, 8) and qk == t(1, 4, 3, None)


@pytest.mark.parametrize("inputs, attributes, message", [
    ([t(2, 3), t(2, 3, 4), t(2, 3, 4)], {}, "3-D .* or 4-D"),
    ([t(2, 3, 16), t(2, 5, 8), t(2, 5, 8)], {"kv_num_heads": 2}, "q_num_heads is required"),
    ([t(2, 3, 16), t(2, 5, 8), t(2, 5, 8)], {"q_num_heads": 4, "kv_num_heads": 0}, "must be a positive integer"),
    ([t(2, 3, 15), t(2, 5, 8), t(2, 5, 8)], HEADS, "does not split into 4 heads"),
    ([t(2, 3, 16), t(2, 5, 8), t(2, 6, 8)], HEADS, "sequence lengths of K and V"),
    ([t(2, 3, 3, 8), t(2, 2, 5, 8), t(2, 2, 5, 8)], {}, "do not split evenly"),
    ([t(2, 4, 3, 8), t(2, 2, 5, 6), t(2, 2, 5, 8)], {}, "head sizes of Q and K"),
    ([t(2, 4, 3, 8), t(2, 2, 5, 8), t(2, 2, 5, 8), None, t(2, 2, 4, 8)], {}, "given together"),
    ([t(2, 4, 3, 8), t(2, 2, 5, 8), t(2, 2, 5, 8), None, t(2, 2, 4), t(2, 2, 4, 8)], {}, "past_key"),
])
def test_attention_refuses_invalid_nodes(inputs, attributes, message):
    with pytest.raises(InferenceError, match=message):
        attention(24, inputs, attributes)


@pytest.mark.parametrize("attributes, outputs, message", [
    ({"left_window_size": -2}, 1, "left_window_size"),
    ({"q_num_heads": 4}, 1, "3-D"),
    ({}, 2, "together"),
])
def test_attention_25_refuses_what_it_newly_forbids(attributes, outputs, message):
    inputs = [t(2, 4, 3, 8), t(2, 2, 5, 8), t(2, 2, 5, 8)]
    attention(24, inputs, {"left_window_size": -2} if "left" in message else {}, outputs=outputs)
    with pytest.raises(InferenceError, match=message):
        attention(25, inputs, attributes, outputs=outputs)
    cached = [*inputs, None, t(2, 2, 1, 8), t(2, 2, 1, 8), t(2, elem=INT64)]
    with pytest.raises(InferenceError, match="nonpad_kv_seqlen"):
        attention(25, cached, outputs=1)


def test_flex_attention():
    ctx = run_rule("FlexAttention", 1, [t(B, 4, S, 8), t(B, 2, P, 8), t(B, 2, P, 16)], domain="ai.onnx.preview")
    assert ctx.output_type(0) == t(B, 4, S, 16)
    with pytest.raises(InferenceError, match="rank"):
        run_rule("FlexAttention", 1, [t(B, S, 8), t(B, 2, P, 8), t(B, 2, P, 16)], domain="ai.onnx.preview")
    with pytest.raises(InferenceError, match="sequence lengths"):
        run_rule("FlexAttention", 1, [t(1, 4, 3, 8), t(1, 2, 5, 8), t(1, 2, 6, 8)], domain="ai.onnx.preview")


def linear(inputs, attributes=None, names=None):
    ctx = run_rule("LinearAttention", 27, inputs, {**HEADS, **(attributes or {})}, output_count=2, names=names)
    return ctx.output_type(0), ctx.output_type(1)


def test_linear_attention():
    out, state = linear([t(B, S, 32), t(B, S, 16), t(B, S, 12)])
    assert out == t(B, S, 24) and state == t(B, 2, 8, 6)
    out, state = linear([t(B, S, 32), t(B, S, 16), t(B, S, 12), t(B, 2, 8, 6, elem=F16)])
    assert state == t(B, 2, 8, 6, elem=F16)
    out, state = linear([None, t(B, S, 16), t(B, S, 12)], names=["q", "k", "v"])
    assert out == t(B, S, 24) and state == t(B, 2, 8, 6, elem=0)


@pytest.mark.parametrize("inputs, attributes, message", [
    ([t(1, 2, 32), t(1, 2, 16), t(1, 2, 12)], {"update_rule": "fast"}, "update_rule"),
    ([t(1, 2, 32), t(1, 2, 16), t(1, 2, 12)], {"kv_num_heads": 3}, "split evenly"),
    ([t(1, 2, 32), t(1, 2, 12), t(1, 2, 12)], {}, "key head sizes"),
    ([t(1, 2, 32), t(1, 2, 16), t(1, 2, 12), t(1, 2, 8, 5)], {}, "past_state"),
    ([t(1, 2, 32, 1), t(1, 2, 16), t(1, 2, 12)], {}, "rank"),
])
def test_linear_attention_refuses_invalid_nodes(inputs, attributes, message):
    with pytest.raises(InferenceError, match=message):
        linear(inputs, attributes)


def causal_conv(inputs, attributes=None, names=None):
    ctx = run_rule("CausalConvWithState", 27, inputs, attributes, output_count=2, names=names)
    return ctx.output_type(0), ctx.output_type(1)


def test_causal_conv_with_state():
    assert causal_conv([t(B, 6, S), t(6, 1, 4)]) == (t(B, 6, S), t(B, 6, 3))
    assert causal_conv([t(B, 6, S), t(6, 1, K)]) == (t(B, 6, S), t(B, 6, K - 1))
    assert causal_conv([t(B, None, S), None, t(6), t(B, 6, 3)], names=["x", "w", "b", "p"]) == \
        (t(B, 6, S), t(B, 6, 3))
    assert causal_conv([t(B, 6, S), None], names=["x", "w"]) == (t(B, 6, S), t(B, 6, None))


@pytest.mark.parametrize("inputs, attributes, message", [
    ([t(1, 6, 5), t(6, 1, 4)], {"activation": "relu"}, "activation"),
    ([t(1, 6, 5), t(6, 2, 4)], {}, "depthwise"),
    ([t(1, 6, 5), t(6, 1, 0)], {}, "at least 1"),
    ([t(1, 6, 5), t(6, 1, 4), t(5)], {}, "channel counts"),
    ([t(1, 6, 5), t(6, 1, 4), t(6), t(1, 6, 2)], {}, "kernel size minus one"),
])
def test_causal_conv_refuses_invalid_nodes(inputs, attributes, message):
    with pytest.raises(InferenceError, match=message):
        causal_conv(inputs, attributes)


def test_rotary_embedding_keeps_the_input_shape():
    cache = t(S, 4)
    ids = t(B, S, elem=INT64)
    assert run_rule("RotaryEmbedding", 23, [t(B, S, 64), cache, cache, ids], {"num_heads": 8}).output_type(0) == \
        t(B, S, 64)
    assert run_rule("RotaryEmbedding", 23, [t(B, 8, S, 8), cache, cache, ids]).output_type(0) == t(B, 8, S, 8)
    with pytest.raises(InferenceError, match="3-D"):
        run_rule("RotaryEmbedding", 23, [t(S, 64), cache, cache, ids], {"num_heads": 8})
    with pytest.raises(InferenceError, match="num_heads"):
        run_rule("RotaryEmbedding", 23, [t(B, S, 64), cache, cache, ids])


def test_rms_normalization_keeps_the_input_shape():
    assert run_rule("RMSNormalization", 23, [t(B, S, 64), t(64)]).output_type(0) == t(B, S, 64, elem=FLOAT)
    assert run_rule("RMSNormalization", 23, [t(B, S, 64), t(S, 64)], {"axis": 1}).output_type(0) == t(B, S, 64)
    with pytest.raises(InferenceError, match="out of range"):
        run_rule("RMSNormalization", 23, [t(B, S, 64), t(64)], {"axis": 3})
    with pytest.raises(ShapeError, match="broadcast"):
        run_rule("RMSNormalization", 23, [t(B, S, 64), t(32)])


def test_decoder_step_with_rotary_embedding_and_a_cache_every_value():
    """A decoder step as exporters write it: symbolic batch, sequence and cache length carried exactly."""
    from onnx import TensorProto, helper

    import opspec

    f, i64 = TensorProto.FLOAT, TensorProto.INT64
    nodes = [
        helper.make_node("RotaryEmbedding", ["q", "positions", "cos", "sin"], ["q_rot"], num_heads=4),
        helper.make_node("RotaryEmbedding", ["k", "positions", "cos", "sin"], ["k_rot"], num_heads=2),
        helper.make_node("Attention", ["q_rot", "k_rot", "v", "", "past_key", "past_value"],
                         ["y", "present_key", "present_value", "scores"], q_num_heads=4, kv_num_heads=2,
                         is_causal=1),
        helper.make_node("RMSNormalization", ["y", "gamma"], ["out"]),
    ]
    graph = helper.make_graph(nodes, "decoder_step", [
        helper.make_tensor_value_info("q", f, ["B", "S", 64]),
        helper.make_tensor_value_info("k", f, ["B", "S", 32]),
        helper.make_tensor_value_info("v", f, ["B", "S", 32]),
        helper.make_tensor_value_info("positions", i64, ["B", "S"]),
        helper.make_tensor_value_info("cos", f, ["M", 8]),
        helper.make_tensor_value_info("sin", f, ["M", 8]),
        helper.make_tensor_value_info("past_key", f, ["B", 2, "P", 16]),
        helper.make_tensor_value_info("past_value", f, ["B", 2, "P", 16]),
        helper.make_tensor_value_info("gamma", f, [64]),
    ], [helper.make_tensor_value_info(name, f, None)
        for name in ("out", "present_key", "present_value", "scores")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    inferred = opspec.infer_shapes(model)
    found = {value.name: [d.dim_value if d.HasField("dim_value") else d.dim_param
                          for d in value.type.tensor_type.shape.dim]
             for value in [*inferred.graph.value_info, *inferred.graph.output]}
    assert found == {
        "q_rot": ["B", "S", 64], "k_rot": ["B", "S", 32], "y": ["B", "S", 64], "out": ["B", "S", 64],
        "present_key": ["B", 2, "P+S", 16], "present_value": ["B", 2, "P+S", 16],
        "scores": ["B", 4, "S", "P+S"],
    }
