"""The default-domain operators only onnxruntime registers: removed experimental ONNX operators,
memory copies and TensorRT plugins.

Version 1 of the removed operators runs on onnxruntime's CPU provider where the model's opset
has no standard schema of the name (opset 9 and lower), so those are held against onnxruntime;
their deprecated version 10 schemas are refused by onnxruntime, and GivenTensorFill and the
TensorRT plugins have no CPU kernel: those are checked against the rules alone."""
from __future__ import annotations

from functools import partial

import ort_cases
import pytest
from ort_oracle import F, I32, I64, Case, Const, In, Operand, check

from opspec.runtime.contract import Data, InferenceError
from opspec.runtime.shape import Sym
from opspec.runtime.testing import FLOAT, INT32, run_rule, t, vec

N, C, H, W, B = Sym("N"), Sym("C"), Sym("H"), Sym("W"), Sym("B")
SETTINGS = [{"N": 2, "C": 3, "H": 7, "W": 9}, {"N": 1, "C": 2, "H": 5, "W": 6}]
exact = partial(ort_cases.exact, settings=SETTINGS)
OPSET_9 = {"": 9, "com.microsoft": 1}
OPSET_8 = {"": 8, "com.microsoft": 1}


@pytest.mark.parametrize("op, attributes, opsets", [
    ("Affine", {"alpha": 2.0, "beta": 1.0}, OPSET_9),
    ("ImageScaler", {"bias": [0.1, 0.2, 0.3], "scale": 2.0}, OPSET_9),
    ("MeanVarianceNormalization", {"across_channels": 1}, OPSET_8),
    ("ParametricSoftplus", {"alpha": 1.0, "beta": 2.0}, OPSET_9),
    ("Scale", {"scale": 3.0}, OPSET_9),
    ("ScaledTanh", {"alpha": 1.0, "beta": 0.5}, OPSET_9),
    ("ThresholdedRelu", {"alpha": 0.5}, OPSET_9),
])
def test_removed_elementwise_ops_against_onnxruntime(op, attributes, opsets):
    shape = ("N", 3, "H", "W") if op == "ImageScaler" else ("N", "C", "H", "W")
    settings = [dict(s, C=3) for s in SETTINGS] if op == "ImageScaler" else SETTINGS
    inferred = exact(Case(op, "", [In(F, shape)], attributes, opsets=opsets), settings=settings)
    assert inferred == [(F, tuple(Sym(d) if isinstance(d, str) else d for d in shape))]


@pytest.mark.parametrize("op", ["MemcpyFromHost", "MemcpyToHost"])
@pytest.mark.parametrize("elem", [F, I64])
def test_memory_copies_against_onnxruntime(op, elem):
    assert exact(Case(op, "", [In(elem, ("N", "C"))])) == [(elem, (N, C))]


def test_memory_copies_pass_a_sequence_through():
    from opspec.runtime.contract import SequenceType
    sequence = SequenceType(t(N, C))
    assert run_rule("MemcpyToHost", 1, [sequence]).output_type(0) == sequence


# ---------------------------------------------------------------------------------- Crop

@pytest.mark.parametrize("attributes, out", [
    ({"border": [1, 1, 1, 1]}, (N, C, H - 2, W - 2)),
    ({"border": [2, 1, 0, 3]}, (N, C, H - 4, W - 2)),
    ({"border": [1, 2, 0, 1], "scale": [2, 3]}, (N, C, 2, 3)),
    ({"border": [0, 3, 0, 3], "scale": [2, 2]}, (N, C, 2, 2)),  # with a window the far borders do not count
])
def test_crop_against_onnxruntime(attributes, out):
    assert exact(Case("Crop", "", [In(F, ("N", "C", "H", "W"))], attributes, opsets=OPSET_9)) == [(F, out)]


