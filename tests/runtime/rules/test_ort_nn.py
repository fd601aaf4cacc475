"""onnxruntime's fused convolutions, matrix products and pools (com.microsoft).

FusedConv, FusedGemm, FusedMatMul, TransposeMatMul, MaxpoolWithMask, NhwcMaxPool and
ConvTransposeWithDynamicPads are held against onnxruntime's CPU kernels; FusedMatMulActivation,
NhwcConv and NhwcFusedConv, which have no CPU kernel, against the rules alone, with cases taken
from onnxruntime's inference functions. SparseToDenseMatMul runs with a sparse A fed at run time.
"""
from __future__ import annotations

from functools import partial

import numpy as np
import onnxruntime
import ort_cases
import pytest
from onnx import TensorProto, helper
from ort_cases import MS, ones
from ort_oracle import F, I32, I64, U8, Case, Const, In, check

import opspec
from opspec.runtime.contract import InferenceError, SparseTensorType, TensorType
from opspec.runtime.rules.ort_nn import matmul_operand
from opspec.runtime.shape import Sym
from opspec.runtime.testing import run_rule, t, vec

N, H, W, M, K, P = Sym("N"), Sym("H"), Sym("W"), Sym("M"), Sym("K"), Sym("P")
SETTINGS = [{"N": 2, "H": 7, "W": 9, "M": 3, "K": 4, "P": 5}, {"N": 1, "H": 5, "W": 6, "M": 2, "K": 6, "P": 1}]
exact = partial(ort_cases.exact, settings=SETTINGS)


# ---------------------------------------------------------------------------------- FusedConv

