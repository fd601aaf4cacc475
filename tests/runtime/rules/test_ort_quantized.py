"""onnxruntime's QOperator ops (QLinearAdd, QGemm, QLinearConv ...): each rule held against
onnxruntime's CPU runs at several sizes, and the error and soundness cases held by hand."""
from __future__ import annotations

from functools import partial

import numpy as np
import ort_cases
import pytest
from ort_cases import MS, ort_inference, scalar
from ort_oracle import BOOL, F, F16, I8, I32, U8, Case, Const, In

from opspec.runtime.contract import InferenceError
from opspec.runtime.shape import Sym
from opspec.runtime.testing import run_rule, t

I16, U16, U32 = 5, 4, 12
B, M, N, H = Sym("B"), Sym("M"), Sym("N"), Sym("H")
SIZES = [{"B": 2, "M": 3, "N": 4, "H": 6}, {"B": 1, "M": 5, "N": 2, "H": 9}]
exact = partial(ort_cases.exact, settings=SIZES)


def params(elem: int, zero_point: bool = True) -> list:
    """A scale and (optionally) a zero point."""
    return [scalar(0.1, F), scalar(1, elem) if zero_point else None]


# ---------------------------------------------------------------------------------- elementwise

@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("elem", [U8, I8])
@pytest.mark.parametrize("a, b", [(("B", "M", 1), ("M", "N")), ((), ("M", "N")), (("M", "N"), (1,))])
def test_qlinear_binary_broadcasts_the_two_operands(op, elem, a, b):
    exact(Case(op, MS, [In(elem, a), *params(elem), In(elem, b), *params(elem), *params(elem)]))


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
def test_qlinear_binary_without_the_output_zero_point(op):
    exact(Case(op, MS, [In(U8, ("B", 1)), *params(U8), In(U8, ("N",)), *params(U8), scalar(0.2, F)]))


def test_qlinear_binary_refuses_operands_that_do_not_broadcast():
    with pytest.raises(InferenceError, match=r"\(2, 3\).*\(4,\)"):
        run_rule("QLinearAdd", 1, [t(2, 3, elem=U8), t(), t(elem=U8), t(4, elem=U8), t(), t(elem=U8), t(), t(elem=U8)],
            domain=MS)


@pytest.mark.parametrize("elem", [U8, I8])
def test_qlinear_where_broadcasts_condition_and_both_operands(elem):
    exact(Case("QLinearWhere", MS, [In(BOOL, ("M", 1)), In(elem, ("B", "M", 1)), *params(elem),
                                    In(elem, ("N",)), *params(elem), *params(elem)]))


@pytest.mark.parametrize("elem", [U8, I8])
@pytest.mark.parametrize("a, b", [((2, 3, 1), (4,)), ((), (3, 4)), ((3, 1), (1, 5))])
def test_mul_integer_agrees_with_onnxruntimes_inference(capfd, elem, a, b):
    theirs = ort_inference(capfd, Case("MulInteger", MS, [In(elem, a), In(elem, ()), In(elem, b), In(elem, ())]))
    ours = run_rule("MulInteger", 1, [t(*a, elem=elem), t(elem=elem), t(*b, elem=elem), t(elem=elem)], domain=MS)
    assert (ours.output_type(0).elem, ours.output_type(0).shape) == theirs


def test_mul_integer_is_an_int32_broadcast():
    # onnxruntime's CPU provider has no MulInteger kernel: the rule is held to its inference function
    ctx = run_rule("MulInteger", 1, [t(B, M, 1, elem=I8), t(elem=I8), t(M, N, elem=I8), t(elem=I8)], domain=MS)
    assert ctx.output_type(0) == t(B, M, N, elem=I32)
    with pytest.raises(InferenceError, match="do not broadcast"):
        run_rule("MulInteger", 1, [t(2, elem=I8), t(elem=I8), t(3, elem=I8), t(elem=I8)], domain=MS)


@pytest.mark.parametrize("op, attrs", [("QLinearLeakyRelu", {}), ("QLinearLeakyRelu", {"alpha": 0.2}),
                                       ("QLinearSigmoid", {})])
@pytest.mark.parametrize("elem", [U8, I8])
def test_qlinear_activations_keep_the_shape(op, attrs, elem):
    exact(Case(op, MS, [In(elem, ("B", "M", "N")), *params(elem), *params(elem)], attrs))


