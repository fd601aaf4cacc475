"""onnxruntime's assorted com.microsoft operators: the dropout fusions, IsAllFinite, MurmurHash3, Range,
Pad, Unique, CropAndResize, GridSample, UnfoldTensor, DynamicTimeWarping, Tokenizer, BifurcationDetector,
CDist, Snpe and the ops bound to standard rules (ExpandDims, TorchEmbedding, Trilu, Inverse, SampleOp,
GatherND).

Ops the CPU execution provider runs are held against onnxruntime. BiasDropout, BitmaskBiasDropout,
BitmaskDropout, IsAllFinite, TorchEmbedding and Snpe have no CPU kernel and are checked against the
rule alone, with cases taken from onnxruntime's inference functions and its CUDA kernels."""
from __future__ import annotations

from functools import partial

import numpy as np
import ort_cases
import pytest
from onnx import TensorProto
from ort_cases import MS, outputs
from ort_oracle import F, I32, I64, Case, Const, In, Operand

from opspec.runtime.contract import Data, InferenceError, TensorType
from opspec.runtime.shape import Sym
from opspec.runtime.testing import INT32, INT64, run_rule, t, vec

STRING, UINT32, BOOL = TensorProto.STRING, TensorProto.UINT32, TensorProto.BOOL
A, B, N = Sym("A"), Sym("B"), Sym("N")
SETTINGS = [{"A": 3, "B": 2, "N": 4}, {"A": 5, "B": 1, "N": 7}]
exact = partial(ort_cases.exact, settings=SETTINGS)
sound = partial(ort_cases.sound, settings=SETTINGS)


def zeros(shape, rng):
    return np.zeros(shape, np.int64)


def words(shape, rng):
    vocabulary = np.array(["a b", "c d e", "f", "gh ij"], dtype=object)
    return vocabulary[rng.integers(0, 4, shape)]


# ------------------------------------------------------------------------------------------- dropout fusions

def test_bias_dropout_mask_takes_the_data_shape():
    assert outputs("BiasDropout", [t(A, 8), t(8)], count=2) == [t(A, 8), t(A, 8, elem=BOOL)]
    assert outputs("BiasDropout", [t(A, 8), t(8), t(A, 8), t(), t(elem=BOOL)]) == [t(A, 8), t(A, 8, elem=BOOL)]
    assert outputs("BiasDropout", [t(A, 8), t(8)], count=1) == [t(A, 8)]


@pytest.mark.parametrize("op, inputs", [("BitmaskDropout", [t(A, 40)]), ("BitmaskBiasDropout", [t(A, 40), t(40)])])
def test_bitmask_dropout_packs_32_elements_per_word(op, inputs):
    output, mask = outputs(op, inputs, count=2)
    assert output == t(A, 40)
    assert mask.elem == UINT32 and len(mask.shape) == 1
    assert mask.shape[0].evaluate({"A": 3}) == 4  # ceil(120 / 32)
    assert outputs(op, [t(3, 32)] + inputs[1:], count=2)[1] == t(3, elem=UINT32)
    assert outputs(op, [t(None)] + inputs[1:], count=2)[1] == TensorType(UINT32, (None,))


def test_bitmask_dropout_unknown_dim_leaves_the_word_count_unknown():
    assert outputs("BitmaskDropout", [t(None, 8)], count=2)[1] == TensorType(UINT32, (None,))


# --------------------------------------------------------------------------------------- IsAllFinite, hash

def test_is_all_finite_is_a_scalar_bool():
    assert outputs("IsAllFinite", [t(A, 3), t(2, elem=10)]) == [t(elem=BOOL)]
    assert outputs("IsAllFinite", [t(None)], {"isnan_only": 1}) == [t(elem=BOOL)]
    with pytest.raises(InferenceError, match="isinf_only and isnan_only"):
        outputs("IsAllFinite", [t(3)], {"isinf_only": 1, "isnan_only": 1})


