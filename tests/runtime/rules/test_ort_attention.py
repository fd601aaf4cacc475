"""onnxruntime's Attention (com.microsoft), DecoderMaskedSelfAttention, PackedAttention and the rotary
embeddings: held against onnxruntime's CPU provider where it has a kernel, else against the rules
onnxruntime's own inference functions state."""
from __future__ import annotations

import pytest
from ort_oracle import F, I32, I64, Case, Const, In, check

from opspec.runtime.contract import InferenceError
from opspec.runtime.shape import Sym
from opspec.runtime.testing import INT32, INT64, run_rule, t

MS = "com.microsoft"
B, S, P, T, D, M = Sym("B"), Sym("S"), Sym("P"), Sym("T"), Sym("D"), Sym("M")
F16 = 10
SETTINGS = [{"B": 2, "S": 3, "P": 4, "D": 10}, {"B": 1, "S": 1, "P": 7, "D": 6}]


def attention_case(*, past=None, outputs=1, width=48, sizes=None, bias=True):
    inputs = [In(F, ("B", "S", "D")), In(F, ("D", width)), In(F, (width,)) if bias else None, None,
              In(F, past) if past else None]
    attributes = {"num_heads": 2, **({"qkv_hidden_sizes": sizes} if sizes else {})}
    return Case("Attention", MS, inputs, attributes, outputs=outputs)


def test_attention_output_and_present_without_a_cache():
    verdict = check(attention_case(outputs=2), SETTINGS)
    assert verdict.problems == [] and verdict.exact
    assert verdict.inferred[0][1] == (B, S, 16) and verdict.inferred[1][1] == (2, B, 2, S, 8)


def test_attention_present_grows_by_the_new_tokens():
    verdict = check(attention_case(past=(2, "B", 2, "P", 8), outputs=2), SETTINGS)
    assert verdict.problems == [] and verdict.exact
    assert verdict.inferred[1][1] == (2, B, 2, P + S, 8)


@pytest.mark.parametrize("sizes, width, hidden", [([16, 16, 8], 40, 8), ([8, 8, 16], 32, 16), ([16, 16, 16], 48, 16)])
def test_attention_qkv_hidden_sizes_set_v_hidden(sizes, width, hidden):
    verdict = check(attention_case(outputs=2, width=width, sizes=sizes), SETTINGS)
    assert verdict.problems == []
    # the CPU kernel gives the present V's head size, others Q's: known only when they agree
    head = 8 if len(set(sizes)) == 1 else None
    assert verdict.inferred[0][1] == (B, S, hidden) and verdict.inferred[1][1] == (2, B, 2, S, head)


def test_attention_with_mask_and_past_sequence_length_that_does_not_share():
    case = Case("Attention", MS, [In(F, ("B", 1, "D")), In(F, ("D", 48)), In(F, (48,)), None,
                                  In(F, (2, "B", 2, "P", 8)), None, Const(4, I32)], {"num_heads": 2}, outputs=2)
    verdict = check(case, SETTINGS)
    assert verdict.problems == [] and verdict.exact
    assert verdict.inferred[1][1] == (2, B, 2, P + 1, 8)


def ort_attention(inputs, attributes=None, outputs=2, op="Attention", names=None):
    ctx = run_rule(op, 1, inputs, {"num_heads": 2, **(attributes or {})}, domain=MS, output_count=outputs, names=names)
    return [ctx.output_type(i) for i in range(ctx.output_count)]


def test_attention_shared_buffer_keeps_the_past_shape():
    # the CPU kernel has no shared-buffer path; the schema states present is past's buffer
    inputs = [t(B, 1, 10), t(10, 48), t(48), None, t(2, B, 2, M, 8), None, t(elem=INT32)]
    names = ["x", "w", "b", "", "past", "", "psl"]
    _, present = ort_attention(inputs, {"past_present_share_buffer": 1}, names=names)
    assert present == t(2, B, 2, M, 8)


def test_attention_unknown_past_or_bias_is_sound():
    names = ["x", "w", "b", "", "past"]
    y, present = ort_attention([t(B, S, 10), t(10, 48), None, None, t(None)], names=names)
    assert y == t(B, S, 16) and present == t(2, B, 2, None, 8)
    y, present = ort_attention([t(B, S, 10), t(10, 48), None, None, None], names=["x", "w", "", "", ""])
    assert y == t(B, S, 16) and present == t(2, B, 2, S, 8)
    # a bias present but unknown leaves the width to the weights; unknown weights to the bias
    y, _ = ort_attention([t(B, S, 10), t(10, 48), t(None), None, None], names=["x", "w", "b", "", ""])
    assert y == t(B, S, 16)
    y, _ = ort_attention([t(B, S, 10), t(None), t(48), None, None], names=["x", "w", "b", "", ""])
    assert y == t(B, S, 16)


def test_decoder_masked_self_attention_follows_attention():
    inputs = [t(B, 1, 10), t(10, 48), t(48), None, t(2, B, 2, M, 8), None, t(elem=INT32)]
    names = ["x", "w", "b", "", "past", "", "psl"]
    op = "DecoderMaskedSelfAttention"
    assert ort_attention(inputs, {"past_present_share_buffer": 1}, names=names, op=op)[1] == t(2, B, 2, M, 8)
    assert ort_attention(inputs, names=names, op=op) == [t(B, 1, 16), t(2, B, 2, M + 1, 8)]