@pytest.mark.parametrize("version", [1, 10])
def test_crop_versions_share_the_rule(version):
    ctx = run_rule("Crop", version, [t(2, 3, 8, 9)], {"border": [1, 2, 3, 4]})
    assert ctx.output_type(0) == t(2, 3, 2, 5)
    assert run_rule("Crop", version, [None], {"border": [0, 0, 0, 0], "scale": [4, 4]},
               names=["x"]).output_type(0) == t(None, None, 4, 4, elem=0)


@pytest.mark.parametrize("shape, attributes, message", [
    (t(3, 8, 9), {"border": [1, 1, 1, 1]}, "rank 4"),
    (t(1, 3, 8, 9), {}, "'border' must hold 4 values"),
    (t(1, 3, 8, 9), {"border": [1, 1]}, "'border' must hold 4 values"),
    (t(1, 3, 8, 9), {"border": [-1, 0, 0, 0]}, "must not be negative"),
    (t(1, 3, 8, 9), {"border": [1, 1, 1, 1], "scale": [2]}, "'scale' must hold 2 values"),
    (t(1, 3, 5, 9), {"border": [0, 3, 0, 3]}, "height 5 is smaller than its two borders"),
    (t(1, 3, 5, 6), {"border": [3, 1, 4, 1]}, "width 6 is smaller than its two borders"),
    (t(1, 3, 5, 6), {"border": [1, 1, 1, 1], "scale": [9, 2]}, "height 5 is smaller than the border 1 plus the window 9"),
])
def test_crop_refuses_what_onnxruntime_refuses(shape, attributes, message):
    with pytest.raises(InferenceError, match=message):
        run_rule("Crop", 1, [shape], attributes)


# ---------------------------------------------------------------------------------- DynamicSlice

def test_dynamic_slice_against_onnxruntime():
    inputs: list[Operand] = [In(F, ("N", 10)), Const([1, -4], I64), Const([2**31 - 1, -1], I64)]
    assert exact(Case("DynamicSlice", "", inputs, opsets=OPSET_9)) == [(F, (N - 1, 3))]
    inputs = [In(F, ("N", 10)), Const([2], I32), Const([5], I32), Const([-1], I32)]
    assert exact(Case("DynamicSlice", "", inputs, opsets=OPSET_9)) == [(F, (N, 3))]


def test_dynamic_slice_unknown_bounds_leave_the_sliced_dims_unknown():
    verdict = check(Case("DynamicSlice", "", [In(F, ("N", 10)), In(I64, (1,)), In(I64, (1,)), Const([1], I64)],
                         opsets=OPSET_9), [{"N": 2}, {"N": 3}])
    assert verdict.problems == []
    assert verdict.inferred == [(F, (N, None))]


# ---------------------------------------------------------------------------------- GivenTensorFill

def test_given_tensor_fill_shape_attribute_wins():
    assert run_rule("GivenTensorFill", 1, [t(2, 3)], {"shape": [4, 5], "extra_shape": [6]}).output_type(0) == t(4, 5)
    assert run_rule("GivenTensorFill", 10, [None], {"shape": [4]}, names=[""]).output_type(0) == t(4, elem=0)


def test_given_tensor_fill_input_shape_and_extra_shape():
    assert run_rule("GivenTensorFill", 1, [t(N, 3)], {"extra_shape": [2]}).output_type(0) == t(N, 3, 2)
    assert run_rule("GivenTensorFill", 1, [t(N, 3)]).output_type(0) == t(N, 3)
    assert run_rule("GivenTensorFill", 1, [None], names=[""]).output_type(0) == t(None, elem=0)


def test_given_tensor_fill_input_as_shape_reads_the_values():
    known = run_rule("GivenTensorFill", 1, [t(2)], {"input_as_shape": 1, "extra_shape": [5]},
                data=[Data((2,), (3.0, 4.0))])
    assert known.output_type(0) == t(3, 4, 5)
    # present but of unknown contents: only the count of dims is known
    unknown = run_rule("GivenTensorFill", 1, [t(2)], {"input_as_shape": 1, "extra_shape": [5]})
    assert unknown.output_type(0) == t(None, None, 5)
    assert run_rule("GivenTensorFill", 1, [t(None)], {"input_as_shape": 1}).output_type(0) == t(None)


