"""Rules for onnxruntime's assorted operators of the com.microsoft domain: the dropout
fusions, IsAllFinite, MurmurHash3, Pad with its own conventions, Unique,
CropAndResize, GridSample, UnfoldTensor, DynamicTimeWarping, Tokenizer, BifurcationDetector,
CDist and Snpe.

Where an output's length depends on the data (Tokenizer, Unique, DynamicTimeWarping), the
rule gives a fresh dim, shared between outputs that have the same length.
"""
from __future__ import annotations

from opspec.runtime.contract import BOOL, FLOAT, InferenceContext, attribute, option, rule
from opspec.runtime.contract.elements import INT32, UINT32
from opspec.runtime.rules._dims import merged
from opspec.runtime.shape import (
    Dim,
    ShapeError,
    add_dim,
    ceil_div_dim,
    div_dim,
    format_shape,
    mul_dim,
    sub_dim,
)

#: Bits of one uint32 word of a bit-packed dropout mask.
_MASK_WORD_BITS = 32


def _element_count(shape: tuple) -> Dim:
    """The product of ``shape``'s dims (symbolic when they are), None when one is unknown."""
    count: Dim = 1
    for dim in shape:
        count = mul_dim(count, dim) if dim is not None else None
        if count is None:
            return None
    return count


@rule("ort_dropout", "output takes data's shape; the optional mask is data's shape, or with 'bitmask' one "
      "uint32 word per 32 elements (ceil(numel / 32),).",
      bitmask=option("bool", False, doc="whether the mask is bit-packed into uint32 words"))
def ort_dropout(ctx: InferenceContext) -> None:
    data = ctx.input_shape("data")
    ctx.set_output_shape("output", data)
    if not ctx.has_output("mask"):
        return
    if not ctx.option("bitmask", False):
        ctx.set_output_shape("mask", data, BOOL)
        return
    count = None if data is None else _element_count(data)
    words = ceil_div_dim(count, _MASK_WORD_BITS) if count is not None else None
    ctx.set_output_shape("mask", (words,), UINT32)


@rule("ort_is_all_finite", "A scalar bool; 'isinf_only' and 'isnan_only' exclude each other.",
      isinf_only=attribute(), isnan_only=attribute())
def ort_is_all_finite(ctx: InferenceContext) -> None:
    if ctx.flag_attr("isinf_only") and ctx.flag_attr("isnan_only"):
        ctx.fail("isinf_only and isnan_only cannot both be set; leave both unset to check for both")
    ctx.set_output_shape("output", (), BOOL)


@rule("ort_murmur_hash3", "One 32-bit hash per element of X: uint32 when 'positive' is 1, else int32.",
      positive=attribute())
def ort_murmur_hash3(ctx: InferenceContext) -> None:
    elem = UINT32 if ctx.int_attr("positive", 1) == 1 else INT32
    ctx.set_output_shape("Y", ctx.input_shape("X"), elem)


@rule("ort_pad", "Each dim grows by its begin and end amounts; pads is (2 * rank,) or (1, 2 * rank).")
def ort_pad(ctx: InferenceContext) -> None:
    source = ctx.input_shape("data")
    pads_shape = ctx.input_shape("pads")
    if pads_shape is not None and (len(pads_shape) not in (1, 2) or len(pads_shape) == 2
                                   and type(pads_shape[0]) is int and pads_shape[0] != 1):
        ctx.fail(f"pads {format_shape(pads_shape)} must be (2 * rank,) or (1, 2 * rank)")
    if source is None:
        ctx.set_output_shape("output", None)
        return
    rank = len(source)
    if pads_shape is not None and type(pads_shape[-1]) is int and pads_shape[-1] != 2 * rank:
        ctx.fail(f"pads {format_shape(pads_shape)} must hold a begin and an end for each axis of "
                 f"{format_shape(source)}")
    pads = ctx.input_values("pads")
    if pads is None or len(pads) != 2 * rank or any(type(p) is not int for p in pads):
        ctx.set_output_shape("output", (None,) * rank)
        return
    out = []
    for axis, dim in enumerate(source):
        grown = add_dim(dim, pads[axis] + pads[axis + rank])
        if type(grown) is int and grown < 0:
            ctx.fail(f"pads {pads[axis]} and {pads[axis + rank]} crop axis {axis} of {format_shape(source)} "
                     "below zero")
        out.append(grown)
    ctx.set_output_shape("output", tuple(out))


