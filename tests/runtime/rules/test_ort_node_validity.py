"""Nodes whose own shapes and attributes onnxruntime refuses, though their schema allows them: each is
a node error in opspec, held against onnxruntime's refusal, beside a valid neighbour that
onnxruntime runs and opspec accepts. Where this machine has no kernel for the op, the onnxruntime
side is skipped and opspec's answer is held all the same."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from ort_oracle import F, I64, U8, Case, Const, In, check  # noqa: E402
from ort_validity import assert_accepted_by_both, assert_refused_by_both  # noqa: E402

MS = "com.microsoft"


# ------------------------------------------------------------------------------------------------ MatMulFpQ4

def fp_q4(blob_bytes: int, quant_type: int = 1) -> Case:
    """A (M, 52) times a packed (52, 8) weight."""
    return Case("MatMulFpQ4", MS, [In(F, ("M", 52)), Const([0] * blob_bytes, U8), Const([52, 8], I64)],
                {"blk_quant_type": quant_type})


def test_matmul_fp_q4_blob_size():
    # 8 columns of ceil(52 / 32) = 2 blocks: 21 bytes each with offsets, 20 without; blocks of 64: 36 bytes
    assert_accepted_by_both(fp_q4(8 * 2 * 21), [{"M": 3}])
    assert_accepted_by_both(fp_q4(8 * 2 * 20, 0), [{"M": 3}])
    assert_accepted_by_both(fp_q4(8 * 1 * 36, 2), [{"M": 3}])
    assert_refused_by_both(fp_q4(8 * 2 * 21 - 1), "B holds 335 bytes", [{"M": 3}], "wrong size")
    assert_refused_by_both(fp_q4(8 * 2 * 21, 0), "needs 320", [{"M": 3}], "wrong size")


# ---------------------------------------------------------------------------------------- GroupQueryAttention

I32 = 6


def gqa(hidden: int = 64, kv_hidden: int = 32, *, past: tuple | None = None, past_value: bool = True,
        cos: tuple | None = None, packed: bool = False) -> Case:
    """4 query heads over 2 key/value heads, batch 1, 3 new tokens after a cache of 5 when ``past`` is given."""
    cached = past[2] if past is not None else 0
    inputs: list = [In(F, (1, 3, hidden))]
    inputs += [None, None] if packed else [In(F, (1, 3, kv_hidden)), In(F, (1, 3, kv_hidden))]
    inputs += [In(F, past) if past is not None else None,
               In(F, past) if past is not None and past_value else None]
    inputs += [Const([3 + cached - 1], I32), Const([3 + cached], I32)]
    if cos is not None:
        inputs += [In(F, cos), In(F, cos)]
    return Case("GroupQueryAttention", MS, inputs, {"num_heads": 4, "kv_num_heads": 2}, outputs=3)


def test_group_query_attention_cache_needs_past_key_and_past_value():
    assert_accepted_by_both(gqa(past=(1, 2, 5, 16)))
    assert_refused_by_both(gqa(past=(1, 2, 5, 16), past_value=False), "past_key is given without past_value")


def test_group_query_attention_hidden_size_splits_evenly_into_heads():
    # opspec stated a truncated head size here (66 // 4 = 16) before it refused the node
    assert_refused_by_both(gqa(66), "hidden size (num_heads 4) 66 is not divisible by 4")
    assert_refused_by_both(gqa(128 + 2, packed=True), "not divisible by 8")
    assert_accepted_by_both(gqa(128, packed=True))
    assert_refused_by_both(gqa(48, 24), "head size 12", ort_match="multiple of 8")


def test_group_query_attention_key_heads_match_query_heads():
    assert_refused_by_both(gqa(64, 48), "the query's head size and key's", ort_match="equal to head_size")
    assert_refused_by_both(gqa(64, 33), "key's hidden size (kv_num_heads 2) 33 is not divisible by 2")
    assert_refused_by_both(gqa(past=(1, 2, 5, 8)), "the head size 16 and the last axes of past_key")


def test_group_query_attention_rotary_cache_width():
    assert_accepted_by_both(gqa(128, 64, cos=(8, 8)))
    assert_accepted_by_both(gqa(128, 64, cos=(8, 16)))
    assert_refused_by_both(gqa(128, 64, cos=(8, 12)), "cos_cache width 12 must be a multiple of 8",
                           ort_match="multiple of 8")
    assert_refused_by_both(gqa(128, 64, cos=(8, 24)), "at most 16", ort_match="<= head_size / 2")
    assert_refused_by_both(gqa(96, 48, cos=(8, 8)), "multiple of 16", ort_match="multiple of 16")


# ------------------------------------------------------------------------------------------------ MatMulNBits

def nbits(k: int = 64, n: int = 8, *, bits: int = 4, block: int = 32, weight: tuple | None = None,
          scales: tuple | None = None, zero_points: tuple | None = None, zero_elem: int = U8) -> Case:
    """A (M, K) times a (K, N) weight; by default every operand laid out as the attributes say."""
    blocks = -(-k // block)
    inputs: list = [In(F, ("M", k)), In(U8, weight or (n, blocks, block * bits // 8)), In(F, scales or (n * blocks,))]
    if zero_points is not None:
        inputs.append(In(zero_elem, zero_points))
    return Case("MatMulNBits", MS, inputs, {"K": k, "N": n, "bits": bits, "block_size": block})


SETTING = [{"M": 2}]


def test_matmul_nbits_operands_match_the_attributes():
    for valid in (nbits(), nbits(scales=(8, 2)), nbits(zero_points=(8, 1)), nbits(zero_points=(8,)),
                  nbits(bits=8, zero_points=(8, 2)), nbits(80, zero_points=(8, 2)),
                  nbits(zero_points=(8, 2), zero_elem=F)):
        assert_accepted_by_both(valid, SETTING)
    assert_refused_by_both(nbits(weight=(8, 3, 16)), "B (8, 3, 16) does not match (8, 2, 16)", SETTING)
    assert_refused_by_both(nbits(weight=(8, 2, 8)), "B (8, 2, 8) does not match (8, 2, 16)", SETTING)
    assert_refused_by_both(nbits(scales=(15,)), "scales (15,) does not match (16,) or (8, 2)", SETTING)
    # 2 blocks of 4-bit zero points pack into one byte per row; unpacked they take one value each
    assert_refused_by_both(nbits(zero_points=(8, 2)), "does not match (8,) or (8, 1)", SETTING)
    assert_refused_by_both(nbits(80, zero_points=(8, 1)), "does not match (16,) or (8, 2)", SETTING)
    assert_refused_by_both(nbits(zero_points=(8, 3), zero_elem=F), "does not match (16,) or (8, 2)", SETTING)


def test_matmul_nbits_block_size_is_a_power_of_two_of_at_least_16():
    assert_accepted_by_both(nbits(block=16), SETTING)
    assert_accepted_by_both(nbits(512, block=256), SETTING)
    assert_refused_by_both(nbits(block=8), "'block_size' = 8", SETTING)
    assert_refused_by_both(nbits(96, block=48), "block_size 48 must be a power of two", SETTING)


# ------------------------------------------------------------------------------------------- RotaryEmbedding

def rope(shape: tuple = (2, 3, 64), width: int = 16, **attributes) -> Case:
    positions = In(I64, (shape[0], shape[-2]), fill=lambda dims, rng: np.zeros(dims, np.int64))
    return Case("RotaryEmbedding", MS, [In(F, shape), positions, In(F, (16, width)), In(F, (16, width))], attributes)


def test_rotary_embedding_dim_needs_num_heads():
    assert_accepted_by_both(rope(width=4, rotary_embedding_dim=8, num_heads=4))
    assert_refused_by_both(rope(width=8, rotary_embedding_dim=16), "rotary_embedding_dim 16 needs num_heads",
                           ort_match="num_heads must be provided")


def test_rotary_embedding_input_is_3d_or_4d():
    assert_accepted_by_both(rope((2, 4, 3, 16), 8))
    assert_refused_by_both(rope((2, 4, 3, 16, 1), 8), "must be 3-D (batch, seq, hidden) or 4-D",
                           ort_match="3 or 4 dimensions")
    assert_refused_by_both(rope((2, 3, 66), 8, num_heads=4), "hidden size (num_heads 4) 66 is not divisible by 4")


# ---------------------------------------------------------------------------------- Attention (com.microsoft)

def attention(hidden: int = 64, sizes: list | None = None, past: tuple | None = None) -> Case:
    """Input (2, 3, hidden) projected to Q, K and V of ``sizes`` (a third of the width each by default), 4 heads."""
    width = sum(sizes) if sizes else 3 * hidden
    inputs: list = [In(F, (2, 3, hidden)), In(F, (hidden, width)), In(F, (width,)), None]
    if past is not None:
        inputs.append(In(F, past))
    attributes: dict = {"num_heads": 4}
    if sizes:
        attributes["qkv_hidden_sizes"] = sizes
    return Case("Attention", MS, inputs, attributes, outputs=2 if past is not None else 1)


def test_attention_hidden_sizes_split_into_heads():
    assert_accepted_by_both(attention())
    assert_accepted_by_both(attention(sizes=[64, 64, 32]))
    # opspec stated the output and a present head size of 66 // 4 = 16 here before it refused the node
    assert_refused_by_both(attention(66), "Q's hidden size (num_heads 4) 66 is not divisible by 4",
                           ort_match="divisible by num_heads")
    assert_refused_by_both(attention(sizes=[64, 64, 66]), "V's hidden size (num_heads 4) 66",
                           ort_match="divisible by num_heads")


def test_attention_k_and_v_sizes_agree_with_past():
    assert_accepted_by_both(attention(past=(2, 2, 4, 5, 16)))
    assert_refused_by_both(attention(sizes=[64, 64, 32], past=(2, 2, 4, 5, 16)),
                           "with past, K's hidden size 64 and V's 32 must be equal", ort_match="k_hidden_size")
    assert_refused_by_both(attention(sizes=[64, 32, 32]), "Q's hidden size 64 and K's 32 differ",
                           ort_match="first element should be same as the second")


# ---------------------------------------------------------------------------------------- MultiHeadAttention

def mha(query: tuple = (2, 3, 64), key: tuple | None = (2, 5, 64), value: tuple | None = (2, 5, 64),
        past_key: tuple | None = None, past_value: tuple | None = None) -> Case:
    inputs: list = [In(F, query), In(F, key) if key else None, In(F, value) if value else None]
    if past_key or past_value:
        inputs += [None, None, None, In(F, past_key) if past_key else None, In(F, past_value) if past_value else None]
    return Case("MultiHeadAttention", MS, inputs, {"num_heads": 4}, outputs=3 if past_key or past_value else 1)


def test_multi_head_attention_hidden_size_splits_into_heads():
    assert_accepted_by_both(mha(value=(2, 5, 32)))
    assert_refused_by_both(mha((2, 3, 66), (2, 5, 66), (2, 5, 66)), "query's hidden size (num_heads 4) 66")
    assert_refused_by_both(mha(value=(2, 5, 66)), "value's hidden size (num_heads 4) 66")
    assert_refused_by_both(mha(key=(2, 5, 66)), "hidden sizes of query (2, 3, 64) and key (2, 5, 66)",
                           ort_match="same dim 2")


def test_multi_head_attention_key_needs_value_unless_packed():
    assert_accepted_by_both(mha(key=(2, 4, 5, 16), value=(2, 4, 5, 16)))
    assert_refused_by_both(mha(value=None), "key (2, 5, 64) is given without value", ort_match="packed kv")
    assert_refused_by_both(mha(key=(2, 4, 5, 16), value=None), "without value", ort_match="packed kv")


def test_multi_head_attention_past_value_has_the_query_head_size():
    assert_accepted_by_both(mha(past_key=(2, 4, 7, 16), past_value=(2, 4, 7, 16)))
    # onnxruntime holds past_value to the query's head size even when V's heads are smaller
    assert_accepted_by_both(mha(value=(2, 5, 32), past_key=(2, 4, 7, 16), past_value=(2, 4, 7, 16)))
    assert_refused_by_both(mha(value=(2, 5, 32), past_key=(2, 4, 7, 16), past_value=(2, 4, 7, 8)),
                           "the query's head size and past_value's last axis", ort_match="same as head_size")
    assert_refused_by_both(mha(past_key=(2, 4, 7, 16)), "past_key is given without past_value",
                           ort_match="both present or both absent")


# --------------------------------------------------------------------------- DecoderMaskedMultiHeadAttention

def decoder_masked(tokens: int) -> Case:
    step: list = [In(F, (2, tokens, 64)), In(F, (2, tokens, 64)), In(F, (2, tokens, 64)), None, None]
    cache = [In(F, (2, 4, 8, 16)), In(F, (2, 4, 8, 16)), Const([3], I32)]
    return Case("DecoderMaskedMultiHeadAttention", MS, step + cache,
                {"num_heads": 4, "past_present_share_buffer": 1}, outputs=3)


def test_decoder_masked_multi_head_attention_decodes_one_token():
    assert_accepted_by_both(decoder_masked(1))
    assert_refused_by_both(decoder_masked(2), "the query holds 2 tokens", ort_match="sequence length should be 1")


# ------------------------------------------------------------------------------------------ MRotaryEmbedding

def mrope(shape: tuple = (2, 4, 3, 16), section: list | None = None, width: int = 8, **attributes) -> Case:
    positions = In(I64, (3, shape[0], shape[-2]), fill=lambda dims, rng: np.zeros(dims, np.int64))
    return Case("MRotaryEmbedding", MS, [In(F, shape), positions, In(F, (16, width)), In(F, (16, width))],
                {"mrope_section": section or [2, 3, 3], **attributes})


def test_mrotary_embedding_sections_sum_to_half_the_rotated_channels():
    assert_accepted_by_both(mrope())
    assert_accepted_by_both(mrope((2, 3, 64), num_heads=4))
    assert_accepted_by_both(mrope(section=[2, 1, 1], width=4, rotary_embedding_dim=8, num_heads=4))
    assert_refused_by_both(mrope(section=[3, 3, 3]), "mrope_section [3, 3, 3] sums to 9, but half the rotated "
                           "channels is 8", ort_match="sum of 'mrope_section'")
    assert_refused_by_both(mrope(section=[2, 3, 3], width=4, rotary_embedding_dim=8, num_heads=4),
                           "is 4", ort_match="sum of 'mrope_section'")
    assert_refused_by_both(mrope(section=[4, 4]), "'mrope_section' = [4, 4]", ort_match="exactly 3 elements")
    assert_refused_by_both(mrope((2, 3, 64)), "needs num_heads", ort_match="num_heads must be greater than 0")


# ----------------------------------------------------------------------------------------------- FusedMatMul

def fused_matmul(a: tuple, b: tuple, **attributes) -> Case:
    return Case("FusedMatMul", MS, [In(F, a), In(F, b)], attributes)


def test_fused_matmul_batch_transposes_need_equal_ranks_of_at_least_3():
    assert_accepted_by_both(fused_matmul((3, 2, 4), (2, 4, 5), transBatchA=1))
    assert_accepted_by_both(fused_matmul((2, 2, 4), (4, 2, 5), transBatchB=1))
    assert_accepted_by_both(fused_matmul((3, 2, 4), (4, 5)))
    for a, b, attributes in (((3, 2, 4), (4, 5), {"transBatchA": 1}), ((1, 2, 2, 4), (4, 2, 5), {"transBatchB": 1}),
                             ((2, 4), (4, 5), {"transBatchA": 1}), ((2, 4), (4,), {"transBatchB": 1})):
        assert_refused_by_both(fused_matmul(a, b, **attributes), "must have one rank, at least 3",
                               ort_match="same rank and rank >= 3")


# ------------------------------------------------------------------------------------ ReorderInput (NCHWc)

def reorder_input(shape: tuple, **attributes) -> Case:
    return Case("ReorderInput", "com.microsoft.nchwc", [In(F, shape)], attributes)


def test_reorder_input_channels_are_a_multiple_of_4():
    for valid in (reorder_input((1, 4, 3, 3)), reorder_input((1, 12, 3, 3)), reorder_input((1, 3, 3, 4), channels_last=1)):
        assert_accepted_by_both(valid)
    assert_refused_by_both(reorder_input((1, 6, 3, 3)), "has 6 channels; the kernel needs a multiple of 4",
                           ort_match="channels % 4")
    assert_refused_by_both(reorder_input((1, 3, 3, 6), channels_last=1), "has 6 channels", ort_match="channels % 4")
    assert_refused_by_both(reorder_input((1, 4, 3)), "must be 4-D", ort_match="X_rank == 4")


# ------------------------------------------------------------------------------------ Unique (com.microsoft)

def test_unique_takes_a_vector():
    assert_accepted_by_both(Case("Unique", MS, [In(F, (6,))], outputs=3))
    assert_refused_by_both(Case("Unique", MS, [In(F, (2, 3))], outputs=3), "x (2, 3) must be 1-D", ort_match="1D")
    assert_refused_by_both(Case("Unique", MS, [In(F, ())], outputs=3), "must be 1-D", ort_match="1D")


# ------------------------------------------------------------------------------------------- WordConvEmbedding

def word_conv(sequence: tuple = (5, 6), weight: tuple = (4, 1, 2, 3), bias: tuple = (4,), table: tuple = (10, 3),
              **attributes) -> Case:
    def ids(shape, rng):
        return rng.integers(0, 10, shape).astype(np.int32)
    return Case("WordConvEmbedding", MS, [In(I32, sequence, fill=ids), In(F, weight), In(F, bias), In(F, table)],
                attributes)


def test_word_conv_embedding_attributes_and_weights_agree():
    assert_accepted_by_both(word_conv())
    assert_accepted_by_both(word_conv(embedding_size=4, conv_window_size=2, char_embedding_size=3))
    assert_refused_by_both(word_conv(embedding_size=5), "embedding_size 5 does not match W's filter count 4",
                           ort_match="embedding_size attribute")
    assert_refused_by_both(word_conv(conv_window_size=3), "conv_window_size 3 does not match", ort_match="conv_window_size")
    assert_refused_by_both(word_conv(char_embedding_size=4), "char_embedding_size 4 does not match C's width 3",
                           ort_match="char_embedding_size attribute")
    assert_refused_by_both(word_conv(table=(10, 4)), "C's width", ort_match="conv kernal size 2")


def test_word_conv_embedding_operand_shapes():
    assert_refused_by_both(word_conv((5,)), "Sequence (5,) must have rank 2 or more", ort_match="rank greater than 1")
    assert_refused_by_both(word_conv(weight=(4, 2, 3)), "W (4, 2, 3) must have rank 4", ort_match="rank greater than 3")
    assert_refused_by_both(word_conv(bias=(5,)), "B (5,) must be 1-D with one bias per filter", ort_match="conv bias")


def test_word_conv_embedding_output_against_onnxruntime():
    for sequence, words in (((5, 6), 5), ((2, 5, 6), 2)):
        verdict = check(word_conv(sequence), [{}])
        assert verdict.problems == [] and verdict.inferred == [(F, (words, 4))]


# ------------------------------------------------------------------------- ScaledSiLU, GatedAdd, GatedRMSNorm

def test_scaled_silu_scale_is_a_scalar():
    assert_accepted_by_both(Case("ScaledSiLU", MS, [In(F, (2, 3, 8))]))
    assert_accepted_by_both(Case("ScaledSiLU", MS, [In(F, (2, 3, 8)), In(F, ())]))
    for scale in ((1,), (8,), (3, 8)):
        assert_refused_by_both(Case("ScaledSiLU", MS, [In(F, (2, 3, 8)), In(F, scale)]), "must be a scalar (rank 0)",
                               ort_match="scale must be a scalar")


def test_gated_add_takes_one_gate_per_row():
    def gated_add(y: tuple, gate: tuple) -> Case:
        return Case("GatedAdd", MS, [In(F, (2, 3, 8)), In(F, y), In(F, gate)])
    assert_accepted_by_both(gated_add((2, 3, 8), (2, 3, 1)))
    for gate in ((2, 3, 8), (8,), (1,), (1, 3, 1)):
        assert_refused_by_both(gated_add((2, 3, 8), gate), "must be (2, 3, 1)", ort_match="gate")
    for y in ((8,), (3, 8), (1, 3, 8)):
        assert_refused_by_both(gated_add(y, (2, 3, 1)), "must have the shape of X (2, 3, 8)",
                               ort_match="Y must have the same shape as X")


def test_gated_rms_norm_groups_and_gate():
    def gated_rms_norm(scale: tuple, gate: tuple = (2, 3, 8)) -> Case:
        return Case("GatedRMSNorm", MS, [In(F, (2, 3, 8)), In(F, scale), In(F, gate)])
    for scale in ((8,), (4,), (1,)):
        assert_accepted_by_both(gated_rms_norm(scale))
    assert_refused_by_both(gated_rms_norm((3, 8)), "not a multiple of scale's 24 elements", ort_match="multiple of")
    assert_refused_by_both(gated_rms_norm((6,)), "X's last axis (8) is not a multiple", ort_match="multiple of")
    for gate in ((8,), (1, 3, 8), (2, 3, 4)):
        assert_refused_by_both(gated_rms_norm((8,), gate), "must have the shape of X", ort_match="gate must have")


# --------------------------------------------------------------------- unknown or symbolic operands: no error

def _unknown_operand_cases():
    """Nodes each check above would refuse if the decisive dim were a number that breaks it; here that
    dim is a symbol, or the operand's shape is unknown, so some valid input fits and no check may fire."""
    from opspec.runtime.shape import Sym
    from opspec.runtime.testing import t

    B, S, L, Q, K, C, X = (Sym(name) for name in ("B", "S", "L", "Q", "K", "C", "X"))
    i32 = 6
    return [
        ("ReorderInput", "com.microsoft.nchwc", [t(B, C, S, L)], {}),
        ("Unique", MS, [t(None)], {}),
        ("FusedMatMul", MS, [t(None), t(None)], {"transBatchA": 1}),
        ("GatedAdd", MS, [t(None), t(B, C), t(B, 1)], {}),
        ("MultiHeadAttention", MS, [t(B, S, Q), t(B, L, Q), t(B, L, Q)], {"num_heads": 3}),
        ("MultiHeadAttention", MS, [t(B, S, 12), t(None), t(B, L, 12)], {"num_heads": 3}),
        ("Attention", MS, [t(B, S, X), t(X, Q)], {"num_heads": 5}),
        ("GroupQueryAttention", MS, [t(B, S, Q), t(B, S, K), t(B, S, K), None, None, t(B, elem=i32), t(elem=i32)],
         {"num_heads": 3, "kv_num_heads": 1}),
        ("RotaryEmbedding", MS, [t(None), t(B, S, elem=7), t(L, 8), t(L, 8)], {}),
        ("MatMulNBits", MS, [t(B, 64), t(None, elem=2), t(None)], {"K": 64, "N": 8, "bits": 4, "block_size": 32}),
    ]


def test_no_check_fires_where_the_decisive_dim_is_a_symbol_or_unknown():
    from opspec.runtime.testing import run_rule

    for op, domain, inputs, attributes in _unknown_operand_cases():
        run_rule(op, None, inputs, attributes, domain=domain)  # an InferenceError here is a false error