@pytest.mark.parametrize("inputs, attributes, message", [
    ([t(B, 10), t(10, 48), t(48)], {}, "rank"),
    ([t(B, S, 10), t(12, 48), t(48)], {}, "rows of weights"),
    ([t(B, S, 10), t(10, 48), t(40)], {}, "widths of weights and bias"),
    ([t(B, S, 10), t(10, 48), t(48)], {"qkv_hidden_sizes": [16, 16]}, "3 sizes"),
    ([t(B, S, 10), t(10, 48), t(48)], {"qkv_hidden_sizes": [16, 16, 8]}, "sum of qkv_hidden_sizes"),
    ([t(B, S, 10), t(10, 48), t(48), None, t(2, B, 2, P)], {}, "rank"),
    ([t(B, S, 10), t(10, 48), t(48), None, t(3, B, 2, P, 8)], {}, "leading axis"),
    ([t(B, S, 10), t(10, 48), t(48), None, t(2, B, 3, P, 8)], {}, "num_heads"),
])
def test_attention_invalid_nodes(inputs, attributes, message):
    names = ["x", "w", "b", "", "past"][:len(inputs)]
    names = [n if inputs[i] is not None else "" for i, n in enumerate(names)]
    with pytest.raises(InferenceError, match=message):
        ort_attention(inputs, attributes, names=names)


def test_packed_attention_rule():
    run_packed = lambda inputs, attributes=None: run_rule(  # noqa: E731
        "PackedAttention", 1, inputs, {"num_heads": 2, **(attributes or {})}, domain=MS).output_type(0)
    tokens = [t(B, S, elem=INT32), t(B + 1, elem=INT32)]
    assert run_packed([t(T, 10), t(10, 48), t(48), *tokens]) == t(T, 16)
    assert run_packed([t(T, 10), t(10, 40), t(40), *tokens], {"qkv_hidden_sizes": [16, 16, 8]}) == t(T, 8)
    assert run_packed([t(None), t(10, 48), t(48), *tokens]) == t(None, 16)
    with pytest.raises(InferenceError, match="rank"):
        run_packed([t(B, S, 10), t(10, 48), t(48), *tokens])


def rotary_case(op, input_shape, positions, attributes=None):
    caches = [In(F, (16, 4)), In(F, (16, 4))]
    return Case(op, MS, [In(F, input_shape), In(I64, positions), *caches], attributes or {})


@pytest.mark.parametrize("case", [
    rotary_case("RotaryEmbedding", ("B", "S", 16), ("B", "S"), {"num_heads": 2}),
    rotary_case("RotaryEmbedding", ("B", 2, "S", 8), ("B", "S")),
    rotary_case("RotaryEmbedding", ("B", "S", 16), (1,), {"num_heads": 2, "rotary_embedding_dim": 8}),
    rotary_case("MRotaryEmbedding", ("B", "S", 16), (3, "B", "S"), {"num_heads": 2, "mrope_section": [2, 1, 1]}),
    rotary_case("MRotaryEmbedding", ("B", 2, "S", 8), (3, "B", "S"),
                {"mrope_section": [2, 1, 1], "mrope_layout": 1}),
])
def test_rotary_embeddings_keep_the_input_shape(case):
    verdict = check(case, [{"B": 2, "S": 3}, {"B": 1, "S": 5}])
    assert verdict.problems == [] and verdict.exact
    assert verdict.inferred[0][1] == tuple(Sym(d) if isinstance(d, str) else d for d in case.inputs[0].shape)


def gemma(inputs):
    ctx = run_rule("GemmaRotaryEmbedding", 1, inputs, domain=MS)
    return [ctx.output_type(i) for i in range(2)]


def test_gemma_rotary_embedding_outputs_take_q_shape():
    q = t(B, 4, S, 8, elem=F16)
    assert gemma([t(B, S, 8), q, q, t(B, 2, S, 8, elem=F16), t(B, 2, S, 8, elem=F16)]) == [q, q]
    # an unknown q takes what emb says of batch, sequence and dim
    unknown = t(None, elem=F16)
    assert gemma([t(B, S, 8), unknown, unknown, unknown, unknown]) == [t(B, None, S, 8, elem=F16)] * 2
    with pytest.raises(InferenceError, match="sequence lengths of emb"):
        gemma([t(B, 3, 8), t(B, 4, 5, 8, elem=F16), q, q, q])
    with pytest.raises(InferenceError, match="rank"):
        gemma([t(B, 8), q, q, q, q])


def test_rotary_embedding_unknown_input_is_sound():
    ctx = run_rule("RotaryEmbedding", 1, [t(None, elem=F16), t(B, S, elem=INT64), t(16, 4, elem=F16),
                                     t(16, 4, elem=F16)], domain=MS)
    assert ctx.output_type(0) == t(None, elem=F16)
    ctx = run_rule("RotaryEmbedding", 1, [t(B, 2, S, 8, elem=F16), t(1, elem=INT64), t(16, 4, elem=F16),
                                     t(16, 4, elem=F16)], domain=MS)
    assert ctx.output_type(0) == t(B, 2, S, 8, elem=F16)


# ---------------------------------------------------------------------------------- LongformerAttention

def test_longformer_attention_keeps_the_input_shape():
    # a CUDA kernel only: held to onnxruntime's inference function
    inputs = [t(B, S, 64), t(64, 192), t(192), t(B, S), t(64, 192), t(192), t(B, S, elem=INT32)]
    ctx = run_rule("LongformerAttention", 1, inputs, {"num_heads": 4, "window": 2}, domain=MS)
    assert ctx.output_type(0) == t(B, S, 64)