@pytest.mark.parametrize("positive, elem", [(1, UINT32), (0, I32)])
@pytest.mark.parametrize("source", [I32, I64, F])
def test_murmur_hash3_against_onnxruntime(positive, elem, source):
    inferred = exact(Case("MurmurHash3", MS, [In(source, ("A", "B"))], {"positive": positive}))
    assert inferred == [(elem, (A, B))]


def test_murmur_hash3_hashes_strings():
    inferred = exact(Case("MurmurHash3", MS, [In(STRING, ("A",), fill=words)], {"seed": 7}))
    assert inferred == [(UINT32, (A,))]


# ------------------------------------------------------------------------------------------------- Range

@pytest.mark.parametrize("values, length", [((2, 9), 7), ((9, 2), 0), ((1, 10, 3), 3), ((10, 1, -4), 3)])
def test_range_against_onnxruntime(values, length):
    inferred = exact(Case("Range", MS, [Const(v, I64) for v in values]))
    assert inferred == [(I64, (length,))]


def test_range_float_one_element_vectors():
    inferred = exact(Case("Range", MS, [Const([2.0]), Const([9.0]), Const([2.5])]))
    assert inferred == [(F, (3,))]


def test_range_unknown_bounds_give_a_fresh_length():
    inferred = sound(Case("Range", MS, [In(I64, ()), In(I64, ())]))
    assert inferred[0][0] == I64 and len(inferred[0][1]) == 1


def test_range_data_and_soundness():
    ctx = run_rule("Range", 1, [t(elem=INT64), t(elem=INT64)], domain=MS, data=[vec(2), vec(6)])
    assert ctx.output_type(0) == t(4, elem=INT64) and ctx.output_data(0) == Data((4,), (2, 3, 4, 5))
    # a delta that is present but unknown is not the default step of 1
    ctx = run_rule("Range", 1, [t(elem=INT64)] * 3, domain=MS, data=[vec(2), vec(6), None], names=["s", "l", "d"])
    assert ctx.output_type(0).shape == (None,) and ctx.output_data(0) is None
    with pytest.raises(InferenceError, match="delta must not be zero"):
        run_rule("Range", 1, [t(elem=INT64)] * 3, domain=MS, data=[vec(2), vec(6), vec(0)])


def test_range_reads_any_one_element_bounds():
    """onnxruntime's inference reads the first element of any bound; its kernel later wants a scalar or (1,)."""
    ctx = run_rule("Range", 1, [t(1, 1, elem=INT64), t(1, elem=INT64), t(elem=INT64)], domain=MS,
              data=[Data((1, 1), (1,)), vec(10), vec(3)])
    assert ctx.output_type(0) == t(3, elem=INT64) and ctx.output_data(0) == Data((3,), (1, 4, 7))
    with pytest.raises(InferenceError, match="scalar"):
        run_rule("Range", 1, [t(2, elem=INT64), t(elem=INT64)], domain=MS)


# --------------------------------------------------------------------------------------------------- Pad

@pytest.mark.parametrize("pads, shape", [([1, 0, 1, 2], (A + 2, B + 2)), ([[0, 1, 0, 1]], (A, B + 2)),
                                         ([-1, 0, 0, 0], (A - 1, B))])
def test_pad_against_onnxruntime(pads, shape):
    inferred = exact(Case("Pad", MS, [In(F, ("A", "B")), Const(pads, I64)]))
    assert inferred == [(F, shape)]


@pytest.mark.parametrize("mode", ["reflect", "edge"])
def test_pad_modes_against_onnxruntime(mode):
    assert exact(Case("Pad", MS, [In(F, ("A", 4)), Const([0, 1, 0, 2], I64)], {"mode": mode})) == [(F, (A, 7))]


def test_pad_with_value_and_unknown_pads():
    assert exact(Case("Pad", MS, [In(F, ("A", 4)), Const([1, 1, 1, 1], I64), Const([3.0])]))[0] == (F, (A + 2, 6))
    assert sound(Case("Pad", MS, [In(F, ("A", 4)), In(I64, (4,), fill=zeros)])) == [(F, (None, None))]