def test_qlinear_sigmoid_without_the_input_zero_point():
    exact(Case("QLinearSigmoid", MS, [In(U8, ("B", "N")), scalar(0.1, F), None, *params(U8)]))


@pytest.mark.parametrize("attrs", [{"opset": 13}, {"opset": 13, "axis": 1}, {"opset": 12}, {"opset": 11, "axis": 0}])
@pytest.mark.parametrize("elem", [U8, I8])
def test_qlinear_softmax_keeps_the_shape_for_every_opset_and_axis(attrs, elem):
    exact(Case("QLinearSoftmax", MS, [In(elem, ("B", "M", 4)), *params(elem), *params(elem)], attrs))


def test_qlinear_softmax_without_the_input_zero_point():
    exact(Case("QLinearSoftmax", MS, [In(U8, ("B", "M")), scalar(0.1, F), None, *params(U8)], {"opset": 13}))


# ---------------------------------------------------------------------------------- concat

@pytest.mark.parametrize("elem", [U8, I8])
def test_qlinear_concat_sums_the_axis_over_the_triples(elem):
    exact(Case("QLinearConcat", MS, [*params(elem), In(elem, ("B", "M", 3)), *params(elem),
                                     In(elem, ("B", "N", 3)), *params(elem)], {"axis": 1}))


def test_qlinear_concat_of_one_triple_and_of_three_along_a_negative_axis():
    exact(Case("QLinearConcat", MS, [*params(U8), In(U8, ("B", "M", 3)), *params(U8)], {"axis": -1}))
    exact(Case("QLinearConcat", MS, [*params(U8), In(U8, ("B", "M", 3)), *params(U8), In(U8, ("B", "M", "N")),
                                     *params(U8), In(U8, ("B", "M", 2)), *params(U8)], {"axis": -1}))


@pytest.mark.parametrize("extra", [0, 1, 2, 4])
def test_qlinear_concat_takes_whole_triples_as_onnxruntime_does(extra):
    from ort_validity import assert_accepted_by_both, assert_refused_by_both

    tail = [In(U8, ("B", "M", 3)), *params(U8), In(U8, ("B", "M", 2))][:extra]
    case = Case("QLinearConcat", MS, [*params(U8), In(U8, ("B", "M", 3)), *params(U8), *tail], {"axis": -1})
    if extra % 3 == 0:
        assert_accepted_by_both(case, SIZES)
    else:
        assert_refused_by_both(case, "must be whole (tensor, scale, zero point) triples", SIZES,
                               ort_match="(input_def_count - 2) % 3 == 0")


def test_qlinear_concat_refuses_tensors_that_disagree():
    triple = lambda *shape: [t(*shape, elem=U8), t(), t(elem=U8)]  # noqa: E731
    with pytest.raises(InferenceError, match="one rank"):
        run_rule("QLinearConcat", 1, [t(), t(elem=U8), *triple(2, 3), *triple(2)], {"axis": 0}, domain=MS)
    with pytest.raises(InferenceError, match="differ at axis 0"):
        run_rule("QLinearConcat", 1, [t(), t(elem=U8), *triple(2, 3), *triple(4, 3)], {"axis": 1}, domain=MS)
    with pytest.raises(InferenceError, match="out of range"):
        run_rule("QLinearConcat", 1, [t(), t(elem=U8), *triple(2, 3)], {"axis": 2}, domain=MS)


def test_qlinear_concat_says_less_for_unknown_tensors():
    triple = lambda *shape: [t(*shape, elem=U8), t(), t(elem=U8)]  # noqa: E731
    ctx = run_rule("QLinearConcat", 1, [t(), t(elem=U8), *triple(B, 3), t(None), t(), t(elem=U8)], {"axis": 1},
              domain=MS)
    assert ctx.output_type(0) == t(B, None, elem=U8)  # an unknown tensor: unknown length along the axis
    ctx = run_rule("QLinearConcat", 1, [t(), t(elem=U8), *triple(B, 3), t(None), t(), t(elem=U8)], {"axis": 0},
              domain=MS)
    assert ctx.output_type(0) == t(None, 3, elem=U8)


# ---------------------------------------------------------------------------------- reduce

