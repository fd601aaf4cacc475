"""Matrix-product rules: numpy ``matmul`` shapes and ``Gemm``."""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext, attribute, input, rule
from opspec.runtime.rules._dims import named_where_undecided
from opspec.runtime.shape import Shape, ShapeError, broadcast_shapes, format_shape, unidirectional_broadcast


def _inner(ctx: InferenceContext, k1, k2, a, b):
    """The merged contraction dim, or a failure naming both operand shapes."""
    if k1 is k2 or k2 is None:
        return k1
    if k1 is None:
        return k2
    if type(k1) is int and type(k2) is int:
        if k1 != k2:
            ctx.fail(f"cannot multiply {format_shape(a)} by {format_shape(b)}: "
                     f"inner dims {k1} and {k2} differ")
        return k1
    return k1 if type(k1) is int else k2


@rule("matmul", "numpy.matmul shapes: batched, with 1-D operands promoted and dropped.",
      a=input("A", doc="the left operand"), b=input("B", doc="the right operand"))
def matmul(ctx: InferenceContext) -> None:
    """``numpy.matmul``: 1-D operands are promoted to matrices, batch dims broadcast."""
    left, right = ctx.input_arg("a"), ctx.input_arg("b")
    a = ctx.input_with_rank_at_least(left, 1) if left is not None else None
    b = ctx.input_with_rank_at_least(right, 1) if right is not None else None
    if a is None or b is None:
        ctx.set_output_shape(0, None)
        return
    ra, rb = len(a), len(b)
    _inner(ctx, a[-1], b[-2] if rb > 1 else b[0], a, b)
    batch: Shape
    if ra <= 2 and rb <= 2:  # the common case: no batch dims
        batch = ()
    else:
        try:
            batch = broadcast_shapes(a[:-2], b[:-2])
        except ShapeError as e:
            ctx.fail(f"cannot multiply {format_shape(a)} by {format_shape(b)}: "
                     f"batch dims do not broadcast ({e})")
        if None in batch:
            batch = named_where_undecided(ctx, batch, a[:-2], b[:-2])
    out = batch + (a[-2:-1] if ra > 1 else ()) + (b[-1:] if rb > 1 else ())
    ctx.set_output_shape(0, out)


@rule("gemm", "(M, K) x (K, N) with optional transposes; C broadcasts onto the result.",
      transA=attribute(), transB=attribute())
def gemm(ctx: InferenceContext) -> None:
    """(M, K) x (K, N) after optional transposes; C must broadcast onto (M, N)."""
    a, b = ctx.input_with_rank("A", 2), ctx.input_with_rank("B", 2)
    m, ka = (a[1], a[0]) if ctx.flag_attr("transA") else a
    kb, n = (b[1], b[0]) if ctx.flag_attr("transB") else b
    _inner(ctx, ka, kb, a, b)
    out: Shape = (m, n)
    if ctx.has_input("C"):
        c = ctx.input_shape("C")
        if c is not None:
            try:
                out = unidirectional_broadcast(out, c)
            except ShapeError as e:
                ctx.fail(f"bias C of shape {format_shape(c)} does not fit the product "
                         f"{format_shape(out)}: {e}")
    ctx.set_output_shape("Y", out)