def test_pad_errors():
    with pytest.raises(InferenceError, match=r"must be \(2 \* rank,\) or \(1, 2 \* rank\)"):
        run_rule("Pad", 1, [t(3, 4), t(2, 4, elem=INT64)], domain=MS)
    with pytest.raises(InferenceError, match="a begin and an end for each axis"):
        run_rule("Pad", 1, [t(3, 4), t(6, elem=INT64)], domain=MS)
    with pytest.raises(InferenceError, match="below zero"):
        run_rule("Pad", 1, [t(3, 4), t(4, elem=INT64)], domain=MS, data=[None, vec(-2, 0, -2, 0)])


# ------------------------------------------------------------------------------------------------ Unique

def test_unique_against_onnxruntime():
    (y_elem, y), (idx_elem, idx), (counts_elem, counts) = exact(Case("Unique", MS, [In(F, ("N",))], outputs=3))
    assert (y_elem, idx_elem, counts_elem) == (F, I64, I64)
    assert idx == (N,) and len(y) == 1 and y == counts  # one fresh length shared by y and counts


# ----------------------------------------------------------------------------------------- CropAndResize

def test_crop_and_resize_against_onnxruntime():
    image = In(F, ("B", 3, 8, 8))
    rois = In(F, ("N", 4))
    indices = In(I32, ("N",), fill=lambda shape, rng: np.zeros(shape, np.int32))
    inferred = exact(Case("CropAndResize", MS, [image, rois, indices, Const([3, 5], I32)]))
    assert inferred == [(F, (N, 3, 3, 5))]
    inferred = exact(Case("CropAndResize", MS, [image, rois, indices, Const([2, 2], I32)], {"mode": "nearest"}))
    assert inferred == [(F, (N, 3, 2, 2))]


def test_crop_and_resize_unknown_size_and_errors():
    ctx = run_rule("CropAndResize", 1, [t(B, 3, 8, 8), t(N, 4), t(N, elem=INT32), t(2, elem=INT32)], domain=MS)
    assert ctx.output_type(0) == t(N, 3, None, None)
    with pytest.raises(InferenceError, match="4 coordinates"):
        run_rule("CropAndResize", 1, [t(B, 3, 8, 8), t(N, 5), t(N, elem=INT32), t(2, elem=INT32)], domain=MS)
    with pytest.raises(InferenceError, match="region counts"):
        run_rule("CropAndResize", 1, [t(B, 3, 8, 8), t(4, 4), t(3, elem=INT32), t(2, elem=INT32)], domain=MS)
    with pytest.raises(InferenceError, match="must be positive"):
        run_rule("CropAndResize", 1, [t(B, 3, 8, 8), t(4, 4), t(4, elem=INT32), t(2, elem=INT32)], domain=MS,
            data=[None, None, None, vec(0, 5)])
    with pytest.raises(InferenceError, match="X: "):
        run_rule("CropAndResize", 1, [t(3, 8, 8), t(4, 4), t(4, elem=INT32), t(2, elem=INT32)], domain=MS)


# ------------------------------------------------------------------------------------ GridSample, Unfold

@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_against_onnxruntime(mode):
    inferred = exact(Case("GridSample", MS, [In(F, ("B", 2, 5, 6)), In(F, ("B", "A", "N", 2))], {"mode": mode}))
    assert inferred == [(F, (B, 2, A, N))]


def test_grid_sample_needs_4d_operands():
    assert outputs("GridSample", [t(None), t(None)]) == [t(None, None, None, None)]
    with pytest.raises(InferenceError, match="Grid: "):
        outputs("GridSample", [t(1, 2, 4, 4), t(1, 3, 3, 3, 3)])


@pytest.mark.parametrize("attributes, shape", [({"size": 3}, (A, 8, 3)), ({"dim": 1, "size": 4, "step": 3}, (A, 3, 4)),
                                               ({"dim": 0, "size": 2, "step": 2}, None)])