@rule("ort_unique", "y and counts: one element per distinct value (a length only data tells); idx: x's shape; x "
      "is 1-D.")
def ort_unique(ctx: InferenceContext) -> None:
    x = ctx.input_shape("x")
    if x is not None and len(x) != 1:
        ctx.fail(f"x {format_shape(x)} must be 1-D; the kernel finds the distinct values of a vector only")
    distinct = ctx.fresh_dim()
    ctx.set_output_shape("y", (distinct,))
    ctx.set_output_shape("idx", x)
    ctx.set_output_shape("counts", (distinct,))


@rule("ort_crop_and_resize", "(num_rois, C, crop_height, crop_width): every region resized to the crop_size input.")
def ort_crop_and_resize(ctx: InferenceContext) -> None:
    x = ctx.input_with_rank("X", 4)
    rois = ctx.input_with_rank("rois", 2)
    indices = ctx.input_with_rank("batch_indices", 1)
    size = ctx.input_with_rank("crop_size", 1)
    if type(rois[1]) is int and rois[1] != 4:
        ctx.fail(f"rois {format_shape(rois)} must hold 4 coordinates per region")
    if type(size[0]) is int and size[0] != 2:
        ctx.fail(f"crop_size {format_shape(size)} must hold 2 values, height and width")
    regions = merged(ctx, "region counts of rois and batch_indices", rois[0], indices[0])
    crop = ctx.input_values("crop_size")
    height, width = crop if crop is not None and len(crop) == 2 else (None, None)
    for value in (height, width):
        if type(value) is int and value <= 0:
            ctx.fail(f"crop_size {list(crop or ())} must be positive")
    ctx.set_output_shape("Y", (regions, x[1], height, width), ctx.input_elem("X") or None)


@rule("ort_grid_sample", "(N, C, H_out, W_out) from a 4-D input and a (N, H_out, W_out, 2) grid, in X's element type.")
def ort_grid_sample(ctx: InferenceContext) -> None:
    x, grid = ctx.input_with_rank("X", 4), ctx.input_with_rank("Grid", 4)
    batch = x[0] if x[0] is not None else grid[0]
    ctx.set_output_shape("Y", (batch, x[1], grid[1], grid[2]), ctx.input_elem("X") or None)


@rule("ort_unfold_tensor", "Axis 'dim', of length L, becomes (L - size) // step + 1 windows, each of 'size' elements "
      "along a new last axis.", dim=attribute(), size=attribute(required=True), step=attribute())
def ort_unfold_tensor(ctx: InferenceContext) -> None:
    size, step = ctx.int_attr("size", 0), ctx.int_attr("step", 1)
    if step <= 0:
        ctx.fail(f"step {step} must be positive")
    if size < 0:
        ctx.fail(f"size {size} must not be negative")
    source = ctx.input_shape("input")
    if source is None:
        ctx.set_output_shape("output", None)
        return
    axis = ctx.normalize_axis(ctx.int_attr("dim", -1), len(source), "dim")
    length = source[axis]
    # a size of 0 is refused where the axis length is known; where it is not, the kernel runs
    # and gives length // step + 1 empty windows
    if type(length) is int and not 0 < size <= length:
        ctx.fail(f"size {size} must be positive and at most axis {axis} of {format_shape(source)}")
    try:
        windows = add_dim(div_dim(sub_dim(length, size), step, evenly=False), 1) if length is not None else None
    except ShapeError:
        windows = None
    ctx.set_output_shape("output", source[:axis] + (windows,) + source[axis + 1:] + (size,))


@rule("ort_dynamic_time_warping", "(2, path length) int32: the row and column of each point of the cheapest path.")
def ort_dynamic_time_warping(ctx: InferenceContext) -> None:
    cost = ctx.input_shape("input")
    if cost is not None and len(cost) not in (2, 3):
        ctx.fail(f"input {format_shape(cost)} must be (M, N) or (1, M, N)")
    ctx.set_output_shape("output", (2, ctx.fresh_dim()), INT32)


