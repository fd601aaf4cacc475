"""Rules for onnxruntime's fused activations whose output is not shaped like the input.

The others (Gelu, FastGelu, BiasGelu, QuickGelu, BiasAdd, BiasSoftmax...) keep their input's
shape and use ``elementwise``; GemmFastGelu uses ``matmul``.
"""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext, input, rule
from opspec.runtime.rules._dims import alike_shapes
from opspec.runtime.shape import ShapeError, div_dim, format_shape, merge_dim, merge_shapes


@rule("bias_split_gelu", "(N, S, D / 2): X (N, S, D) plus bias (D,), cut into halves along D, one gating the other.",
      bias=input())
def bias_split_gelu(ctx: InferenceContext) -> None:
    """X is 3-D and bias 1-D of X's last dim; the output keeps X's first two dims and half of D
    (rounded down, as onnxruntime computes it)."""
    x = ctx.input_shape("X")
    index = ctx.input_arg("bias")
    bias = ctx.input_shape(index) if index is not None else None
    if x is not None and len(x) != 3:
        ctx.fail(f"X {format_shape(x)} must be 3-D (N, S, D)")
    if bias is not None and len(bias) != 1:
        ctx.fail(f"bias {format_shape(bias)} must be 1-D (D,)")
    x = x if x is not None else (None, None, None)
    width = x[2]
    if bias is not None:
        try:
            width = merge_dim(width, bias[0])
        except ShapeError:
            ctx.fail(f"bias {format_shape(bias)} must match the last dim of X {format_shape(x)}")
    ctx.set_output_shape("Y", (x[0], x[1], div_dim(width, 2, evenly=False)))


@rule("scaled_silu", "Y takes X's shape; the optional scale input is a scalar (rank 0).")
def scaled_silu(ctx: InferenceContext) -> None:
    scale = ctx.input_shape("scale")
    if scale is not None and len(scale) != 0:
        ctx.fail(f"scale {format_shape(scale)} must be a scalar (rank 0), not a tensor of rank {len(scale)}")
    ctx.set_output_shape("Y", ctx.input_shape("X"))


@rule("gated_add", "output takes X's shape (..., C); Y has X's shape and gate (..., 1) the same leading dims.")
def gated_add(ctx: InferenceContext) -> None:
    """X + Y * gate with one gate value per row: the kernels broadcast nothing else."""
    gate = ctx.input_shape("gate")
    shape = alike_shapes(ctx, "X", ctx.input_shape("X"), "Y", ctx.input_shape("Y"))
    if gate is not None and shape is not None:
        rows = tuple(shape[:-1]) + (1,)
        try:
            merged_rows = merge_shapes(rows, gate)
        except ShapeError:
            ctx.fail(f"gate {format_shape(gate)} must be {format_shape(rows)}: X's shape {format_shape(shape)} with a "
                     "last axis of 1")
        shape = tuple(merged_rows[:-1]) + (shape[-1],)
    ctx.set_output_shape("output", shape)