def test_unfold_tensor_against_onnxruntime(attributes, shape):
    inferred = sound(Case("UnfoldTensor", MS, [In(F, ("A", 10))], attributes))
    if shape is not None:
        assert inferred == [(F, shape)]
    else:  # a symbolic axis gives a symbolic window count
        assert inferred[0][1][1:] == (10, 2)


@pytest.mark.parametrize("step", [1, 2])
def test_unfold_tensor_of_size_0_runs_where_the_axis_is_unknown(step):
    # onnxruntime refuses size 0 only where it knows the axis length; otherwise the kernel gives
    # length // step + 1 empty windows
    inferred = sound(Case("UnfoldTensor", MS, [In(F, ("A", 4))], {"dim": 0, "size": 0, "step": step}))
    assert inferred[0][1][1:] == (4, 0)


def test_unfold_tensor_errors():
    with pytest.raises(InferenceError, match="at most axis"):
        outputs("UnfoldTensor", [t(2, 3)], {"size": 4})
    with pytest.raises(InferenceError, match="must be positive"):
        outputs("UnfoldTensor", [t(2, 3)], {"size": 0})
    with pytest.raises(InferenceError, match="must not be negative"):
        outputs("UnfoldTensor", [t(None, 3)], {"size": -1})
    with pytest.raises(InferenceError, match="step 0 must be positive"):
        outputs("UnfoldTensor", [t(2, 3)], {"size": 2, "step": 0})
    assert outputs("UnfoldTensor", [t(None)], {"size": 2}) == [t(None)]


# ---------------------------------------------------------------------------- DynamicTimeWarping, CDist

@pytest.mark.parametrize("shape", [("A", "N"), (1, "A", "N")])
def test_dynamic_time_warping_against_onnxruntime(shape):
    inferred = exact(Case("DynamicTimeWarping", MS, [In(F, shape)]))
    assert inferred[0][0] == I32 and inferred[0][1][0] == 2


@pytest.mark.parametrize("metric", ["sqeuclidean", "euclidean"])
def test_cdist_against_onnxruntime(metric):
    inferred = exact(Case("CDist", MS, [In(F, ("A", 4)), In(F, ("N", 4))], {"metric": metric}))
    assert inferred == [(F, (A, N))]


# ----------------------------------------------------------------------------------------------- Tokenizer

TOKENS = {"mark": 0, "mincharnum": 1, "pad_value": "#", "separators": [" "]}


@pytest.mark.parametrize("shape", [(3,), (2, 3)])
@pytest.mark.parametrize("mark", [0, 1])
def test_tokenizer_against_onnxruntime(shape, mark):
    inferred = exact(Case("Tokenizer", MS, [In(STRING, shape, fill=words)], dict(TOKENS, mark=mark)))
    assert inferred[0][0] == STRING and inferred[0][1][:-1] == shape


@pytest.mark.parametrize("shape, expected", [((0,), (0,)), ((2, 0), (2, 0)), ((0, 3), (0, 0))])
def test_tokenizer_empty_input_keeps_its_rank(shape, expected):
    assert exact(Case("Tokenizer", MS, [In(STRING, shape, fill=words)], TOKENS), settings=[{}]) == [(STRING, expected)]


def test_tokenizer_symbolic_dims_leave_the_rank_unknown():
    # a symbolic dim may be 0, and an empty input gives no token axis
    assert sound(Case("Tokenizer", MS, [In(STRING, ("A",), fill=words)], TOKENS)) == [(STRING, None)]
    assert sound(Case("Tokenizer", MS, [In(STRING, ("A", 0), fill=words)], TOKENS)) == [(STRING, (A, 0))]
    with pytest.raises(InferenceError, match=r"must be \[C\] or \[N, C\]"):
        outputs("Tokenizer", [t(1, 2, 3, elem=STRING)], TOKENS)


# ------------------------------------------------------------------------------------- BifurcationDetector

