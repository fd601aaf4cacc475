"""onnxruntime's matrix products with quantized weights: MatMulNBits, MatMulBnb4 and MatMulFpQ4 held
against onnxruntime's CPU kernels; MatMulNBitsMlp, MatMulNBitsQkv, the block-scaled FP4 and FP8 weight
products and GemmFloat8, which have no CPU kernel, against the rules alone (as onnxruntime's inference
functions state them)."""
from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from ort_oracle import F, F16, I32, I64, U8, Case, Const, In, Operand, check, inferred_outputs, model_of, run_ort

from opspec.runtime.contract import InferenceError
from opspec.runtime.shape import Sym
from opspec.runtime.testing import run_rule, t, vec

MS = "com.microsoft"
B, S, M, L = Sym("B"), Sym("S"), Sym("M"), Sym("L")
SETTINGS = [{"B": 2, "S": 3}, {"B": 1, "S": 5}]
UINT8, FLOAT16, BFLOAT16, E4M3 = 2, 10, 16, 17


def ms(op, inputs, attributes=None, **kwargs):
    return run_rule(op, 1, inputs, attributes, domain=MS, **kwargs)


# -- MatMulNBits ----------------------------------------------------------------------------------

def nbits_case(*, bits=4, block_size=32, k=64, n=24, zero_points=None, bias=False, g_idx=False,
               a_shape=("B", "S", "K"), elem=F):
    """A MatMulNBits node with constant B, scales and zero points of the sizes the attributes imply."""
    rng = np.random.default_rng(bits * block_size + k)
    blocks = -(-k // block_size)
    weight = Const(rng.integers(0, 256, (n, blocks, block_size * bits // 8)), U8)
    scales = Const(rng.random((n, blocks)) * 0.1, elem)
    zp = None
    if zero_points == "packed":
        zp = Const(rng.integers(0, 256, (n, -(-blocks * bits // 8))), U8)
    elif zero_points == "float":
        zp = Const(rng.random((n, blocks)) * 2 ** (bits - 1), elem)
    inputs: list[Operand]
    inputs = [In(elem, tuple(k if d == "K" else d for d in a_shape)), weight, scales, zp,
              Const(np.arange(k) // block_size, I32) if g_idx else None,
              Const(rng.random(n), elem) if bias else None]
    while inputs[-1] is None:
        inputs.pop()
    return Case("MatMulNBits", MS, inputs, {"K": k, "N": n, "bits": bits, "block_size": block_size})


@pytest.mark.parametrize("bits", [4, 8])
@pytest.mark.parametrize("block_size", [16, 32, 128])
def test_matmul_nbits_gives_a_leading_dims_and_n(bits, block_size):
    verdict = check(nbits_case(bits=bits, block_size=block_size, k=256), SETTINGS)
    assert verdict.problems == []
    assert verdict.exact
    assert verdict.inferred == [(F, (B, S, 24))]


@pytest.mark.parametrize("bits, zero_points", [(4, "packed"), (4, "float"), (8, "packed"), (8, None)])
def test_matmul_nbits_with_zero_points_and_bias(bits, zero_points):
    """The CPU kernel has no 8-bit path for float zero points."""
    verdict = check(nbits_case(bits=bits, zero_points=zero_points, bias=True), SETTINGS)
    assert verdict.problems == []
    assert verdict.inferred == [(F, (B, S, 24))]


def test_matmul_nbits_with_g_idx_odd_k_float16_and_other_ranks():
    for case in (nbits_case(zero_points="packed", g_idx=True), nbits_case(k=80, block_size=32),
                 nbits_case(elem=F16, block_size=16), nbits_case(a_shape=("B", "K"))):
        verdict = check(case, SETTINGS)
        assert verdict.problems == []
        assert verdict.exact
    verdict = check(nbits_case(a_shape=("K",)), [{}])
    assert verdict.problems == [] and verdict.inferred == [(F, (24,))]


def test_matmul_nbits_checks_k_against_a_and_n_against_bias():
    attributes = {"K": 64, "N": 24, "block_size": 32}
    assert ms("MatMulNBits", [t(B, Sym("K")), t(24, 2, 16, elem=UINT8), t(24, 2)], attributes).output_type(0) \
        == t(B, 24)
    with pytest.raises(InferenceError, match="65 features"):
        ms("MatMulNBits", [t(B, 65), t(24, 2, 16, elem=UINT8), t(24, 2)], attributes)
    with pytest.raises(InferenceError, match="scalar"):
        ms("MatMulNBits", [t(), t(24, 2, 16, elem=UINT8), t(24, 2)], attributes)
    for bias in (t(25), t(1, 24)):
        with pytest.raises(InferenceError, match="bias"):
            ms("MatMulNBits", [t(B, 64), t(24, 2, 16, elem=UINT8), t(24, 2), None, None, bias], attributes)
    assert ms("MatMulNBits", [None, t(24, 2, 16, elem=UINT8), t(24, 2)], attributes).output_type(0).shape is None


def test_matmul_nbits_bias_present_but_unknown_is_sound():
    attributes = {"K": 64, "N": 24, "block_size": 32}
    names = ["a", "b", "s", "", "", "bias"]
    inputs = [t(B, 64), t(24, 2, 16, elem=UINT8), t(24, 2), None, None]
    unknown = ms("MatMulNBits", inputs + [None], attributes, names=names).output_type(0)
    known = ms("MatMulNBits", inputs + [t(24)], attributes, names=names).output_type(0)
    symbolic = ms("MatMulNBits", inputs + [t(Sym("n"))], attributes, names=names).output_type(0)
    assert unknown == known == symbolic == t(B, 24)


# -- MatMulBnb4 -----------------------------------------------------------------------------------

@pytest.mark.parametrize("trans_b", [1, 0])
@pytest.mark.parametrize("quant_type", [0, 1])
def test_matmul_bnb4_follows_trans_b(trans_b, quant_type):
    k, n, block = 64, 24, 32
    features = k if trans_b else n
    inputs: list[Operand]
    inputs = [In(F, ("B", "S", features)), Const(np.zeros(n * k // 2), U8), Const(np.ones(n * k // block), F)]
    case = Case("MatMulBnb4", MS, inputs, {"K": k, "N": n, "block_size": block, "quant_type": quant_type,
                                          "transB": trans_b})
    verdict = check(case, SETTINGS)
    assert verdict.problems == []
    assert verdict.inferred == [(F, (B, S, n if trans_b else k))]


def test_matmul_bnb4_checks_the_multiplied_dim():
    attributes = {"K": 64, "N": 24, "block_size": 32, "quant_type": 1, "transB": 0}
    with pytest.raises(InferenceError, match="attribute N is 24"):
        ms("MatMulBnb4", [t(B, 64), t(768, elem=UINT8), t(48)], attributes)


# -- MatMulFpQ4 -----------------------------------------------------------------------------------

def _fp_q4_case(block_type: int, blob_bytes: int, k: int = 64, n: int = 24) -> Case:
    inputs: list[Operand]
    inputs = [In(F, ("B", "S", k)), Const(np.zeros(n * (k // 32) * blob_bytes), U8), Const(np.array([k, n]), I64)]
    return Case("MatMulFpQ4", MS, inputs, {"blk_quant_type": block_type})


@cache
def _fp_q4_kernel() -> bool:
    """MLAS packs MatMulFpQ4's 4-bit blocks only on some processors (AVX-512 on x86-64); elsewhere
    onnxruntime refuses the node at load, whatever its shapes."""
    try:
        run_ort(model_of(_fp_q4_case(0, 20)), _fp_q4_case(0, 20), SETTINGS[0])
    except Exception:  # noqa: BLE001 - onnxruntime's errors share no base class
        return False
    return True


@pytest.mark.parametrize("block_type, blob_bytes", [(0, 20), (1, 21)])
def test_matmul_fp_q4_reads_n_from_b_shape(block_type, blob_bytes):
    """Held against onnxruntime's run where this machine has the kernel, against the rule alone elsewhere."""
    case = _fp_q4_case(block_type, blob_bytes)
    if not _fp_q4_kernel():
        assert inferred_outputs(model_of(case), 1) == [(F, (B, S, 24))]
        return
    verdict = check(case, SETTINGS)
    assert verdict.problems == []
    assert verdict.inferred == [(F, (B, S, 24))]


def test_matmul_fp_q4_without_b_shape_values_knows_the_rank_only():
    names = ["a", "b", "shape"]
    known = ms("MatMulFpQ4", [t(B, 64), t(L, elem=UINT8), t(2, elem=7)], data=[None, None, vec(64, 24)],
               names=names)
    unknown = ms("MatMulFpQ4", [t(B, 64), t(L, elem=UINT8), t(2, elem=7)], names=names)
    assert known.output_type(0) == t(B, 24)
    assert unknown.output_type(0) == t(B, None)


def test_matmul_fp_q4_checks_b_shape():
    inputs = [t(B, 64), t(L, elem=UINT8), t(3, elem=7)]
    with pytest.raises(InferenceError, match="two values"):
        ms("MatMulFpQ4", inputs, data=[None, None, vec(2, 64, 24)])
    with pytest.raises(InferenceError, match="negative"):
        ms("MatMulFpQ4", inputs, data=[None, None, vec(64, -1)])
    with pytest.raises(InferenceError, match="65 features"):
        ms("MatMulFpQ4", [t(B, 65), t(L, elem=UINT8), t(2, elem=7)], data=[None, None, vec(64, 24)])


# -- MatMulNBitsMlp and MatMulNBitsQkv (no CPU kernel) ----------------------------------------------

MLP = {"K": 64, "N": 24, "block_size": 32, "activation": "silu"}
W, SC = t(24, 2, 16, elem=UINT8), t(24, 2)


def mlp(a, skip=None, norm=None, gate_bias=None, up_bias=None, outputs=1):
    inputs = [a, skip, norm, W, SC, gate_bias, W, SC, up_bias]
    names = ["a", "skip" if skip else "", "norm" if norm else "", "gw", "gs", "gb" if gate_bias else "", "uw",
             "us", "ub" if up_bias else ""]
    return ms("MatMulNBitsMlp", inputs, MLP, names=names, output_count=outputs)


def test_matmul_nbits_mlp_gives_n_features_and_the_residual_sum():
    ctx = mlp(t(B, S, 64), skip=t(B, S, 64), norm=t(64), gate_bias=t(24), up_bias=t(24), outputs=2)
    assert [ctx.output_type(i) for i in range(2)] == [t(B, S, 24), t(B, S, 64)]
    assert mlp(t(64)).output_type(0) == t(24)
    assert mlp(None).output_type(0).shape is None


def test_matmul_nbits_mlp_checks_like_onnxruntime():
    for kwargs, message in (({"a": t()}, "scalar"), ({"a": t(B, 65)}, "65 features"),
                            ({"a": t(B, 64), "norm": t(65)}, "norm_scale"),
                            ({"a": t(B, 64), "norm": t(1, 64)}, "norm_scale"),
                            ({"a": t(B, 64), "skip": t(B, 64)}, "without norm_scale"),
                            ({"a": t(B, 64), "up_bias": t(25)}, "up_bias")):
        with pytest.raises(InferenceError, match=message):
            mlp(**kwargs)


def test_matmul_nbits_mlp_unknown_optional_shapes_are_sound():
    assert mlp(t(B, 64), norm=t(None), gate_bias=t(None)).output_type(0) == t(B, 24)
    assert mlp(t(B, 64), norm=t(Sym("k")), up_bias=t(Sym("n"))).output_type(0) == t(B, 24)


QKV = {"K": 64, "Nq": 32, "Nkv": 16, "block_size": 32}


def qkv(a, skip=None, biases=(None, None, None), outputs=3):
    wq, wk = (t(32, 2, 16, elem=UINT8), t(32, 2)), (t(16, 2, 16, elem=UINT8), t(16, 2))
    inputs = [a, skip, t(64), *wq, biases[0], *wk, biases[1], *wk, biases[2]]
    names = [f"i{i}" if value is not None or i in (0, 2) else "" for i, value in enumerate(inputs)]
    return ms("MatMulNBitsQkv", inputs, QKV, names=names, output_count=outputs)


def test_matmul_nbits_qkv_gives_q_k_v_and_the_residual_sum():
    ctx = qkv(t(B, S, 64), skip=t(B, S, 64), biases=(t(32), t(16), t(16)), outputs=4)
    assert [ctx.output_type(i) for i in range(4)] == [t(B, S, 32), t(B, S, 16), t(B, S, 16), t(B, S, 64)]
    assert qkv(t(64)).output_type(1) == t(16)
    # onnxruntime does not compare A's last dim with K
    assert qkv(t(B, 65)).output_type(0) == t(B, 32)


def test_matmul_nbits_qkv_checks_rank_and_biases():
    with pytest.raises(InferenceError, match="scalar"):
        qkv(t())
    for biases, message in (((t(33), None, None), "q_bias"), ((None, t(32), None), "k_bias"),
                            ((None, None, t(17)), "v_bias")):
        with pytest.raises(InferenceError, match=message):
            qkv(t(B, 64), biases=biases)
    assert qkv(t(B, 64), biases=(t(None), t(Sym("n")), None)).output_type(2) == t(B, 16)


# -- MatMulBlockQuantizedFp4Weight / Fp8Weight (no CPU kernel) --------------------------------------

def test_matmul_block_scaled_fp4_weight_reads_n_and_half_k_from_b():
    inputs = [t(B, S, 64, elem=FLOAT16), t(24, 32, elem=UINT8), t(24, 4, elem=UINT8), t()]
    assert ms("MatMulBlockQuantizedFp4Weight", inputs).output_type(0) == t(B, S, 24, elem=FLOAT16)
    assert ms("MatMulBlockQuantizedFp4Weight", [t(64, elem=BFLOAT16), t(M, 32, elem=UINT8), t(M, 4, elem=UINT8),
                                                t()]).output_type(0) == t(M, elem=BFLOAT16)
    with pytest.raises(InferenceError, match="66 features"):
        ms("MatMulBlockQuantizedFp4Weight", [t(B, 66, elem=FLOAT16), *inputs[1:]])
    with pytest.raises(InferenceError, match="2-D"):
        ms("MatMulBlockQuantizedFp4Weight", [inputs[0], t(24, 32, 1, elem=UINT8), *inputs[2:]])
    with pytest.raises(InferenceError, match="scalar"):
        ms("MatMulBlockQuantizedFp4Weight", [t(elem=FLOAT16), *inputs[1:]])


def test_matmul_block_scaled_weight_with_an_unknown_operand_says_less():
    unknown_b = ms("MatMulBlockQuantizedFp8Weight", [t(B, 64, elem=FLOAT16), t(None, elem=E4M3), t(24, 1)])
    assert unknown_b.output_type(0) == t(B, None, elem=FLOAT16)
    unknown_a = ms("MatMulBlockQuantizedFp8Weight", [t(None, elem=FLOAT16), t(24, 64, 1, elem=E4M3), t(24, 1)])
    assert unknown_a.output_type(0).shape is None  # onnxruntime checks B's rank only beside a known A
    symbolic_k = ms("MatMulBlockQuantizedFp8Weight", [t(B, 64, elem=FLOAT16), t(24, Sym("k"), elem=E4M3), t(24, 1)])
    assert symbolic_k.output_type(0) == t(B, 24, elem=FLOAT16)


def test_matmul_block_scaled_fp8_weight_reads_n_and_k_from_b():
    inputs = [t(B, S, 64, elem=FLOAT16), t(24, 64, elem=E4M3), t(24, 1), None, t(24, elem=FLOAT16)]
    assert ms("MatMulBlockQuantizedFp8Weight", inputs).output_type(0) == t(B, S, 24, elem=FLOAT16)
    with pytest.raises(InferenceError, match="32 features"):
        ms("MatMulBlockQuantizedFp8Weight", [t(B, 32, elem=FLOAT16), *inputs[1:]])


# -- GemmFloat8 (no CPU kernel) ---------------------------------------------------------------------

def test_gemm_float8_gives_m_by_n_in_the_dtype():
    assert ms("GemmFloat8", [t(M, 64), t(64, 24)]).output_type(0) == t(M, 24)
    assert ms("GemmFloat8", [t(64, M), t(24, 64)], {"transA": 1, "transB": 1, "dtype": FLOAT16}).output_type(0) \
        == t(M, 24, elem=FLOAT16)
    assert ms("GemmFloat8", [t(M, 64), t(65, 24), t(7, 9)]).output_type(0) == t(M, 24)  # no inner-dim check
    assert ms("GemmFloat8", [t(M, 64), None]).output_type(0) == t(M, None)


def test_gemm_float8_needs_matrices():
    with pytest.raises(InferenceError, match="rank 2"):
        ms("GemmFloat8", [t(2, M, 64), t(64, 24)])
    with pytest.raises(InferenceError, match="rank 2"):
        ms("GemmFloat8", [t(M, 64), t(64,)])
    assert ms("GemmFloat8", [t(2, M, 64), None]).output_type(0) == t(None, None)