def _tokenizer_mode(ctx: InferenceContext) -> None:
    """The attribute checks of onnxruntime's kernel: ``separators`` (when set: a non-empty list) or
    else a non-empty ``tokenexp``, and at most one character per token when splitting into single
    characters (``separators`` [""] or ``tokenexp`` ".")."""
    separators = ctx.attribute("separators")
    if separators is not None:
        if len(separators) == 0:
            ctx.fail("separators is set but empty; give at least one separator, or tokenexp instead")
        by_character = list(separators) == [""]
    else:
        expression = ctx.attribute("tokenexp")
        if expression is None:
            ctx.fail("neither separators nor tokenexp is set; one of them says how to split")
        if expression == "":
            ctx.fail("tokenexp is empty (and separators is not set)")
        by_character = expression == "."
    mincharnum = ctx.attribute("mincharnum")
    if by_character and type(mincharnum) is int and mincharnum > 1:
        ctx.fail(f"mincharnum = {mincharnum} drops every token when splitting into single characters "
                 f"(separators [\"\"] or tokenexp \".\"); it must be 1")


@rule("ort_tokenizer", "X's shape plus an axis as long as the most tokens in a string; an empty X keeps its rank.")
def ort_tokenizer(ctx: InferenceContext) -> None:
    _tokenizer_mode(ctx)
    x = ctx.input_shape("X")
    if x is not None and len(x) not in (1, 2):
        ctx.fail(f"X {format_shape(x)} must be [C] or [N, C]")
    if x is None:
        ctx.set_output_shape("Y", None)
    elif 0 in x:  # an empty input gives [0] or [N, 0]
        ctx.set_output_shape("Y", x[:-1] + (0,))
    elif all(type(d) is int for d in x):
        ctx.set_output_shape("Y", x + (ctx.fresh_dim(),))
    else:
        ctx.set_output_shape("Y", None)  # a dim that may be 0 makes the output one axis shorter


@rule("ort_bifurcation_detector", "tokens: cur_tokens' shape without pred_tokens, else a 1-D length only data tells; "
      "suffix_match_idx: prev_suffix_match_idx's shape.")
def ort_bifurcation_detector(ctx: InferenceContext) -> None:
    if ctx.has_input("pred_tokens"):
        ctx.set_output_shape("tokens", (ctx.fresh_dim(),))
    else:
        ctx.set_output_shape("tokens", ctx.input_shape("cur_tokens"))
    ctx.set_output_shape("suffix_match_idx", ctx.input_shape("prev_suffix_match_idx"))


@rule("ort_cdist", "(M, K): the distance between each row of A (M, N) and each row of B (K, N).")
def ort_cdist(ctx: InferenceContext) -> None:
    a, b = ctx.input_shape("A"), ctx.input_shape("B")
    rows_a = a[0] if a is not None and len(a) == 2 else None
    rows_b = b[0] if b is not None and len(b) == 2 else None
    ctx.set_output_shape("C", (rows_a, rows_b))


@rule("ort_first_output_type", "The first output takes the first input's element type; nothing is known of shapes.")
def ort_first_output_type(ctx: InferenceContext) -> None:
    # a variadic's name stands for its first value
    ctx.set_output_shape("outputs", None, ctx.input_elem("inputs") or None)



@rule("word_conv_embedding", "Y (words, embedding_size): one vector per word of Sequence (words, characters), as many "
      "as W has filters.")
def word_conv_embedding(ctx: InferenceContext) -> None:
    """W is (filters, 1, window, char_embedding) and C (characters, char_embedding); B holds one
    bias per filter; the YAML declares that the attributes, when set, agree with the weights."""
    sequence, weight, bias, table = (ctx.input_shape(name) for name in ("Sequence", "W", "B", "C"))
    if sequence is not None and len(sequence) < 2:
        ctx.fail(f"Sequence {format_shape(sequence)} must have rank 2 or more (words, characters)")
    if weight is not None and len(weight) < 4:
        ctx.fail(f"W {format_shape(weight)} must have rank 4 or more (filters, 1, window, char_embedding)")
    if table is not None and len(table) < 2:
        ctx.fail(f"C {format_shape(table)} must have rank 2 or more (characters, char_embedding)")
    filters = weight[0] if weight is not None else None
    if weight is not None and table is not None:
        merged(ctx, f"C's width {format_shape(table)} and W's axis 3 {format_shape(weight)}", table[1], weight[3])
    if bias is not None:
        if len(bias) != 1 or (type(bias[0]) is int and type(filters) is int and bias[0] != filters):
            ctx.fail(f"B {format_shape(bias)} must be 1-D with one bias per filter of W ({filters})")
    ctx.set_output_shape("Y", (sequence[0] if sequence is not None else None, filters), FLOAT)

