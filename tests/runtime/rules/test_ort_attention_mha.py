"""MultiHeadAttention and DecoderMaskedMultiHeadAttention (com.microsoft) against onnxruntime's CPU provider;
PackedMultiHeadAttention and DecoderAttention, which have no CPU kernel, against their inference functions."""
from __future__ import annotations

import pytest
from ort_oracle import F, I32, Case, Const, In, check

from opspec.runtime.contract import InferenceError
from opspec.runtime.shape import Sym
from opspec.runtime.testing import INT32, run_rule, t, vec

MS = "com.microsoft"
B, S, L, P, M = Sym("B"), Sym("S"), Sym("L"), Sym("P"), Sym("M")
SETTINGS = [{"B": 2, "S": 3, "L": 5, "P": 4, "M": 16}, {"B": 1, "S": 1, "L": 2, "P": 7, "M": 9}]
HEADS = {"num_heads": 2}


def mha(inputs, outputs=3, op="MultiHeadAttention", attributes=None) -> Case:
    """A one-node case; a qk output (index 3) is declared float, which onnxruntime needs to load it."""
    qk_typed = (None, None, None, F) if outputs > 3 else None
    return Case(op, MS, inputs, {**HEADS, **(attributes or {})}, outputs=outputs, output_types=qk_typed)


QUERY, KEY, VALUE = In(F, ("B", "S", 16)), In(F, ("B", "L", 16)), In(F, ("B", "L", 12))
PAST = [In(F, ("B", 2, "P", 8)), In(F, ("B", 2, "P", 8))]


@pytest.mark.parametrize("value, head", [(VALUE, None), (In(F, ("B", "L", 16)), 8)])
def test_separate_key_and_value_without_a_cache(value, head):
    verdict = check(mha([QUERY, KEY, value]), SETTINGS)
    assert verdict.problems == []
    # the CPU kernel gives present_value V's head size, others K's: known only when they agree
    hidden = value.shape[2]
    assert [shape for _, shape in verdict.inferred] == [(B, S, hidden), (B, 2, L, 8), (B, 2, L, head)]


def test_a_cache_grows_by_the_key_length_and_qk_spans_it():
    value = In(F, ("B", "L", 16))
    case = mha([QUERY, KEY, value, In(F, (48,)), None, None, *PAST], outputs=4)
    verdict = check(case, SETTINGS)
    assert verdict.problems == [] and verdict.exact
    assert verdict.inferred[1][1] == (B, 2, P + L, 8) and verdict.inferred[3][1] == (B, 2, S, P + L)


@pytest.mark.parametrize("past", [[], PAST])
def test_keys_and_values_split_per_head(past):
    key = In(F, ("B", 2, "L", 8))
    inputs = [QUERY, key, key] + ([None, None, None, *past] if past else [])
    verdict = check(mha(inputs), SETTINGS)
    assert verdict.problems == [] and verdict.exact
    assert verdict.inferred[1][1] == ((B, 2, P + L, 8) if past else (B, 2, L, 8))


def test_shared_buffers_keep_their_shape_and_qk_spans_the_filled_part():
    query = In(F, ("B", "S", 16))
    key = In(F, ("B", "S", 16))
    buffers = [In(F, ("B", 2, "M", 8)), In(F, ("B", 2, "M", 8))]
    case = mha([query, key, key, None, None, None, *buffers, Const(4, I32)], outputs=4)
    verdict = check(case, [{"B": 2, "S": 1, "M": 16}, {"B": 1, "S": 3, "M": 9}])
    assert verdict.problems == [] and verdict.exact
    assert verdict.inferred[1][1] == (B, 2, M, 8) and verdict.inferred[3][1] == (B, 2, S, S + 4)


def test_decoder_masked_attention_with_shared_buffers():
    one = In(F, ("B", 1, 16))
    buffers = [In(F, ("B", 2, "M", 8)), In(F, ("B", 2, "M", 8))]
    case = mha([one, one, one, None, None, *buffers, Const([4], I32)], outputs=4,
               op="DecoderMaskedMultiHeadAttention", attributes={"past_present_share_buffer": 1, "output_qk": 1})
    verdict = check(case, [{"B": 2, "M": 16}, {"B": 3, "M": 9}])
    assert verdict.problems == [] and verdict.exact
    assert verdict.inferred[1][1] == (B, 2, M, 8) and verdict.inferred[3][1] == (B, 2, 1, 5)


def test_decoder_masked_cross_attention():
    key = In(F, ("B", 2, "L", 8))
    verdict = check(mha([In(F, ("B", 1, 16)), key, key], outputs=1, op="DecoderMaskedMultiHeadAttention"), SETTINGS)
    assert verdict.problems == [] and verdict.exact
    assert verdict.inferred[0][1] == (B, 1, 16)


def mha_rule(inputs, attributes=None, outputs=3, op="MultiHeadAttention", names=None, data=None):
    ctx = run_rule(op, 1, inputs, {**HEADS, **(attributes or {})}, domain=MS, output_count=outputs, names=names, data=data)
    return [ctx.output_type(i) for i in range(ctx.output_count)]