@pytest.mark.parametrize("attributes", [{"shape": [2, -1]}, {"extra_shape": [-3]}])
def test_given_tensor_fill_refuses_negative_dims(attributes):
    with pytest.raises(InferenceError, match="negative"):
        run_rule("GivenTensorFill", 1, [t(2)], attributes)


# ---------------------------------------------------------------------------------- TensorRT plugins

NMS = {"background_class": -1, "box_coding": 0, "iou_threshold": 0.5, "max_output_boxes": 100,
       "plugin_version": "1", "score_activation": 0, "score_threshold": 0.25}


def test_efficient_nms_fixed_size_detections():
    ctx = run_rule("EfficientNMS_TRT", 1, [t(B, 1000, 4, elem=10), t(B, 1000, 80, elem=10)], NMS, output_count=4)
    assert [ctx.output_type(i) for i in range(4)] == [
        t(B, 1, elem=INT32), t(B, 100, 4, elem=10), t(B, 100, elem=10), t(B, 100, elem=INT32)]
    ctx = run_rule("EfficientNMS_TRT", 1, [None, t(B, 1000, 80)], NMS, names=["b", "s"], output_count=4)
    assert ctx.output_type(1) == t(None, 100, 4, elem=FLOAT)


@pytest.mark.parametrize("inputs, attributes, message", [
    ([t(B, 10, 4), t(B, 10, 2)], dict(NMS, max_output_boxes=0), "max_output_boxes"),
    ([t(), t(B, 10, 2)], NMS, "rank"),
])
def test_efficient_nms_refusals(inputs, attributes, message):
    with pytest.raises(InferenceError, match=message):
        run_rule("EfficientNMS_TRT", 1, inputs, attributes, output_count=4)


@pytest.mark.parametrize("op, attributes", [
    ("MultilevelCropAndResize_TRT", {"image_size": [640, 640], "plugin_version": "1", "pooled_size": 7}),
    ("PyramidROIAlign_TRT", {"plugin_version": "1", "pooled_size": 7}),
])
def test_roi_plugins_pool_one_patch_per_box(op, attributes):
    maps = [t(B, 256, 160, 160), t(B, 256, 80, 80), t(B, 256, 40, 40), t(B, 256, 20, 20)]
    assert run_rule(op, 1, [t(B, 1000, 4), *maps], attributes).output_type(0) == t(B, 1000, 256, 7, 7)
    unknown = run_rule(op, 1, [None, None, *maps[1:]], attributes, names=["b", "f0", "f1", "f2", "f3"])
    assert unknown.output_type(0) == t(None, None, None, 7, 7)
    with pytest.raises(InferenceError, match="pooled_size"):
        run_rule(op, 1, [t(B, 1000, 4), *maps], dict(attributes, pooled_size=0))
    with pytest.raises(InferenceError, match="rank"):
        run_rule(op, 1, [t(1000), *maps], attributes)


def test_disentangled_attention_keeps_the_c2c_shape():
    inputs = [t(B, 128, 128, elem=10), t(B, 128, 256, elem=10), t(B, 128, 256, elem=10)]
    ctx = run_rule("DisentangledAttention_TRT", 1, inputs, {"factor": 0.1, "span": 128})
    assert ctx.output_type(0) == t(B, 128, 128, elem=10)


def test_given_tensor_fill_known_values_vs_unknown_is_sound():
    """input_as_shape with a known 1-D input refines only what the values say."""
    values = run_rule("GivenTensorFill", 1, [t(3)], {"input_as_shape": 1}, data=[vec(2, -1, 4)])
    assert values.output_type(0) == t(2, None, 4)  # a negative value states no dim


def test_gru_unit_hidden_state_keeps_its_shape():
    # no kernel in onnxruntime: the new hidden state has the previous one's shape
    inputs = [t(1, B, 16), t(1, B, 48), t(B), t(1)]
    assert run_rule("GRUUnit", 1, inputs, {"drop_states": 0}).output_type(0) == t(1, B, 16)