@pytest.mark.parametrize("op", ["QLinearReduceMean", "ReduceSumInteger"])
@pytest.mark.parametrize("axes, keepdims, shape", [
    ([1], 1, (B, 1, N)), ([0, -1], 0, (M,)), ([], 1, (1, 1, 1)), ([], 0, ()), ([1, -2], 0, (B, N))])
def test_quantized_reduce_follows_axes_and_keepdims(op, axes, keepdims, shape):
    # no CPU kernel for either op: held to QLinearReduceMean's inference function (a repeated axis counts once)
    inputs = [t(B, M, N, elem=U8)] + ([t(), t(elem=U8), t(), t(elem=U8)] if op == "QLinearReduceMean" else [])
    ctx = run_rule(op, 1, inputs, {"axes": axes, "keepdims": keepdims}, domain=MS)
    assert ctx.output_type(0).shape == shape
    assert ctx.output_type(0).elem == (U8 if op == "QLinearReduceMean" else 0)  # ReduceSumInteger's T2 is free


@pytest.mark.parametrize("axes, keepdims", [([1], 0), ([1, 1], 1), ([-1, 0], 0), ([], 1), ([2], 1)])
@pytest.mark.parametrize("elem", [U8, I8])
def test_qlinear_reduce_mean_agrees_with_onnxruntimes_inference(capfd, axes, keepdims, elem):
    attrs = {"axes": axes, "keepdims": keepdims}
    inputs = [In(elem, (2, 3, 4)), In(F, ()), In(elem, ()), In(F, ()), In(elem, ())]
    theirs = ort_inference(capfd, Case("QLinearReduceMean", MS, inputs, attrs))
    ours = run_rule("QLinearReduceMean", 1, [t(2, 3, 4, elem=elem), t(), t(elem=elem), t(), t(elem=elem)], attrs,
               domain=MS).output_type(0)
    assert (ours.elem, ours.shape) == theirs


def test_quantized_reduce_of_an_unknown_rank_and_a_bad_axis():
    assert run_rule("ReduceSumInteger", 1, [t(None, elem=I8)], {"axes": [], "keepdims": 0}, domain=MS).output_type(0) \
        == t(elem=0)
    assert run_rule("ReduceSumInteger", 1, [t(None, elem=I8)], {"axes": [1], "keepdims": 1}, domain=MS) \
        .output_type(0) == t(None, elem=0)
    with pytest.raises(InferenceError, match="axes value 3 is out of range"):
        run_rule("ReduceSumInteger", 1, [t(B, M, elem=I8)], {"axes": [3], "keepdims": 1}, domain=MS)


# ---------------------------------------------------------------------------------- gemm

@pytest.mark.parametrize("a, b, y", [(U8, I8, None), (U8, U8, None), (I8, I8, None), (I8, I8, I8), (U8, U8, U8),
                                     (U8, I8, U8)])
def test_qgemm_is_float_without_an_output_zero_point_else_its_type(a, b, y):
    quantized = [scalar(0.3, F), scalar(3, y)] if y else []
    exact(Case("QGemm", MS, [In(a, ("M", 4)), *params(a), In(b, (4, "N")), *params(b), None, *quantized],
               {"alpha": 2.0}))


def test_qgemm_with_an_output_scale_but_no_zero_point_is_float():
    exact(Case("QGemm", MS, [In(U8, ("M", 4)), *params(U8), In(I8, (4, "N")), *params(I8), None, scalar(0.3, F)]))


@pytest.mark.parametrize("c", [("N",), ("M", "N"), (1, 1), (1, "N")])
def test_qgemm_transposes_and_a_bias(c):
    exact(Case("QGemm", MS, [In(U8, (4, "M")), *params(U8), In(U8, ("N", 4)), *params(U8), In(I32, c),
                             scalar(0.3, F), scalar(3, U8)], {"transA": 1, "transB": 1}))


def test_qgemm_with_per_column_weight_parameters():
    exact(Case("QGemm", MS, [In(U8, ("M", 4)), *params(U8), In(I8, (4, 3)), Const(np.ones(3) * 0.2, F),
                             Const(np.zeros(3), I8), In(I32, (3,))]), settings=[{"M": 2}, {"M": 7}])


