"""Rules for ops that make tensors of a requested size: random values, windows, filter banks.

Their element type comes from an attribute (``dtype``, ``output_datatype``), their shape
from an attribute, another input's shape, or the known value of a size input.
"""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext, attribute, input, option, rule
from opspec.runtime.contract.elements import FLOAT, INT32
from opspec.runtime.shape import Sym, add_dim, div_dim, format_shape


def _scalar_value(ctx: InferenceContext, index: int):
    """The known value of a scalar (or one-element) size input: an int, a ``Sym`` or None."""
    shape = ctx.input_shape(index)
    if shape is not None and len(shape) > 1:
        ctx.fail(f"{ctx.input_name(index)} must be a scalar, got shape {format_shape(shape)}")
    values = ctx.input_values(index)
    if values is None or len(values) != 1:
        return None
    value = values[0]
    if type(value) is int and value < 0:
        ctx.fail(f"{ctx.input_name(index)} is {value}, which is negative")
    return value if type(value) is int or type(value) is Sym else None


@rule("random_tensor", "A tensor of the 'shape' attribute's dims, of the 'dtype' attribute's element type.",
      shape=attribute(required=True), dtype=attribute(),
      default_dtype=option("int", FLOAT, doc="the element type when the dtype attribute is not set"))
def random_tensor(ctx: InferenceContext) -> None:
    dims = ctx.ints_attr("shape")
    if dims is not None and any(d < 0 for d in dims):
        ctx.fail(f"shape {list(dims)} has a negative dim")
    ctx.set_output_shape("output", dims, ctx.elem_attr("dtype", ctx.option("default_dtype", FLOAT)))


@rule("random_like", "A tensor shaped like the input, of the 'dtype' attribute's element type or else the input's.",
      dtype=attribute())
def random_like(ctx: InferenceContext) -> None:
    ctx.set_output_shape("output", ctx.input_shape("input"), ctx.elem_attr("dtype", ctx.input_elem("input")))


@rule("multinomial", "(batch, sample_size) class indices drawn from (batch, classes) scores.",
      sample_size=attribute(), dtype=attribute(),
      default_dtype=option("int", INT32, doc="the element type when the dtype attribute is not set"))
def multinomial(ctx: InferenceContext) -> None:
    batch, _ = ctx.input_with_rank("input", 2)
    samples = ctx.int_attr("sample_size", 1)
    if samples < 1:
        ctx.fail(f"sample_size {samples} must be positive")
    ctx.set_output_shape("output", (batch, samples), ctx.elem_attr("dtype", ctx.option("default_dtype", INT32)))


@rule("window", "A 1-D window of as many elements as the size input holds.",
      size=input(required=True), output_datatype=attribute())
def window(ctx: InferenceContext) -> None:
    index = ctx.input_arg("size")
    length = _scalar_value(ctx, index) if index is not None else None
    elem = ctx.elem_attr("output_datatype", ctx.output_elem("output"))
    ctx.set_output_shape("output", (length if length is not None else ctx.fresh_dim(),), elem)


@rule("mel_weight_matrix", "(floor(dft_length / 2) + 1, num_mel_bins) weights of a mel filter bank.",
      num_mel_bins=input(required=True), dft_length=input(required=True), output_datatype=attribute())
def mel_weight_matrix(ctx: InferenceContext) -> None:
    bins_index, length_index = ctx.input_arg("num_mel_bins"), ctx.input_arg("dft_length")
    bins = _scalar_value(ctx, bins_index) if bins_index is not None else None
    length = _scalar_value(ctx, length_index) if length_index is not None else None
    rows = add_dim(div_dim(length, 2, evenly=False), 1) if length is not None else None
    ctx.set_output_shape("output", (rows, bins), ctx.elem_attr("output_datatype", ctx.output_elem("output")))
