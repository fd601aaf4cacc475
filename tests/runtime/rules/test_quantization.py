"""Tests for the quantization rules."""
from __future__ import annotations


from opspec.runtime.shape import Sym
from opspec.runtime.testing import run_rule, t

F, U8, I8, F16, BF16 = 1, 2, 3, 10, 16
N = Sym("N")


def test_quantize_takes_the_type_of_output_dtype_else_the_zero_point_else_uint8():
    assert run_rule("QuantizeLinear", 21, [t(N, 3), t()]).output_type(0) == t(N, 3, elem=U8)
    assert run_rule("QuantizeLinear", 21, [t(N, 3), t(), t(elem=I8)]).output_type(0) == t(N, 3, elem=I8)
    assert run_rule("QuantizeLinear", 21, [t(N, 3), t()], {"output_dtype": I8}).output_type(0) == t(N, 3, elem=I8)
    unknown_zero_point = run_rule("QuantizeLinear", 21, [t(N, 3), t(), None], names=["x", "s", "z"]).output_type(0)
    assert unknown_zero_point == t(N, 3, elem=0)  # supplied but unknown: not uint8 by default


def test_dequantize_takes_the_scale_type_unless_output_dtype_says_otherwise():
    assert run_rule("DequantizeLinear", 13, [t(4, elem=U8), t()]).output_type(0) == t(4)
    assert run_rule("DequantizeLinear", 21, [t(4, elem=U8), t(elem=F16)]).output_type(0) == t(4, elem=F16)
    assert run_rule("DequantizeLinear", 25, [t(4, elem=U8), t(elem=F16)], {"output_dtype": BF16}).output_type(0) == \
        t(4, elem=BF16)


def test_dynamic_quantize_gives_uint8_data_and_scalar_parameters():
    ctx = run_rule("DynamicQuantizeLinear", 11, [t(N, 3)])
    assert [ctx.output_type(i) for i in range(3)] == [t(N, 3, elem=U8), t(), t(elem=U8)]