def test_qgemm_refuses_what_cannot_multiply():
    base = [t(), t(elem=U8)]
    with pytest.raises(InferenceError, match="inner dims 4 and 5"):
        run_rule("QGemm", 1, [t(2, 4, elem=U8), *base, t(5, 3, elem=U8), *base], domain=MS)
    with pytest.raises(InferenceError, match="rank"):
        run_rule("QGemm", 1, [t(2, 4, 1, elem=U8), *base, t(4, 3, elem=U8), *base], domain=MS)
    with pytest.raises(InferenceError, match=r"C \(2, 2\) does not broadcast"):
        run_rule("QGemm", 1, [t(2, 4, elem=U8), *base, t(4, 3, elem=U8), *base, t(2, 2, elem=I32)], domain=MS)


def test_qgemm_soundness_of_an_unknown_bias_and_output_zero_point():
    base = [t(), t(elem=U8)]
    names = ["a", "s", "z", "b", "s", "z", "c", "ys", "yz"]
    ctx = run_rule("QGemm", 1, [t(M, 4, elem=U8), *base, t(4, N, elem=U8), *base, None, t(), None], names=names,
              domain=MS)
    assert ctx.output_type(0) == t(M, N, elem=0)  # a zero point of unknown type: int8 or uint8
    ctx = run_rule("QGemm", 1, [t(M, 4, elem=U8), *base, t(4, N, elem=U8), *base, t(3, 1, elem=I32)], domain=MS)
    assert ctx.output_type(0) == t(3, N)  # C's 3 rows fix M


# ---------------------------------------------------------------------------------- quantize / dequantize

@pytest.mark.parametrize("zero_point", [U8, I8, I16, U16])
def test_quantize_linear_takes_the_zero_point_type(zero_point):
    exact(Case("QuantizeLinear", MS, [In(F, ("B", "M")), scalar(0.1, F), scalar(1, zero_point)]))


def test_quantize_linear_defaults_to_uint8_and_runs_per_axis():
    exact(Case("QuantizeLinear", MS, [In(F, ("B", "M")), scalar(0.1, F)]))
    exact(Case("QuantizeLinear", MS, [In(F16, ("B", "M")), scalar(0.1, F16), scalar(1, I8)]))
    exact(Case("QuantizeLinear", MS, [In(F, ("B", 3)), Const(np.ones(3) * 0.1, F), Const(np.ones(3), I8)],
               {"axis": 1}))


def test_quantize_linear_soundness_of_an_unknown_zero_point():
    ctx = run_rule("QuantizeLinear", 1, [t(B, 3), t(), None], names=["x", "s", "z"], domain=MS)
    assert ctx.output_type(0) == t(B, 3, elem=0)


@pytest.mark.parametrize("elem", [21, 22])
def test_quantize_and_dequantize_linear_with_4_bit_types(elem):
    # numpy has no 4-bit type to feed onnxruntime: the rules are held to its inference functions
    assert run_rule("QuantizeLinear", 1, [t(B, 3), t(3), t(3, elem=elem)], {"axis": 1}, domain=MS).output_type(0) == \
        t(B, 3, elem=elem)
    assert run_rule("DequantizeLinear", 1, [t(B, 3, elem=elem), t(elem=F16), t(elem=elem)], domain=MS).output_type(0) == \
        t(B, 3, elem=F16)


@pytest.mark.parametrize("quantized", [U8, I8, I16, U16, I32])
@pytest.mark.parametrize("scale", [F, F16])
def test_dequantize_linear_takes_the_scale_type(quantized, scale):
    exact(Case("DequantizeLinear", MS, [In(quantized, ("B", "M")), scalar(0.1, scale), scalar(1, quantized)]))


@pytest.mark.parametrize("axis", [1, -1])
def test_dequantize_linear_without_zero_point_and_per_axis(axis):
    exact(Case("DequantizeLinear", MS, [In(U8, ("B", "M")), scalar(0.1, F)]))
    exact(Case("DequantizeLinear", MS, [In(U8, ("B", 3)), Const(np.ones(3) * 0.1, F), Const(np.ones(3), U8)],
               {"axis": axis}))


# ---------------------------------------------------------------------------------- matmul

@pytest.mark.parametrize("a, b", [(("B", "M", 6), (6, "N")), (("M", 6), ("B", 6, "N")), ((6,), ("B", 6, "N")),
                                  (("M", 6), (6,))])
