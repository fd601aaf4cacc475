"""The rule of onnxruntime's GatherBlockQuantized: a Gather from a block-quantized table that
dequantizes what it gathers.

``data`` is quantized in blocks of ``block_size`` along ``quantize_axis``; ``scales`` (and the
optional ``zero_points``) hold one value per block. uint8 data packs 8 / ``bits`` values into
each byte along the quantized axis, so that axis grows by that factor in the output; int4,
uint4, FP8 and FP4 data hold one value per element. FP8 and FP4 tables are symmetric (no zero
points), may use one block for the whole axis (``block_size`` 0) and may share a scale along
any other axis (a scales dim of 1).
"""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext, attribute, rule
from opspec.runtime.contract.elements import UINT8, ElementType
from opspec.runtime.shape import format_shape, mul_dim

INT4_ELEMS = frozenset(int(t) for t in (ElementType.UINT4, ElementType.INT4))
#: The float8 types and float4e2m1.
FLOAT_CODE_ELEMS = frozenset(int(t) for t in (ElementType.FLOAT8E4M3FN, ElementType.FLOAT8E4M3FNUZ,
                                              ElementType.FLOAT8E5M2, ElementType.FLOAT8E5M2FNUZ,
                                              ElementType.FLOAT4E2M1))

UINT8_BITS = (2, 4, 8)


def values_per_element(elem: int, bits: int) -> int | None:
    """How many quantized values one element of ``data`` holds (None when unknown)."""
    if elem == UINT8:
        return 8 // bits if bits in UINT8_BITS else None
    return 1 if elem else None


def check_attributes(ctx: InferenceContext, elem: int, bits: int, block_size: int, gather: int,
                     quantize: int) -> None:
    """block_size, bits and the axes as the data's element type allows them."""
    floats = elem in FLOAT_CODE_ELEMS
    power_of_two = block_size >= 16 and block_size & (block_size - 1) == 0
    if not power_of_two and not (block_size == 0 and (floats or not elem)):
        ctx.fail(f"block_size {block_size} must be a power of 2 of at least 16 (or 0 for FP8 or FP4 data)")
    if elem == UINT8:
        if bits not in UINT8_BITS:
            ctx.fail(f"bits {bits} must be 2, 4 or 8 for uint8 data")
        if gather != 0:
            ctx.fail(f"gather_axis {gather} must be 0 for uint8 data")
        if bits < 8 and gather == quantize:
            ctx.fail("gather_axis and quantize_axis must differ for packed uint8 data "
                     f"(bits {bits}); both are {gather}")
    elif elem in INT4_ELEMS and bits != 4:
        ctx.fail(f"bits {bits} must be 4 for int4 and uint4 data")


def check_scales(ctx: InferenceContext, data, scales, quantize: int, per_element, block_size: int,
                 shared: bool) -> None:
    """One scale per block along the quantized axis; along the others one per row (or, when
    ``shared`` allows it, as for FP8 and FP4 data, a shared 1)."""
    if len(scales) != len(data):
        ctx.fail(f"scales {format_shape(scales)} must have the rank of data {format_shape(data)}")
    for axis, (d, s) in enumerate(zip(data, scales)):
        if type(d) is not int or type(s) is not int:
            continue
        if axis == quantize:
            if per_element is None:
                continue
            blocks = 1 if block_size == 0 else -(-d * per_element // block_size)
            ok = s == blocks
        else:
            ok = s == d or (shared and s == 1)
        if not ok:
            ctx.fail(f"scales {format_shape(scales)} do not fit data {format_shape(data)} with block_size "
                     f"{block_size} along quantize_axis {quantize} (axis {axis})")


def check_zero_points(ctx: InferenceContext, scales, quantize: int, elem: int, bits: int) -> None:
    """Zero points take the scales' shape; packed uint8 ones may hold 8 / bits per byte along the
    quantized axis."""
    if not ctx.has_input("zero_points"):
        return
    if elem in FLOAT_CODE_ELEMS:
        ctx.fail("zero_points must not be given for FP8 or FP4 data: their quantization is symmetric")
    zero_points = ctx.input_shape("zero_points")
    if zero_points is None or not elem:  # packing depends on the element type
        return
    if len(zero_points) != len(scales):
        ctx.fail(f"zero_points {format_shape(zero_points)} must have the rank of scales {format_shape(scales)}")
    for axis, (z, s) in enumerate(zip(zero_points, scales)):
        if type(z) is not int or type(s) is not int or z == s:
            continue
        packed = elem == UINT8 and bits in (2, 4) and axis == quantize and z == -(-s * bits // 8)
        if not packed:
            ctx.fail(f"zero_points {format_shape(zero_points)} do not fit scales {format_shape(scales)} "
                     f"(axis {axis})")


def gathered_shape(data, indices, gather: int, quantize: int, per_element):
    """data's shape with the gathered axis replaced by indices' shape and the quantized axis
    unpacked."""
    out = list(data[:gather]) + list(indices) + list(data[gather + 1:])
    if quantize != gather:
        position = quantize if quantize < gather else quantize + len(indices) - 1
        out[position] = mul_dim(out[position], per_element) if per_element is not None else None
    return tuple(out)


@rule("gather_block_quantized", "Gather along 'gather_axis' from block-quantized data: indices' shape "
      "spliced in, the packed 'quantize_axis' unpacked, in the scales' element type.",
      gather_axis=attribute(), quantize_axis=attribute(), block_size=attribute(), bits=attribute())
def gather_block_quantized(ctx: InferenceContext) -> None:
    """Gather's shape, with uint8's quantized axis multiplied by 8 / bits."""
    data, indices, scales = ctx.input_shape("data"), ctx.input_shape("indices"), ctx.input_shape("scales")
    elem = ctx.input_elem("data")
    bits, block_size = ctx.int_attr("bits", 4), ctx.int_attr("block_size", 128)
    gather, quantize = ctx.int_attr("gather_axis", 0), ctx.int_attr("quantize_axis", 1)
    if data is None or indices is None:
        ctx.set_output_shape("output", None)
        return
    rank = len(data)
    checked = scales is not None  # the checks need every operand's rank, as a gather of them would
    if checked and rank <= 1:
        ctx.fail(f"data {format_shape(data)} must have rank 2 or more")
    if not (-rank <= gather < rank and -rank <= quantize < rank):
        if checked:
            ctx.fail(f"gather_axis {gather} and quantize_axis {quantize} must lie in [{-rank}, {rank - 1}]")
        ctx.set_output_shape("output", None)
        return
    gather, quantize = gather % rank, quantize % rank
    per_element = values_per_element(elem, bits)
    if checked:
        check_attributes(ctx, elem, bits, block_size, gather, quantize)
        check_scales(ctx, data, scales, quantize, per_element, block_size, elem in FLOAT_CODE_ELEMS or not elem)
        check_zero_points(ctx, scales, quantize, elem, bits)
    if elem == UINT8 and per_element != 1 and gather == quantize:
        ctx.set_output_shape("output", None)
        return
    if elem == UINT8 and per_element != 1 and quantize != rank - 1:
        # uint8 packs along the last axis while the blocks run along another: say neither size
        out = gathered_shape(data, indices, gather, quantize, None)
        ctx.set_output_shape("output", out[:-1] + (None,))
        return
    ctx.set_output_shape("output", gathered_shape(data, indices, gather, quantize, per_element))