@pytest.mark.parametrize("inputs, attributes, shape", [
    ([In(F, ("N", 4, "H", "W")), ones(6, 4, 3, 3)], {"activation": "Relu"}, (N, 6, H - 2, W - 2)),
    ([In(F, ("N", 4, "H", "W")), ones(6, 4, 3, 3), ones(6)], {"activation": "LeakyRelu", "activation_params": [0.1],
                                                               "pads": [1, 1, 1, 1]}, (N, 6, H, W)),
    ([In(F, ("N", 4, "H", "W")), ones(6, 2, 3, 3), ones(6), In(F, ("N", 6, "H", "W"))],
     {"activation": "Relu", "pads": [1, 1, 1, 1], "group": 2}, (N, 6, H, W)),
    ([In(F, ("N", 4, "H", "W")), ones(6, 4, 1, 1), None, In(F, ("N", 6, "H", "W"))], {"activation": "Sigmoid"},
     (N, 6, H, W)),
    ([In(F, ("N", 4, "H", "W")), ones(8, 4, 3, 3)], {"activation": "Relu", "strides": [2, 2], "auto_pad": "SAME_UPPER"},
     (N, 8, (H + 1) // 2, (W + 1) // 2)),
])
def test_fused_conv_against_onnxruntime(inputs, attributes, shape):
    assert exact(Case("FusedConv", MS, inputs, attributes)) == [(F, shape)]


def test_fused_conv_checks_channels():
    with pytest.raises(InferenceError, match="channels"):
        run_rule("FusedConv", 1, [t(N, 4, H, W), t(6, 3, 3, 3)], {"activation": "Relu"}, domain=MS)


# ---------------------------------------------------------------------------------- FusedGemm

@pytest.mark.parametrize("inputs, attributes, shape", [
    ([In(F, ("N", "K")), In(F, ("K", "P"))], {"activation": "Relu"}, (N, P)),
    ([In(F, (4, "N")), ones(4, 5)], {"transA": 1, "activation": "Tanh"}, (N, 5)),
    ([In(F, ("N", 4)), ones(5, 4), ones(5)], {"transB": 1, "activation": "LeakyRelu", "activation_alpha": 0.2}, (N, 5)),
    ([In(F, (4, "N")), ones(5, 4), In(F, ("N", 1))], {"transA": 1, "transB": 1, "activation": "Relu"}, (N, 5)),
])
def test_fused_gemm_against_onnxruntime(inputs, attributes, shape):
    assert exact(Case("FusedGemm", MS, inputs, attributes)) == [(F, shape)]


def test_fused_gemm_needs_matrices():
    with pytest.raises(InferenceError):
        run_rule("FusedGemm", 1, [t(N, 3, 4), t(4, 5)], {"activation": "Relu"}, domain=MS)


# ---------------------------------------------------------------------------------- FusedMatMul

def _raw(effective: tuple, trans: bool, trans_batch: bool) -> tuple:
    """The operand that FusedMatMul reads as ``effective`` (batch..., rows, cols) under the flags."""
    batch, rows, cols = effective[:-2], effective[-2], effective[-1]
    first, last = (cols, rows) if trans else (rows, cols)
    return (first,) + batch + (last,) if trans_batch else batch + (first, last)


@pytest.mark.parametrize("flags", [(a, b, c, d) for a in (0, 1) for b in (0, 1) for c in (0, 1) for d in (0, 1)])
def test_fused_matmul_every_transpose_against_onnxruntime(flags):
    trans_a, trans_b, batch_a, batch_b = flags
    a, b = _raw(("N", 2, "M", "K"), trans_a, batch_a), _raw(("N", 2, "K", "P"), trans_b, batch_b)
    attributes = {"transA": trans_a, "transB": trans_b, "transBatchA": batch_a, "transBatchB": batch_b, "alpha": 0.5}
    assert exact(Case("FusedMatMul", MS, [In(F, a), In(F, b)], attributes)) == [(F, (N, 2, M, P))]


@pytest.mark.parametrize("a, b, attributes, shape", [
    (("K",), ("N", "K", "P"), {"transA": 1}, (N, P)),  # a vector is never transposed
    (("N", "M", "K"), ("K",), {"transB": 1}, (N, M)),
    (("M", "K"), ("N", 1, "K", "P"), {}, (N, 1, M, P)),  # batch dims broadcast
    (("K", "N", "M"), ("N", "K", "P"), {"transBatchA": 1, "transA": 1}, (N, M, P)),
    (("N", "M", "K"), ("K", "N", "P"), {"transBatchB": 1}, (N, M, P)),
    (("M", "N", "K"), ("N", "K", "P"), {"transBatchA": 1}, (N, M, P)),
])
def test_fused_matmul_vectors_and_broadcast_against_onnxruntime(a, b, attributes, shape):
    assert exact(Case("FusedMatMul", MS, [In(F, a), In(F, b)], attributes)) == [(F, shape)]


@pytest.mark.parametrize("a, b, attributes, shape", [
    (("N", "K", "M"), ("K", "P"), {"transA": 1}, (N, M, P)),
    (("N", "M", "K"), ("N", "P", "K"), {"transB": 1, "alpha": 2.0}, (N, M, P)),
])
def test_transpose_matmul_against_onnxruntime(a, b, attributes, shape):
    assert exact(Case("TransposeMatMul", MS, [In(F, a), In(F, b)], attributes)) == [(F, shape)]


def test_fused_matmul_activation_shares_the_shape_function():
    ctx = run_rule("FusedMatMulActivation", 1, [t(K, N, M), t(N, K, P)],
                   {"activation": "Relu", "transA": 1, "transBatchA": 1}, domain=MS)
    assert ctx.output_type(0) == t(N, M, P)


@pytest.mark.parametrize("shape, trans, trans_batch, operand", [
    ((M, N, K), False, True, (N, M, K)),
    ((K, N, M), True, True, (N, M, K)),
    ((N, K, M), True, False, (N, M, K)),
    ((K,), True, True, (K,)),
    (None, True, False, None),
])
def test_matmul_operand(shape, trans, trans_batch, operand):
    assert matmul_operand(shape, trans, trans_batch) == operand


def test_fused_matmul_errors_and_unknowns():
    with pytest.raises(InferenceError, match="inner dims 4 and 5"):
        run_rule("FusedMatMul", 1, [t(3, 4), t(5, 6)], domain=MS)
    with pytest.raises(InferenceError, match="inner dims"):
        run_rule("FusedMatMul", 1, [t(3, 4), t(3, 6)], {"transA": 1, "transB": 1}, domain=MS)
    assert run_rule("FusedMatMul", 1, [t(None), t(4, 5)], domain=MS).output_type(0).shape is None
    assert run_rule("FusedMatMul", 1, [t(N, M, None), t(N, None, P)], domain=MS).output_type(0) == t(N, M, P)
    assert run_rule("FusedMatMul", 1, [t(N, M, None), t(None, None, P)], domain=MS).output_type(0) == t(None, M, P)
    # onnxruntime's kernel runs batch transposes only on operands of one rank (3 or more)
    with pytest.raises(InferenceError, match="one rank, at least 3"):
        run_rule("FusedMatMul", 1, [t(N, M, K), t(K)], {"transB": 1, "transBatchB": 1}, domain=MS)


# ---------------------------------------------------------------------------------- SparseToDenseMatMul

def sparse(*shape):
    return SparseTensorType(1, shape)


@pytest.mark.parametrize("a, b, attributes, y", [
    (sparse(M, K), t(K, P), {}, t(M, P)),
    (sparse(K, M), t(K, P), {"transA": 1}, t(M, P)),
    (sparse(M, K), t(P, K), {"transB": 1, "alpha": 2.0}, t(M, P)),
    (sparse(K, M), t(P, K), {"transA": 1, "transB": 1}, t(M, P)),
    (None, t(K, P), {}, t(None, P)),
])
def test_sparse_to_dense_matmul(a, b, attributes, y):
    assert run_rule("SparseToDenseMatMul", 1, [a, b], attributes, domain=MS).output_type(0) == y


def test_sparse_to_dense_matmul_errors():
    with pytest.raises(InferenceError, match="inner dims 4 and 5"):
        run_rule("SparseToDenseMatMul", 1, [sparse(3, 4), t(5, 6)], domain=MS)
    with pytest.raises(InferenceError, match="rank 2"):
        run_rule("SparseToDenseMatMul", 1, [sparse(2, 3, 4), t(4, 6)], domain=MS)
    with pytest.raises(InferenceError):
        run_rule("SparseToDenseMatMul", 1, [sparse(3, 4), t(4, 6, 1)], domain=MS)


# ---------------------------------------------------------------------------------- MaxpoolWithMask

@pytest.mark.parametrize("attributes, shape", [
    ({"kernel_shape": [2, 2]}, (N, 3, H - 1, W - 1)),
    ({"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}, (N, 3, (H - 1) // 2 + 1, (W - 1) // 2 + 1)),
])
def test_maxpool_with_mask_against_onnxruntime(attributes, shape):
    case = Case("MaxpoolWithMask", MS, [In(F, ("N", 3, "H", "W")), In(I32, ("N", 3, "H", "W"))], attributes)
    assert exact(case) == [(F, shape)]


def test_maxpool_with_mask_needs_a_kernel():
    with pytest.raises(InferenceError, match="kernel_shape"):
        run_rule("MaxpoolWithMask", 1, [t(N, 3, H, W), t(N, 3, H, W, elem=6)], domain=MS)


# ---------------------------------------------------------------------------------- channels-last com.microsoft ops

@pytest.mark.parametrize("attributes, shape", [
    ({"kernel_shape": [2, 2]}, (N, H - 1, W - 1, 3)),
    ({"kernel_shape": [2, 2], "strides": [2, 2]}, (N, H // 2, W // 2, 3)),
    ({"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "dilations": [2, 2]}, (N, H - 2, W - 2, 3)),
    ({"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}, (N, (H + 1) // 2, (W + 1) // 2, 3)),
])
def test_nhwc_max_pool_against_onnxruntime(attributes, shape):
    assert exact(Case("NhwcMaxPool", MS, [In(U8, ("N", "H", "W", 3))], attributes)) == [(U8, shape)]


@pytest.mark.parametrize("op, attributes", [("NhwcConv", {}), ("NhwcFusedConv", {"activation": "Relu"})])
def test_nhwc_conv(op, attributes):
    # onnxruntime's inference of NhwcConv gives (N, 3, 5, 4) for these operands.
    assert run_rule(op, 1, [t(N, 5, 7, 2), t(4, 2, 3, 3)], attributes, domain=MS).output_type(0) == t(N, 3, 5, 4)
    padded = run_rule(op, 1, [t(N, H, W, 2), t(4, 2, 3, 3), t(4)], {**attributes, "pads": [1, 1, 1, 1]}, domain=MS)
    assert padded.output_type(0) == t(N, H, W, 4)
    with pytest.raises(InferenceError, match="rank 3"):
        run_rule(op, 1, [t(N, 2), t(4, 2)], attributes, domain=MS)
    with pytest.raises(InferenceError, match="channels"):
        run_rule(op, 1, [t(N, H, W, 3), t(4, 2, 3, 3)], attributes, domain=MS)


# ---------------------------------------------------------------------------------- ConvTransposeWithDynamicPads

@pytest.mark.parametrize("pads, attributes, shape", [
    ([1, 0, 1, 0], {"strides": [2, 2]}, (N, 3, 2 * H - 1, 2 * W + 1)),
    ([0, 0, 0, 0], {}, (N, 3, H + 2, W + 2)),
    ([1, 1, 1, 1], {"dilations": [2, 2], "output_padding": [1, 0], "strides": [2, 2]}, (N, 3, 2 * H + 2, 2 * W + 1)),
])
def test_conv_transpose_with_dynamic_pads_against_onnxruntime(pads, attributes, shape):
    case = Case("ConvTransposeWithDynamicPads", MS, [In(F, ("N", 2, "H", "W")), ones(2, 3, 3, 3), Const(pads, I64)],
                attributes)
    assert exact(case) == [(F, shape)]


def test_conv_transpose_with_dynamic_pads_and_bias_against_onnxruntime():
    case = Case("ConvTransposeWithDynamicPads", MS,
                [In(F, ("N", 4, "H", "W")), ones(4, 3, 3, 3), Const([0, 0, 0, 0], I64), ones(6)], {"group": 2})
    assert exact(case) == [(F, (N, 6, H + 2, W + 2))]


def test_conv_transpose_with_dynamic_pads_unknown_pads_are_sound():
    """Pads present but unknown (a graph input) leave the spatial dims open; known pads fix them."""
    fill = lambda shape, rng: np.array([1, 0, 1, 0], dtype=np.int64)  # noqa: E731
    case = Case("ConvTransposeWithDynamicPads", MS, [In(F, ("N", 2, "H", "W")), ones(2, 3, 3, 3), In(I64, (4,), fill)],
                {"strides": [2, 2]})
    verdict = check(case, SETTINGS)
    assert verdict.problems == []
    assert verdict.inferred == [(F, (N, 3, None, None))]
    inputs = [t(N, 2, H, W), t(2, 3, 3, 3), t(4, elem=7)]
    known = run_rule("ConvTransposeWithDynamicPads", 1, inputs, {"strides": [2, 2]}, domain=MS,
                data=[None, None, vec(1, 0, 1, 0)])
    assert known.output_type(0) == t(N, 3, 2 * H - 1, 2 * W + 1)
    unknown = run_rule("ConvTransposeWithDynamicPads", 1, inputs, {"strides": [2, 2]}, domain=MS)
    assert unknown.output_type(0) == t(N, 3, None, None)


def test_conv_transpose_with_dynamic_pads_without_pads_or_with_auto_pad():
    # onnxruntime's kernel refuses to run without Pads; the channels are still known.
    absent = run_rule("ConvTransposeWithDynamicPads", 1, [t(N, 2, H, W), t(2, 3, 3, 3)], domain=MS)
    assert absent.output_type(0) == t(N, 3, None, None)
    same = run_rule("ConvTransposeWithDynamicPads", 1, [t(N, 2, H, W), t(2, 3, 3, 3), t(4, elem=7)],
               {"auto_pad": "SAME_UPPER"}, domain=MS, data=[None, None, vec(0, 0, 0, 0)])
    assert same.output_type(0) == t(N, 3, None, None)


def test_conv_transpose_with_dynamic_pads_errors():
    with pytest.raises(InferenceError, match="4 values"):
        run_rule("ConvTransposeWithDynamicPads", 1, [t(N, 2, H, W), t(2, 3, 3, 3), t(2, elem=7)], domain=MS,
            data=[None, None, vec(1, 1)])
    with pytest.raises(InferenceError, match="channels"):
        run_rule("ConvTransposeWithDynamicPads", 1, [t(N, 4, H, W), t(2, 3, 3, 3)], domain=MS)
    with pytest.raises(InferenceError, match="spatial axes"):
        run_rule("ConvTransposeWithDynamicPads", 1, [t(N, 2, H, W), t(2, 3, 3)], domain=MS)
    with pytest.raises(InferenceError, match="rank 3 or more"):
        run_rule("ConvTransposeWithDynamicPads", 1, [t(N, 2), t(None)], domain=MS)
    with pytest.raises(InferenceError, match="group 0 must be positive"):
        run_rule("ConvTransposeWithDynamicPads", 1, [t(N, 2, H, W), t(2, 3, 3, 3)], {"group": 0}, domain=MS)
    assert run_rule("ConvTransposeWithDynamicPads", 1, [t(None), t(None)], domain=MS).output_type(0) == TensorType(1, None)


# ---------------------------------------------------------------------------------- soundness of optional inputs

@pytest.mark.parametrize("op, x, w", [("FusedConv", t(N, 4, H, W), t(6, 4, 3, 3)),
                                      ("NhwcFusedConv", t(N, H, W, 4), t(6, 4, 3, 3))])
def test_optional_bias_and_sum_present_but_unknown(op, x, w):
    """B and Z present with unknown shapes say nothing more than B and Z of known shapes, or none."""
    attributes = {"activation": "Relu"}
    absent = run_rule(op, 1, [x, w], attributes, domain=MS).output_type(0)
    unknown = run_rule(op, 1, [x, w, t(None), t(None)], attributes, domain=MS).output_type(0)
    known = run_rule(op, 1, [x, w, t(6), t(*absent.shape)], attributes, domain=MS).output_type(0)
    assert absent == unknown == known
    with pytest.raises(InferenceError):
        run_rule(op, 1, [x, w, t(5)], attributes, domain=MS)


# ---------------------------------------------------------------------------------- SparseToDenseMatMul, run

def _sparse_matmul_run(trans_a: int, trans_b: int, setting: dict) -> tuple:
    """opspec's answer and onnxruntime's result for a sparse (COO) A fed at run time."""

    a_dims, b_dims = (("K", "M") if trans_a else ("M", "K")), (("P", "K") if trans_b else ("K", "P"))
    node = helper.make_node("SparseToDenseMatMul", ["A", "B"], ["Y"], domain=MS, transA=trans_a, transB=trans_b)
    graph = helper.make_graph([node], "case", [helper.make_sparse_tensor_value_info("A", TensorProto.FLOAT, a_dims),
                                               helper.make_tensor_value_info("B", TensorProto.FLOAT, b_dims)],
                              [helper.make_empty_tensor_value_info("Y")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid(MS, 1)],
                              ir_version=10)
    y = opspec.infer_shapes(model).graph.output[0].type.tensor_type
    inferred = (y.elem_type, tuple(Sym(d.dim_param) if d.dim_param else d.dim_value for d in y.shape.dim))
    dense = np.zeros([setting[d] for d in a_dims], np.float32)
    dense.flat[[0, dense.size - 1]] = [1.0, 2.0]
    indices = np.ascontiguousarray(np.argwhere(dense).astype(np.int64))
    device = onnxruntime.OrtDevice.make("cpu", 0)
    a = onnxruntime.SparseTensor.sparse_coo_from_numpy(np.array(dense.shape, np.int64), dense[tuple(indices.T)].copy(),
                                                       indices, device)
    b = np.ones([setting[d] for d in b_dims], np.float32)
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    out = session.run_with_ort_values(["Y"], {"A": onnxruntime.OrtValue.ort_value_from_sparse_tensor(a),
                                              "B": onnxruntime.OrtValue.ortvalue_from_numpy(b)})
    return inferred, tuple(out[0].shape())


@pytest.mark.parametrize("trans_a, trans_b", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_sparse_to_dense_matmul_against_onnxruntime(trans_a, trans_b):
    for setting in SETTINGS:
        inferred, real = _sparse_matmul_run(trans_a, trans_b, setting)
        assert inferred == (F, (M, P))
        assert real == (setting["M"], setting["P"])