def test_dynamic_quantize_matmul_has_matmul_shapes(a, b):
    exact(Case("DynamicQuantizeMatMul", MS, [In(F, a), In(I8, b), scalar(0.1, F)]))


def test_dynamic_quantize_matmul_with_zero_point_and_bias():
    exact(Case("DynamicQuantizeMatMul", MS, [In(F, ("B", "M", 6)), In(U8, (6, "N")), scalar(0.1, F),
                                             scalar(1, U8), In(F, ("N",))]))


@pytest.mark.parametrize("a, b", [(("B", "M", 6), (6, "N")), (("M", 6), ("B", 6, "N"))])
@pytest.mark.parametrize("scale", [F, F16])
def test_matmul_integer_to_float_has_matmul_shapes_in_the_scale_type(a, b, scale):
    exact(Case("MatMulIntegerToFloat", MS, [In(I8, a), In(I8, b), scalar(0.1, scale), scalar(0.1, scale)]))


def test_matmul_integer_to_float_with_zero_points_and_bias():
    exact(Case("MatMulIntegerToFloat", MS, [In(U8, ("B", "M", 6)), In(U8, (6, "N")), scalar(0.1, F), In(F, ("N",)),
                                            scalar(1, U8), In(U8, ("N",)), In(F, ("N",))]))


@pytest.mark.parametrize("a, b", [(("B", "M", 6), (6, "N")), ((6,), (6, "N"))])
def test_matmul_integer16_is_int32(a, b):
    exact(Case("MatMulInteger16", MS, [In(I16, a), In(I16, b)]))


@pytest.mark.parametrize("a, b", [((2, 3, 5), (5, 4)), ((5,), (2, 5, 4))])
def test_matmul_integer16_on_unsigned_operands_agrees_with_onnxruntimes_inference(capfd, a, b):
    theirs = ort_inference(capfd, Case("MatMulInteger16", MS, [In(U16, a), In(U16, b)]))
    ours = run_rule("MatMulInteger16", 1, [t(*a, elem=U16), t(*b, elem=U16)], domain=MS).output_type(0)
    assert (ours.elem, ours.shape) == theirs


def test_matmul_integer16_is_int32_for_unsigned_operands_too():
    # no CPU kernel for uint16: onnxruntime's inference types the product int32 all the same
    assert run_rule("MatMulInteger16", 1, [t(M, 6, elem=U16), t(6, N, elem=U16)], domain=MS).output_type(0) == \
        t(M, N, elem=I32)
    with pytest.raises(InferenceError, match="inner dims"):
        run_rule("MatMulInteger16", 1, [t(M, 6, elem=I16), t(5, N, elem=I16)], domain=MS)


# ---------------------------------------------------------------------------------- pooling and convolution

@pytest.mark.parametrize("channels_last", [0, 1])
@pytest.mark.parametrize("shape", [("B", "M", 4, 6), ("B", "M", 7), ("B", 2, "M", "N", 3)])
@pytest.mark.parametrize("elem", [U8, I8])
def test_qlinear_global_average_pool_keeps_batch_and_channels(channels_last, shape, elem):
    exact(Case("QLinearGlobalAveragePool", MS, [In(elem, shape), *params(elem), *params(elem)],
               {"channels_last": channels_last}))


def test_qlinear_global_average_pool_needs_batch_and_channels():
    ctx = run_rule("QLinearGlobalAveragePool", 1, [t(B, M, elem=U8), t(), t(elem=U8), t(), t(elem=U8)],
              {"channels_last": 1}, domain=MS)
    assert ctx.output_type(0) == t(B, M, elem=U8)
    with pytest.raises(InferenceError, match="rank"):
        run_rule("QLinearGlobalAveragePool", 1, [t(B, elem=U8), t(), t(elem=U8), t(), t(elem=U8)], domain=MS)


@pytest.mark.parametrize("channels_last", [0, 1])
@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [2, 3]},
    {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1},
    {"kernel_shape": [3, 3], "pads": [1, 0, 1, 2], "count_include_pad": 1},
    {"kernel_shape": [3, 2], "strides": [2, 1], "auto_pad": "SAME_UPPER"}])
def test_qlinear_average_pool_in_either_layout(channels_last, attrs):
    exact(Case("QLinearAveragePool", MS, [In(I8, ("B", "H", 8, "H")), *params(I8), *params(I8)],
               dict(attrs, channels_last=channels_last)))