def test_packed_qkv_and_packed_kv():
    # the CPU kernel has neither packing; the shapes follow the schema's
    y, key, value = mha_rule([t(B, S, 2, 3, 8)])
    assert (y, key, value) == (t(B, S, 16), t(B, 2, S, 8), t(B, 2, S, 8))
    y, key, value = mha_rule([t(B, S, 16), t(B, L, 2, 2, 8)], names=["q", "kv"])
    assert (y, key, value) == (t(B, S, 16), t(B, 2, L, 8), t(B, 2, L, 8))
    with pytest.raises(InferenceError, match="packs 3 tensors"):
        mha_rule([t(B, S, 2, 2, 8)])


def test_present_but_unknown_cache_or_length_is_sound():
    names = ["q", "k", "v", "", "", "", "pk", "pv", "psl"]
    inputs = [t(B, 1, 16), t(B, 1, 16), t(B, 1, 16), None, None, None, t(None), t(None), t(elem=INT32)]
    _, key, _, qk = mha_rule(inputs, outputs=4, names=names)
    assert key == t(B, 2, None, 8) and qk == t(B, 2, 1, None, elem=0)
    _, key, _, qk = mha_rule(inputs, outputs=4, names=names, data=[None] * 8 + [vec(6)])
    assert key == t(B, 2, None, 8) and qk == t(B, 2, 1, 7, elem=0)
    # without past_sequence_length the cache grows
    _, key, _, qk = mha_rule(inputs[:8], outputs=4, names=names[:8])
    assert key == t(B, 2, None, 8) and qk == t(B, 2, 1, None, elem=0)


def test_decoder_masked_without_sharing_grows_the_cache():
    names = ["q", "k", "v", "", "", "pk", "pv"]
    inputs = [t(B, 1, 16), t(B, 1, 16), t(B, 1, 16), None, None, t(B, 2, P, 8), t(B, 2, P, 8)]
    _, key, value = mha_rule(inputs, names=names, op="DecoderMaskedMultiHeadAttention")
    assert key == value == t(B, 2, P + 1, 8)


@pytest.mark.parametrize("inputs, message", [
    ([t(B, 16)], "3-D .* or 5-D"),
    ([t(B, S, 16), t(B, L, 16), t(B, 16)], "value"),
    ([t(2, S, 16), t(3, L, 16), t(3, L, 16)], "batch sizes"),
    ([t(B, S, 16), t(B, 3, L, 8), t(B, 3, L, 8)], "num_heads"),
    ([t(B, S, 16), t(B, 4, 16), t(B, 5, 16)], "sequence lengths"),
    ([t(B, S, 16), t(B, L, 16), t(B, L, 16), None, None, None, t(B, 2, P), t(B, 2, P, 8)], "rank"),
])
def test_invalid_nodes(inputs, message):
    names = ["q", "k", "v", "", "", "", "pk", "pv"][:len(inputs)]
    names = [n if inputs[i] is not None else "" for i, n in enumerate(names)]
    with pytest.raises(InferenceError, match=message):
        mha_rule(inputs, names=names)


def packed_mha(inputs, names=None):
    return run_rule("PackedMultiHeadAttention", 1, inputs, HEADS, domain=MS, names=names).output_type(0)


def test_packed_multi_head_attention():
    tokens = [t(B, S, elem=INT32), t(B + 1, elem=INT32)]
    T = Sym("T")
    assert packed_mha([t(T, 16), t(T, 16), t(T, 12), None, *tokens], ["q", "k", "v", "", "o", "c"]) == t(T, 12)
    assert packed_mha([t(T, 2, 3, 8), None, None, None, *tokens], ["q", "", "", "", "o", "c"]) == t(T, 16)
    assert packed_mha([t(T, 16), t(T, 16), t(None), None, *tokens], ["q", "k", "v", "", "o", "c"]) == t(T, None)
    with pytest.raises(InferenceError, match="2-D"):
        packed_mha([t(T, 1, 16), t(T, 16), t(T, 12), None, *tokens], ["q", "k", "v", "", "o", "c"])


def decoder_attention(inputs, outputs=3, names=None):
    ctx = run_rule("DecoderAttention", 1, inputs, HEADS, domain=MS, output_count=outputs, names=names)
    return [ctx.output_type(i) for i in range(ctx.output_count)]


def test_decoder_attention():
    flags = [t(elem=9)] * 4
    base = [t(S, B, 16), t(L, B, 16), t(16, 16), t(16, 32), t(48), None]
    y, key, value = decoder_attention(base + [t(B, 2, P, 8), t(B, 2, P, 8)] + flags)
    assert y == t(S, B, 16) and key == value == t(B, 2, None, 8)
    names = ["q", "k", "qw", "kvw", "b", "", "", "", "s", "u", "h", "m"]
    y, key, value = decoder_attention(base + [None, None] + flags, names=names)
    assert key == t(B, 2, None, 8)
    names[6:8] = ["kc", "vc"]
    y, key, value = decoder_attention(base + [t(None), t(None)] + flags, names=names)
    assert key == value == t(B, 2, None, 8)
    with pytest.raises(InferenceError, match="rank"):
        decoder_attention(base + [t(B, 2, 8), t(B, 2, P, 8)] + flags)
