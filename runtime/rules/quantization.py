"""Rules for quantizing and dequantizing: the shape is the input's, the element type is the question."""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext, attribute, input, rule
from opspec.runtime.contract.elements import FLOAT, UINT8


@rule("quantize_linear", "x's shape in the type 'output_dtype' names, else the zero point's, else uint8.",
      zero_point=input("y_zero_point"), output_dtype=attribute())
def quantize_linear(ctx: InferenceContext) -> None:
    # else the zero point's type, bound by the engine
    elem = ctx.elem_attr("output_dtype", 0, zero_unset=True) or ctx.output_elem("y")
    if not elem and ctx.input_arg("zero_point") is None:
        elem = UINT8  # no zero point and no output_dtype: the standard's default
    ctx.set_output_shape("y", ctx.input_shape("x"), elem)


@rule("dequantize_linear", "x's shape in the type 'output_dtype' names, else the scale's.",
      scale=input("x_scale"), output_dtype=attribute())
def dequantize_linear(ctx: InferenceContext) -> None:
    elem = ctx.elem_attr("output_dtype", 0, zero_unset=True) or ctx.output_elem("y")
    if not elem:
        index = ctx.input_arg("scale")
        elem = ctx.input_elem(index) if index is not None else 0
    ctx.set_output_shape("y", ctx.input_shape("x"), elem)


@rule("dynamic_quantize_linear", "y with x's shape in uint8, and a scalar scale (float) and zero point (uint8).")
def dynamic_quantize_linear(ctx: InferenceContext) -> None:
    ctx.set_output_shape("y", ctx.input_shape("x"), UINT8)
    ctx.set_output_shape("y_scale", (), FLOAT)
    ctx.set_output_shape("y_zero_point", (), UINT8)