def test_qlinear_average_pool_of_one_spatial_axis_channels_last():
    exact(Case("QLinearAveragePool", MS, [In(U8, ("B", "H", "M")), *params(U8), *params(U8)],
               {"kernel_shape": [3], "strides": [2], "channels_last": 1}))


def conv_case(x, w, attrs, channels_last, bias=None, elems=(U8, I8, U8)) -> Case:
    xe, we, ye = elems
    return Case("QLinearConv", MS, [In(xe, x), *params(xe), Const(np.ones(w), we), scalar(0.1, F), scalar(0, we),
                                    scalar(0.2, F), scalar(2, ye), bias], dict(attrs, channels_last=channels_last))


@pytest.mark.parametrize("elems", [(U8, I8, U8), (U8, U8, U8), (I8, I8, I8)])
def test_qlinear_conv_in_either_layout(elems):
    exact(conv_case(("B", 3, "H", "H"), (4, 3, 3, 3), {}, 0, elems=elems))
    exact(conv_case(("B", "H", "H", 3), (4, 3, 3, 3), {}, 1, elems=elems))


@pytest.mark.parametrize("x, w, attrs", [
    (("B", "H", "H", 6), (4, 3, 3, 3), {"group": 2, "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    (("B", "H", 6), (4, 6, 3), {"auto_pad": "SAME_UPPER", "strides": [2]}),
    (("B", "H", 6), (4, 6, 3), {"dilations": [2], "kernel_shape": [3]}),
    (("B", "H", "H", 3, 3), (4, 3, 3, 3, 1), {})])
def test_qlinear_conv_channels_last_with_groups_strides_and_bias(x, w, attrs):
    exact(conv_case(x, w, attrs, 1, bias=Const(np.ones(4), I32)))
    nchw = (x[0], x[-1]) + x[1:-1]
    exact(conv_case(nchw, w, attrs, 0, bias=Const(np.ones(4), I32)))


def test_qlinear_conv_channels_last_errors_say_how_x_was_read():
    base = [t(), t(elem=U8)]
    with pytest.raises(InferenceError, match=r"channels_last: X \(1, 5, 5, 3\) read as \(1, 3, 5, 5\)"):
        run_rule("QLinearConv", 1, [t(1, 5, 5, 3, elem=U8), *base, t(4, 2, 3, 3, elem=U8), *base, *base],
            {"channels_last": 1}, domain=MS)
    with pytest.raises(InferenceError, match="rank"):
        run_rule("QLinearConv", 1, [t(5, elem=U8), *base, t(4, 2, 3, elem=U8), *base, *base], {"channels_last": 1},
            domain=MS)


def test_channels_first_nodes_are_read_as_they_are():
    """Without channels_last the standard rule sees the node itself: its errors say nothing of a layout."""
    base = [t(), t(elem=U8)]
    with pytest.raises(InferenceError, match="channels") as failure:
        run_rule("QLinearConv", 1, [t(1, 3, 5, 5, elem=U8), *base, t(4, 2, 3, 3, elem=U8), *base, *base], domain=MS)
    assert "read as" not in str(failure.value)
    pool = run_rule("QLinearAveragePool", 1, [t(B, 3, 5, 5, elem=U8), t(), t(elem=U8), t(), t(elem=U8)],
               {"kernel_shape": [2, 2]}, domain=MS)
    assert pool.output_type(0) == t(B, 3, 4, 4, elem=U8)


def test_qlinear_conv_channels_last_soundness_of_unknown_x_and_bias():
    base = [t(), t(elem=U8)]
    ctx = run_rule("QLinearConv", 1, [t(None, elem=U8), *base, t(4, 2, 3, 3, elem=U8), *base, *base],
              {"channels_last": 1}, domain=MS)
    assert ctx.output_type(0) == t(None, None, None, 4, elem=U8)
    names = ["x", "s", "z", "w", "s", "z", "ys", "yz", "b"]
    ctx = run_rule("QLinearConv", 1, [t(B, 5, 5, 2, elem=U8), *base, t(M, 2, 3, 3, elem=U8), *base, *base, None],
              {"channels_last": 1}, names=names, domain=MS)
    assert ctx.output_type(0) == t(B, 3, 3, M, elem=U8)