def test_bifurcation_detector_against_onnxruntime():
    without = [In(I64, ("A",)), In(I64, ("N",)), In(I64, (1,), fill=zeros)]
    assert exact(Case("BifurcationDetector", MS, without, outputs=2)) == [(I64, (N,)), (I64, (1,))]
    predicted: list[Operand] = [In(I64, (5,)), In(I64, ("N",)), Const([0], I64), In(I64, (6,))]
    inferred = exact(Case("BifurcationDetector", MS, predicted, outputs=2))
    assert len(inferred[0][1]) == 1 and inferred[1] == (I64, (1,))


def test_bifurcation_detector_present_but_unknown_predictions():
    ctx = run_rule("BifurcationDetector", 1, [t(5, elem=INT64), t(N, elem=INT64), t(elem=INT64), None], domain=MS,
              names=["s", "c", "p", "pred"])
    assert ctx.output_type(0) == TensorType(INT64, (None,))
    ctx = run_rule("BifurcationDetector", 1, [t(5, elem=INT64), t(N, elem=INT64), t(elem=INT64)], domain=MS)
    assert ctx.output_type(0) == t(N, elem=INT64)


# --------------------------------------------------------------------------------- standard rules reused

@pytest.mark.parametrize("axis, shape", [(0, (1, A, B)), (1, (A, 1, B)), (2, (A, B, 1)), (-1, (A, B, 1)),
                                         (-3, (1, A, B))])
def test_expand_dims_against_onnxruntime(axis, shape):
    assert exact(Case("ExpandDims", MS, [In(F, ("A", "B")), Const(axis, I32)])) == [(F, shape)]


def test_expand_dims_unknown_axis_and_data():
    assert sound(Case("ExpandDims", MS, [In(F, ("A", "B")), In(I32, (), fill=lambda s, r: np.ones(s, np.int32))])) \
        == [(F, (None, None, None))]
    ctx = run_rule("ExpandDims", 1, [t(2, elem=INT64), t(elem=INT32)], domain=MS, data=[vec(A, 4), vec(0)])
    assert ctx.output_type(0) == t(1, 2, elem=INT64) and ctx.output_data(0) == Data((1, 2), (A, 4))
    with pytest.raises(InferenceError):
        run_rule("ExpandDims", 1, [t(2, 3), t(elem=INT32)], domain=MS, data=[None, vec(3)])


def test_torch_embedding_appends_the_embedding_size():
    assert outputs("TorchEmbedding", [t(10, 4), t(A, B, elem=INT64)]) == [t(A, B, 4)]
    assert outputs("TorchEmbedding", [t(10, 4), t(A, elem=INT64), t(elem=INT64), t(elem=BOOL)]) == [t(A, 4)]


@pytest.mark.parametrize("op, attributes", [("Trilu", {}), ("Trilu", {"upper": 0}), ("Inverse", {})])
def test_matrix_batches_against_onnxruntime(op, attributes):
    assert exact(Case(op, MS, [In(F, ("B", 3, 3))], attributes)) == [(F, (B, 3, 3))]


def test_trilu_with_k_and_rank_check():
    assert exact(Case("Trilu", MS, [In(F, ("A", "N")), Const(1, I64)])) == [(F, (A, N))]
    with pytest.raises(InferenceError):
        outputs("Inverse", [t(3)])


def test_sample_op_and_gather_nd_against_onnxruntime():
    assert exact(Case("SampleOp", MS, [In(F, ("A", 2))])) == [(F, (A, 2))]
    indices = In(I64, ("N", 1), fill=zeros)
    assert exact(Case("GatherND", MS, [In(F, ("A", 3)), indices])) == [(F, (N, 3))]
    indices = In(I32, ("N", 2), fill=lambda s, r: np.zeros(s, np.int32))
    assert exact(Case("GatherND", MS, [In(F, ("A", 3, 2)), indices])) == [(F, (N, 2))]


# ------------------------------------------------------------------------------------------------- Snpe

def test_snpe_outputs_take_the_input_type_only():
    assert outputs("Snpe", [t(A, 3), t(2)], {"DLC": "model"}, count=2) == [t(None), t(None)]
