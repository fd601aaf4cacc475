"""Rules for onnxruntime's matrix products with a quantized (packed) weight: MatMulNBits and its
fused forms MatMulNBitsMlp and MatMulNBitsQkv, MatMulBnb4, MatMulFpQ4, the block-scaled FP4 and
FP8 weight products, and GemmFloat8.

The activation A is an ordinary (..., K) tensor; the weight's logical (K, N) is stated by
attributes (or by the packed weight's own dims), never by the packed bytes, so every output is
A's leading dims followed by the output feature count.
"""
from __future__ import annotations

from opspec.runtime.contract import FLOAT, InferenceContext, attribute, element, input, option, rule
from opspec.runtime.contract.elements import UINT8
from opspec.runtime.shape import format_shape, mul_dim


def activation(ctx: InferenceContext):
    """A's shape checked to have rank at least 1 (None when unknown)."""
    shape = ctx.input_shape("A")
    if shape is not None and len(shape) == 0:
        ctx.fail("A is a scalar; it needs at least one axis (the features)")
    return shape


def check_features(ctx: InferenceContext, shape, features, what: str) -> None:
    """A's last dim must equal ``features`` where both are known numbers."""
    if shape is None or not shape:
        return
    last = shape[-1]
    if type(last) is int and type(features) is int and last != features:
        ctx.fail(f"A {format_shape(shape)} has {last} features in its last axis, "
                 f"but {what} is {features}")


def rows_of(shape, features):
    """A's leading dims followed by ``features`` (an unknown rank stays unknown)."""
    if shape is None:
        return None
    return tuple(shape[:-1]) + (features if type(features) is not int or features >= 0 else None,)


def check_vector(ctx: InferenceContext, name: str, size, size_name: str) -> None:
    """Optional input ``name``, when present with a known shape, must be 1-D of ``size``."""
    shape = ctx.input_shape(name)
    if shape is None:
        return
    if len(shape) != 1 or (type(shape[0]) is int and type(size) is int and shape[0] != size):
        ctx.fail(f"{name} {format_shape(shape)} must be a vector of {size_name} = {size} elements")


@rule("matmul_quantized_weight", "A (..., K) times a quantized weight whose K and N are attributes: (..., N), "
      "or (..., K) for an untransposed weight.",
      k=attribute("K"), n=attribute("N"), trans_b=attribute(None, doc="1: the weight is (N, K) (the default)"),
      bias=input(None, doc="optional bias of N elements"))
def matmul_quantized_weight(ctx: InferenceContext) -> None:
    """(..., K) x (K, N) -> (..., N); with ``trans_b`` 0 the roles of K and N swap."""
    k, n = ctx.int_attr("k", -1), ctx.int_attr("n", -1)
    transposed = bool(ctx.int_attr("trans_b", 1))
    inner, outer = (k, n) if transposed else (n, k)
    a = activation(ctx)
    check_features(ctx, a, inner, f"attribute {'K' if transposed else 'N'}")
    bias = ctx.named("bias")
    if bias is not None:
        check_vector(ctx, bias, n, "N")
    ctx.set_output_shape("Y", rows_of(a, outer))


@rule("matmul_nbits", "A (..., K) times a block-quantized (K, N) weight: (..., N); B, scales and zero_points "
      "as K, N, bits and block_size lay them out.",
      k=attribute("K"), n=attribute("N"), bias=input(None, doc="optional bias of N elements"),
      bits=attribute(), block_size=attribute(), prepacked=attribute("weight_prepacked"))
