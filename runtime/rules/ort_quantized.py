"""Rules for onnxruntime's quantized operators of the QOperator form (QLinearAdd, QGemm, ...).

Their scales and zero points never shape the result: each rule reads only the operands it
names. Convolution and pooling reuse the standard rules through ``channels_last`` (``ort_nhwc``),
which reads the data as (N, D1, ..., Dn, C) when the op's ``channels_last`` attribute is set.
"""
from __future__ import annotations

from opspec.runtime.contract import FLOAT, InferenceContext, attribute, input, rule
from opspec.runtime.rules._dims import named_where_undecided
from opspec.runtime.shape import (
    Dim,
    ShapeError,
    add_dim,
    broadcast_shapes,
    format_shape,
    merge_dim,
    unidirectional_broadcast,
)


# ---------------------------------------------------------------------------------- elementwise

@rule("quantized_broadcast", "The numpy-style broadcast of the named operands; scales and zero points take no part.",
      a=input("A", doc="the first operand"), b=input("B", doc="the second operand"),
      condition=input(None, doc="an optional selector broadcast with the operands (QLinearWhere)"))
def quantized_broadcast(ctx: InferenceContext) -> None:
    """The operands broadcast together; the element type is the engine's binding."""
    shapes = []
    for key in ("condition", "a", "b"):
        if ctx.named(key) is None:
            continue
        index = ctx.input_arg(key)
        shapes.append(ctx.input_shape(index) if index is not None else None)
    try:
        shape = broadcast_shapes(*shapes)
    except ShapeError as error:
        ctx.fail(f"operands {', '.join(format_shape(s) for s in shapes)} do not broadcast: {error}")
    ctx.set_output_shape(0, named_where_undecided(ctx, shape, *shapes))  # C, or Z for QLinearWhere


# ---------------------------------------------------------------------------------- gemm

@rule("quantized_gemm", "(M, N) from A and B after optional transposes; float, or the output zero point's type "
      "when one is given.", a=input("A", doc="the left matrix"), b=input("B", doc="the right matrix"),
      c=input("C", doc="the optional int32 bias"),
      y_zero_point=input(doc="the optional output zero point, whose type the output takes"),
      transA=attribute(), transB=attribute())
def quantized_gemm(ctx: InferenceContext) -> None:
    """QGemm: the product of two matrices; C must broadcast onto (M, N)."""
    a_index, b_index = ctx.input_arg("a"), ctx.input_arg("b")
    a = ctx.input_with_rank(a_index, 2) if a_index is not None else (None, None)
    b = ctx.input_with_rank(b_index, 2) if b_index is not None else (None, None)
    m, ka = (a[1], a[0]) if ctx.flag_attr("transA") else a
    kb, n = (b[1], b[0]) if ctx.flag_attr("transB") else b
    if type(ka) is int and type(kb) is int and ka != kb:
        ctx.fail(f"cannot multiply A {format_shape(a)} by B {format_shape(b)}: inner dims {ka} and {kb} differ")
    out: tuple | None = (m, n)
    c_index = ctx.input_arg("c")
    c = ctx.input_shape(c_index) if c_index is not None else None
    if c is not None:
        try:
            out = unidirectional_broadcast(out, c)
        except ShapeError as error:
            ctx.fail(f"C {format_shape(c)} does not broadcast onto the product {format_shape(out)}: {error}")
    zero_point = ctx.input_arg("y_zero_point")
    ctx.set_output_shape("Y", out, ctx.input_elem(zero_point) if zero_point is not None else FLOAT)


# ---------------------------------------------------------------------------------- concat

@rule("quantized_concat", "Join the tensors of the (tensor, scale, zero point) triples along 'axis'.",
      axis=attribute(required=True), inputs=input(doc="the variadic input holding the triples"))
def quantized_concat(ctx: InferenceContext) -> None:
    """Every third input from the first of ``inputs`` is a tensor; dims off ``axis`` merge, ``axis`` sums.
    The inputs come in whole triples (onnxruntime's kernel refuses any other count when it is made)."""
    bound = ctx.input_range(ctx.named("inputs") or "")
    if not len(bound) or len(bound) % 3:
        ctx.fail(f"{len(bound)} inputs follow Y_scale and Y_zero_point; they must be whole (tensor, scale, "
                 "zero point) triples")
    indices = range(bound.start, bound.stop, 3)
    shapes = [ctx.input_shape(i) for i in indices]
    known = [s for s in shapes if s is not None]
    if not known:
        ctx.set_output_shape("Y", None)
        return
    rank = len(known[0])
    if any(len(s) != rank for s in known):
        ctx.fail(f"tensors {', '.join(format_shape(s) for s in shapes)} must have one rank")
    axis = ctx.normalize_axis(ctx.int_attr("axis", 0), rank)
    out: list = [None] * rank
    total: Dim = 0
    for shape in shapes:
        if shape is None:
            total = None
            continue
        total = add_dim(total, shape[axis]) if total is not None else None
        for j, dim in enumerate(shape):
            if j == axis:
                continue
            try:
                out[j] = merge_dim(out[j], dim)
            except ShapeError:
                ctx.fail(f"tensors {', '.join(format_shape(s) for s in shapes)} differ at axis {j}, "
                         f"which is not the concatenation axis {axis}")
    out[axis] = total
    ctx.set_output_shape("Y", tuple(out))
