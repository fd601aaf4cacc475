"""Elementwise rules: outputs shaped like an input, or like the broadcast of all inputs.

Besides shapes these rules propagate known data (small tensors such as shapes and
sizes) element by element, with the functions of :mod:`._elementdata`.
"""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext, TensorType, attribute, option, rule
from opspec.runtime.contract.elements import ELEMENT_BITS, element_name
from opspec.runtime.rules._binarydata import binary_data
from opspec.runtime.rules._dims import named_where_undecided
from opspec.runtime.rules._elementdata import unary_data
from opspec.runtime.shape import Shape, ShapeError, broadcast_shapes, format_shape, merge_shapes

#: ``compute`` choices of ``elementwise``: identity, cast, and the unary element functions.
UNARY_COMPUTE = ("identity", "cast", "neg", "abs", "floor", "ceil", "sqrt", "reciprocal", "not")
#: ``compute`` choices of ``broadcast``.
BINARY_COMPUTE = ("add", "sub", "mul", "div", "mod", "pow", "max", "min", "equal", "less", "greater", "and",
                  "or", "where")


@rule("elementwise", "Every output takes the shape of the first input.",
      dtype=attribute(None, doc="attribute holding the output element type (as Cast's 'to')"),
      compute=option("string", choices=UNARY_COMPUTE,
                     doc="how known input data maps to output data, for data propagation"),
      passes_input_type=True)
def elementwise(ctx: InferenceContext) -> None:
    """Every output takes input 0's shape; ``dtype`` names an attribute giving the elem type."""
    source = ctx.input_type(0)
    elem = ctx.elem_attr("dtype")
    if source is not None and type(source) is not TensorType and elem is None:
        for index in range(ctx.output_count):  # a sequence or optional passes through whole
            ctx.set_output(index, source)
    else:
        shape = ctx.input_shape(0)
        ctx.set_output_shape(0, shape, elem)
        for index in range(1, ctx.output_count):
            ctx.set_output_shape(index, shape)
    compute = ctx.option("compute")
    if compute is not None:
        data = ctx.input_data(0)
        if data is not None:
            result = unary_data(data, compute, ctx.output_elem(0))
            if result is not None:
                ctx.set_output_data(0, result)


@rule("broadcast", "Outputs take the numpy-style broadcast of all inputs' shapes.",
      compute=option("string", choices=BINARY_COMPUTE,
                     doc="how known input data combines into output data, for data propagation"),
      fmod=attribute(None, doc="attribute choosing the remainder with the dividend's sign (Mod's 'fmod')"))
def broadcast(ctx: InferenceContext) -> None:
    """Outputs take the multidirectional broadcast of every input's shape."""
    count = ctx.input_count
    operands: tuple[Shape, ...]
    if count == 2:
        operands = (ctx.input_shape(0), ctx.input_shape(1))
        shape = broadcast_shapes(*operands)
    else:
        operands = tuple(ctx.input_shape(i) for i in range(count))
        shape = broadcast_shapes(*operands)
    if shape is not None and None in shape:
        shape = named_where_undecided(ctx, shape, *operands)
    for index in range(ctx.output_count):
        ctx.set_output_shape(index, shape)
    compute = ctx.option("compute")
    if compute is not None and count and ctx.input_data(0) is not None:
        datas = [ctx.input_data(i) for i in range(count)]
        if None not in datas:
            fmod = compute == "mod" and ctx.flag_attr("fmod")
            result = binary_data(datas, compute, ctx.output_elem(0), fmod)
            if result is not None:
                ctx.set_output_data(0, result)


@rule("broadcast_legacy", "Second input broadcast onto the first when 'broadcast' is set, aligned at 'axis'.",
      broadcast=attribute(), axis=attribute())
def broadcast_legacy(ctx: InferenceContext) -> None:
    """Before numpy broadcasting: equal shapes, or B stretched onto A (at ``axis``) when enabled."""
    a, b = ctx.input_shape(0), ctx.input_shape(1)
    enabled = ctx.flag_attr("broadcast")
    if not enabled:
        try:
            shape = merge_shapes(a, b)
        except ShapeError:
            ctx.fail(f"shapes {format_shape(a)} and {format_shape(b)} must be equal "
                     "when 'broadcast' is not set")
    elif a is None or b is None:
        shape = a
    else:
        axis = ctx.attr("axis")
        start = len(a) - len(b) if axis is None else ctx.normalize_axis(axis, max(len(a), 1))
        if start < 0 or start + len(b) > len(a):
            where = "" if axis is None else f" at axis {axis}"
            ctx.fail(f"cannot broadcast {format_shape(b)} onto {format_shape(a)}{where}")
        out = list(a)
        for offset, dim in enumerate(b):
            if type(dim) is not int or dim == 1:
                continue  # unknown, symbolic or 1: nothing the output can use
            target = out[start + offset]
            if type(target) is int and target != dim:
                where = f" at axis {axis}" if axis is not None else ""
                ctx.fail(f"cannot broadcast {format_shape(b)} onto {format_shape(a)}{where}: "
                         f"dims {dim} and {target} differ")
            out[start + offset] = dim
        shape = tuple(out)
    for index in range(ctx.output_count):
        ctx.set_output_shape(index, shape)


@rule("same_shape", "All inputs must share one shape, which every output takes.")
def same_shape(ctx: InferenceContext) -> None:
    """All inputs must have one shape (merged across them), which every output takes."""
    shapes = [ctx.input_shape(i) for i in range(ctx.input_count)]
    shape = shapes[0] if shapes else None
    for other in shapes[1:]:
        if other is not shape and other != shape:
            try:
                shape = merge_shapes(shape, other)
            except ShapeError:
                ctx.fail("inputs must share one shape, got "
                         + ", ".join(format_shape(s) for s in shapes))
    for index in range(ctx.output_count):
        ctx.set_output_shape(index, shape)


@rule("cast_like", "Input 0's shape (and known data) in the element type of input 1.")
def cast_like(ctx: InferenceContext) -> None:
    """CastLike: the target element type comes from the second input's type, not an attribute."""
    elem = ctx.input_elem("target_type") or ctx.output_elem("output")
    ctx.set_output_shape("output", ctx.input_shape("input"), elem)
    data = ctx.input_data("input")
    if data is not None and elem:
        result = unary_data(data, "cast", elem)
        if result is not None:
            ctx.set_output_data("output", result)


@rule("bit_cast", "Input 0's shape, its bits read as the element type of the 'to' attribute (same width).",
      to=attribute(required=True, doc="the attribute holding the target element type"))
def bit_cast(ctx: InferenceContext) -> None:
    """BitCast: one output element per input element, so the widths must agree."""
    target, source = ctx.elem_attr("to"), ctx.input_elem("input")
    target_bits, source_bits = ELEMENT_BITS.get(target or 0), ELEMENT_BITS.get(source)
    if target is not None and target_bits is None:
        ctx.fail(f"cannot reinterpret bits as {element_name(target)}, which has no fixed width")
    if target is not None and target_bits and source_bits and target_bits != source_bits:
        ctx.fail(f"{element_name(source)} has {source_bits} bits and {element_name(target)} has {target_bits}; "
                 "a bit cast needs equal widths")
    ctx.set_output_shape("output", ctx.input_shape("input"), target)