def matmul_nbits(ctx: InferenceContext) -> None:
    """B is (N, k_blocks, block_size * bits / 8) with k_blocks = ceil(K / block_size); scales hold one
    value per block, (N * k_blocks) or (N, k_blocks); zero_points likewise, packed as uint8 into
    ceil(k_blocks * bits / 8) bytes per row. block_size is a power of two of at least 16."""
    matmul_quantized_weight(ctx)
    block = ctx.int_attr("block_size", 0)
    if block < 16 or block & (block - 1):
        ctx.fail(f"block_size {block} must be a power of two of at least 16")
    k, n, bits = ctx.int_attr("k", -1), ctx.int_attr("n", -1), ctx.int_attr("bits", 4)
    if k < 0 or n < 0 or ctx.int_attr("prepacked", 0):
        return  # a prepacked weight has a layout of its own
    blocks = -(-k // block)
    laid_out = f"K={k}, N={n}, bits={bits}, block_size={block}"
    check_layout(ctx, "B", [(n, blocks, block * bits // 8)], laid_out)
    check_layout(ctx, "scales", [(n * blocks,), (n, blocks)], laid_out)
    if ctx.has_input("zero_points"):
        columns = -(-blocks * bits // 8) if ctx.input_elem("zero_points") == UINT8 else blocks
        check_layout(ctx, "zero_points", [(n * columns,), (n, columns)], laid_out)


def check_layout(ctx: InferenceContext, name: str, layouts: list[tuple[int, ...]], laid_out: str) -> None:
    """Input ``name``, when its shape is known, must have one of ``layouts`` (symbolic dims match any size)."""
    shape = ctx.input_shape(name)
    if shape is None:
        return
    for layout in layouts:
        if len(layout) == len(shape) and all(type(d) is not int or d == want for d, want in zip(shape, layout)):
            return
    wanted = " or ".join(format_shape(layout) for layout in layouts)
    ctx.fail(f"{name} {format_shape(shape)} does not match {wanted}, the shape {laid_out} give")


@rule("matmul_nbits_mlp", "Y (..., N) from A (..., K) through the gate and up projections; the residual "
      "sum takes A's shape.", k=attribute("K"), n=attribute("N"))
def matmul_nbits_mlp(ctx: InferenceContext) -> None:
    """Gate and up projections of the (optionally normalized) A, both (K, N)."""
    k, n = ctx.int_attr("k", -1), ctx.int_attr("n", -1)
    a = activation(ctx)
    check_features(ctx, a, k, "attribute K")
    norm_present = ctx.has_input("norm_scale")
    if ctx.has_input("skip") and not norm_present:
        ctx.fail("skip is given without norm_scale; the skip form normalizes A + skip with norm_scale")
    check_vector(ctx, "norm_scale", k, "K")
    for bias in ("gate_bias", "up_bias"):
        check_vector(ctx, bias, n, "N")
    ctx.set_output_shape("Y", rows_of(a, n))
    ctx.set_output_shape("input_skip_bias_sum", a)


@rule("matmul_nbits_qkv", "Q (..., Nq), K and V (..., Nkv) from the normalized A; the residual sum takes "
      "A's shape.", nq=attribute("Nq"), nkv=attribute("Nkv"))
def matmul_nbits_qkv(ctx: InferenceContext) -> None:
    """Three projections of the normalized A: Q to Nq features, K and V to Nkv each."""
    nq, nkv = ctx.int_attr("nq", -1), ctx.int_attr("nkv", -1)
    a = activation(ctx)
    check_vector(ctx, "q_bias", nq, "Nq")
    check_vector(ctx, "k_bias", nkv, "Nkv")
    check_vector(ctx, "v_bias", nkv, "Nkv")
    for name, features in (("Q", nq), ("K", nkv), ("V", nkv)):
        ctx.set_output_shape(name, rows_of(a, features))
    ctx.set_output_shape("input_skip_bias_sum", a)


@rule("matmul_block_scaled_weight", "A (..., K) times the transpose of a 2-D (N, K / per_byte) weight: "
      "(..., N).",
      per_byte=option("int", 1, doc="weight values stored in each element of B"))
def matmul_block_scaled_weight(ctx: InferenceContext) -> None:
    """N is the weight's first dim; its second, times ``per_byte``, must equal A's last."""
    per_byte = ctx.option("per_byte", 1)
    a, b = ctx.input_shape("A"), ctx.input_shape("B")
    n = None
    if a is not None and b is not None:  # both known: the operands' ranks are checked together
        activation(ctx)
        if len(b) != 2:
            ctx.fail(f"B {format_shape(b)} must be 2-D (N, K / {per_byte})")
        check_features(ctx, a, mul_dim(b[1], per_byte), f"K of weight {format_shape(b)} (x{per_byte})")
    if b is not None and len(b) == 2:
        n = b[0]
    ctx.set_output_shape("Y", rows_of(a, n))


@rule("matmul_fp_q4", "A (..., K) times a packed (K, N) weight whose dims the B_shape input holds: (..., N).",
      b_shape=input("B_shape"))
def matmul_fp_q4(ctx: InferenceContext) -> None:
    """The weight's (K, N) come from B_shape's known values; without them N is unknown."""
    a = ctx.input_shape("A")
    index = ctx.input_arg("b_shape")
    data = ctx.input_data(index) if index is not None else None
    n = None
    if data is not None:
        if data.shape != (2,):
            ctx.fail(f"B_shape must be a vector of two values (K, N), got shape {format_shape(data.shape)}")
        k, n = (element(v) for v in data.values)
        if any(type(v) is int and v < 0 for v in (k, n)):
            ctx.fail(f"B_shape ({k}, {n}) holds a negative dim")
        a = activation(ctx)
        check_features(ctx, a, k, "B_shape's K")
        check_fp_q4_blob(ctx, k, n)
    ctx.set_output_shape("Y", rows_of(a, n))


#: MatMulFpQ4's block formats by blk_quant_type: (values per block, bytes per block). Each block
#: holds its 4-bit values, a float32 scale and, for the format with offsets, one offset byte; a
#: type without a format of its own takes the default one (32 values with offset).
_FP_Q4_BLOCKS = {0: (32, 20), 1: (32, 21), 2: (64, 36), 4: (128, 68)}


def check_fp_q4_blob(ctx: InferenceContext, k, n) -> None:
    """B, a 1-D blob, must hold exactly N * ceil(K / block) blocks of the format blk_quant_type names."""
    blob = ctx.input_shape("B")
    if blob is None or type(k) is not int or type(n) is not int:
        return
    if len(blob) != 1:
        ctx.fail(f"B {format_shape(blob)} must be a 1-D byte blob")
    kind = ctx.attribute("blk_quant_type", 1)
    values, size = _FP_Q4_BLOCKS.get(kind if type(kind) is int else 1, _FP_Q4_BLOCKS[1])
    expected = n * -(-k // values) * size
    if type(blob[0]) is int and blob[0] != expected:
        ctx.fail(f"B holds {blob[0]} bytes, but B_shape (K={k}, N={n}) with blk_quant_type {kind} "
                 f"({values} values in {size} bytes per block) needs {expected}")


@rule("gemm_float8", "(M, K) x (K, N) with optional transposes, in the element type 'dtype' names.",
      transA=attribute(), transB=attribute(), dtype=attribute())
def gemm_float8(ctx: InferenceContext) -> None:
    """Both operands are matrices; the result's rows come from A and its columns from B."""
    a, b = ctx.input_shape("A"), ctx.input_shape("B")
    if a is not None and b is not None:
        for name, shape in (("A", a), ("B", b)):
            if len(shape) != 2:
                ctx.fail(f"{name} {format_shape(shape)} must be a matrix (rank 2)")
    m = None if a is None or len(a) != 2 else a[1 if ctx.flag_attr("transA") else 0]
    n = None if b is None or len(b) != 2 else b[0 if ctx.flag_attr("transB") else 1]
    ctx.set_output_shape("Y", (m, n), ctx.elem_attr("dtype", FLOAT))

