"""Conv and MatMul read their operands by name: QLinearConv, ConvInteger, DeformConv, QLinearMatMul,
MatMulInteger; and the MaxUnpool and RoiAlign rules."""
from __future__ import annotations

import pytest

from opspec.runtime.contract import InferenceError
from opspec.runtime.shape import Sym
from opspec.runtime.testing import INT64, run_rule, t, vec

N, H, W = Sym("N"), Sym("H"), Sym("W")
U8, I8, I32 = 2, 3, 6


def test_qlinear_conv_takes_x_w_and_bias_by_name_and_the_output_zero_point_type():
    scalar = t(elem=1)
    inputs = [t(N, 3, H, W, elem=U8), scalar, t(elem=U8), t(8, 3, 3, 3, elem=I8), scalar, t(elem=I8), scalar,
              t(elem=I8), t(8, elem=I32)]
    ctx = run_rule("QLinearConv", 10, inputs, {"pads": [1, 1, 1, 1], "strides": [2, 2]})
    assert ctx.output_type(0) == t(N, 8, (H - 1) // 2 + 1, (W - 1) // 2 + 1, elem=I8)
    inputs[8] = t(4, elem=I32)
    with pytest.raises(InferenceError, match="filters of W"):
        run_rule("QLinearConv", 10, inputs)


def test_conv_integer_gives_int32():
    ctx = run_rule("ConvInteger", 10, [t(1, 2, 5, 5, elem=U8), t(4, 2, 3, 3, elem=U8)])
    assert ctx.output_type(0) == t(1, 4, 3, 3, elem=I32)


def test_deform_conv_is_a_convolution_over_its_offsets():
    ctx = run_rule("DeformConv", 22, [t(N, 4, 9, 9), t(6, 2, 3, 3), t(N, 18, 7, 7)], {"group": 2})
    assert ctx.output_type(0) == t(N, 6, 7, 7)


def test_qlinear_matmul_takes_a_and_b_by_name():
    scalar = t(elem=1)
    ctx = run_rule("QLinearMatMul", 21, [t(N, 4, 8, elem=U8), scalar, t(elem=U8), t(8, 5, elem=U8), scalar, t(elem=U8),
                                    scalar, t(elem=U8)])
    assert ctx.output_type(0) == t(N, 4, 5, elem=U8)
    with pytest.raises(InferenceError, match="inner dims 8 and 7 differ"):
        run_rule("QLinearMatMul", 10, [t(4, 8, elem=U8), scalar, t(elem=U8), t(7, 5, elem=U8), scalar, t(elem=U8),
                                  scalar, t(elem=U8)])


def test_matmul_integer_gives_int32():
    ctx = run_rule("MatMulInteger", 10, [t(N, 4, 8, elem=U8), t(8, 5, elem=I8)])
    assert ctx.output_type(0) == t(N, 4, 5, elem=I32)


def test_max_unpool_inverts_max_pool_sizes():
    ctx = run_rule("MaxUnpool", 11, [t(N, 3, H, 4), t(N, 3, H, 4, elem=INT64)], {"kernel_shape": [2, 2], "strides": [2, 2]})
    assert ctx.output_type(0) == t(N, 3, 2 * H, 8)


def test_max_unpool_output_shape_by_data_or_rank():
    attributes = {"kernel_shape": [2, 2], "strides": [2, 2]}
    x, i, size = t(1, 3, 2, 2), t(1, 3, 2, 2, elem=INT64), t(4, elem=INT64)
    ctx = run_rule("MaxUnpool", 11, [x, i, size], attributes, data=[None, None, vec(1, 3, 5, 5)])
    assert ctx.output_type(0) == t(1, 3, 5, 5)
    ctx = run_rule("MaxUnpool", 11, [x, i, None], attributes, names=["x", "i", "s"])
    assert ctx.output_type(0) == t(None, None, None, None)  # present but unknown: only the rank
    with pytest.raises(InferenceError, match="output_shape has 3 values"):
        run_rule("MaxUnpool", 11, [x, i, t(3, elem=INT64)], attributes)


def test_roi_align_samples_each_region_to_a_fixed_size():
    ctx = run_rule("RoiAlign", 16, [t(N, 256, H, W), t(Sym("R"), 4), t(Sym("R"), elem=INT64)],
              {"output_height": 7, "output_width": 5})
    assert ctx.output_type(0) == t(Sym("R"), 256, 7, 5)
    with pytest.raises(InferenceError, match="4 corner coordinates"):
        run_rule("RoiAlign", 16, [t(1, 3, 8, 8), t(2, 5), t(2, elem=INT64)])
    with pytest.raises(InferenceError, match="count different regions"):
        run_rule("RoiAlign", 16, [t(1, 3, 8, 8), t(2, 4), t(3, elem=INT64)])
