"""onnxruntime's fused and rearranged matrix products and transposed convolutions.

``fused_matmul`` is ``MatMul`` on operands transposed as FusedMatMul's attributes ask;
``sparse_dense_matmul`` multiplies a sparse matrix by a dense one; ``conv_transpose_dynamic_pads``
is ConvTranspose's arithmetic with the pads given as an input.
"""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext, SparseTensorType, TensorType, attribute, input, rule
from opspec.runtime.rules import linalg
from opspec.runtime.rules._operand_view import OperandView, rule_defaults
from opspec.runtime.rules._window import transposed_length
from opspec.runtime.rules.nn import conv_transpose_operands, conv_transpose_window
from opspec.runtime.shape import format_shape


def matmul_operand(shape: tuple | None, trans: bool, trans_batch: bool) -> tuple | None:
    """The operand numpy.matmul multiplies: with ``trans_batch`` the leading axis moves to the row
    position (behind the other batch axes), with ``trans`` the last two axes swap. Vectors stay."""
    if shape is None or len(shape) < 2:
        return shape
    rows = shape[0] if trans_batch else shape[-2]
    batch = tuple(shape[1:-1]) if trans_batch else tuple(shape[:-2])
    return batch + ((shape[-1], rows) if trans else (rows, shape[-1]))


@rule("fused_matmul", "numpy.matmul of A and B after the transposes transA, transB, transBatchA and transBatchB ask for.",
      transA=attribute(), transB=attribute(), transBatchA=attribute(), transBatchB=attribute())
def fused_matmul(ctx: InferenceContext) -> None:
    """``matmul`` on the rearranged operands (a vector operand is never transposed). With a batch
    transpose the kernel needs both operands of one rank, at least 3."""
    if ctx.flag_attr("transBatchA") or ctx.flag_attr("transBatchB"):
        a, b = ctx.input_shape("A"), ctx.input_shape("B")
        ranks = [len(shape) for shape in (a, b) if shape is not None]
        if any(rank < 3 for rank in ranks) or (len(ranks) == 2 and ranks[0] != ranks[1]):
            ctx.fail(f"with transBatchA or transBatchB, A {format_shape(a)} and B {format_shape(b)} must have "
                     "one rank, at least 3")
    operands = []
    for name, trans, trans_batch in (("A", "transA", "transBatchA"), ("B", "transB", "transBatchB")):
        value = ctx.input_type(name)
        if type(value) is TensorType:
            value = TensorType(value.elem, matmul_operand(value.shape, ctx.flag_attr(trans),
                                                          ctx.flag_attr(trans_batch)))
        operands.append(value)
    view = OperandView(ctx, (0, 1), operands, rule_defaults(linalg.matmul))
    linalg.matmul(view)
    ctx.set_output("Y", view.output_type("Y"))


@rule("sparse_dense_matmul", "(M, N) from sparse A (M, K) and dense B (K, N), after the transposes transA and transB.",
      transA=attribute(), transB=attribute())
def sparse_dense_matmul(ctx: InferenceContext) -> None:
    """Both operands are matrices; the result is dense, of B's element type."""
    a_type, b = ctx.input_type("A"), ctx.input_with_rank("B", 2)
    a = a_type.shape if type(a_type) in (SparseTensorType, TensorType) else None
    if a is not None and len(a) != 2:
        ctx.fail(f"A {format_shape(a)} must be a sparse matrix (rank 2)")
    a = a if a is not None else (None, None)
    m, ka = (a[1], a[0]) if ctx.flag_attr("transA") else a
    kb, n = (b[1], b[0]) if ctx.flag_attr("transB") else b
    if type(ka) is int and type(kb) is int and ka != kb:
        ctx.fail(f"cannot multiply A {format_shape(a)} by B {format_shape(b)}: inner dims {ka} and {kb} differ")
    ctx.set_output_shape("Y", (m, n))


@rule("conv_transpose_dynamic_pads", "(N, W.shape[1] * group, out...): ConvTranspose's spatial arithmetic with the "
      "pads read from the Pads input.",
      pads=input("Pads", doc="the begin and end pads of every spatial axis"), group=attribute(),
      kernel_shape=attribute(), strides=attribute(), dilations=attribute(), output_padding=attribute(),
      auto_pad=attribute())
def conv_transpose_dynamic_pads(ctx: InferenceContext) -> None:
    """Spatial dims are known only from known pads, with auto_pad NOTSET."""
    operands = conv_transpose_operands(ctx)
    if operands is None:
        ctx.set_output_shape("Y", None)
        return
    x, w, channels = operands
    ctx.set_output_shape("Y", (x[0], channels) + _dynamic_spatial(ctx, x[2:], w[2:], len(x) - 2))



def _dynamic_spatial(ctx: InferenceContext, sizes: tuple, kernel_dims: tuple, count: int) -> tuple:
    unknown = (None,) * count
    pads = ctx.ints_arg("pads").ints
    if pads is None or (ctx.attr("auto_pad", "NOTSET") or "NOTSET") != "NOTSET":
        return unknown
    if len(pads) != 2 * count:
        ctx.fail(f"Pads {list(pads)} must hold {2 * count} values for {count} spatial axes")
    window = conv_transpose_window(ctx, kernel_dims)
    if any(len(values) != count for values in window):
        return unknown
    kernel, strides, dilations, padding = window
    spatial: list = []
    for i in range(count):
        if sizes[i] is None or type(kernel[i]) is not int:
            spatial.append(None)
            continue
        extent = (kernel[i] - 1) * dilations[i] + 1
        spatial.append(transposed_length(sizes[i], strides[i], extent + padding[i], pads[i] + pads[i + count]))
    return tuple(spatial)
