"""Rules for sequences and optionals: element types and element shapes.

A sequence's element type covers every tensor it may hold: elements that differ in a dim
leave that dim unknown (relaxed), so nothing is claimed that one element contradicts.
"""
from __future__ import annotations

from opspec.runtime.contract import (
    BOOL,
    FLOAT,
    INT64,
    InferenceContext,
    OptionalType,
    SequenceType,
    TensorType,
    attribute,
    input,
    rule,
)
from opspec.runtime.rules._relax import relax_types
from opspec.runtime.shape import format_shape


def _element(ctx: InferenceContext, name: str):
    """The element type of sequence input ``name`` (None when unknown)."""
    value = ctx.input_type(name)
    return value.elem if type(value) is SequenceType else None


@rule("sequence_construct", "A sequence whose element type covers every input tensor.")
def sequence_construct(ctx: InferenceContext) -> None:
    types = [ctx.input_type(i) for i in range(ctx.input_count)]
    element = types[0] if types else None
    for other in types[1:]:
        element = relax_types(element, other)
    if element is None and types and type(types[0]) is TensorType:
        element = TensorType(types[0].elem, None)
    ctx.set_output("output_sequence", SequenceType(element))


@rule("sequence_empty", "An empty sequence of the 'dtype' attribute's element type (float by default).",
      dtype=attribute())
def sequence_empty(ctx: InferenceContext) -> None:
    ctx.set_output("output", SequenceType(TensorType(ctx.elem_attr("dtype", FLOAT), None)))


@rule("sequence_insert", "The sequence's element type, relaxed to cover the inserted tensor.")
def sequence_insert(ctx: InferenceContext) -> None:
    element, tensor = _element(ctx, "input_sequence"), ctx.input_type("tensor")
    if element is not None and tensor is not None:
        if type(element) is TensorType and type(tensor) is TensorType and element.elem and tensor.elem \
                and element.elem != tensor.elem:
            ctx.fail(f"cannot insert a tensor of element type {tensor.elem} into a sequence of {element.elem}")
        ctx.set_output("output_sequence", SequenceType(relax_types(element, tensor)))
    else:
        known = element if element is not None else tensor
        ctx.set_output("output_sequence",
                       SequenceType(TensorType(known.elem, None) if type(known) is TensorType else None))



@rule("sequence_at", "One element: the sequence's element type.")
def sequence_at(ctx: InferenceContext) -> None:
    element = _element(ctx, "input_sequence")
    if element is not None:
        ctx.set_output("tensor", element)


@rule("sequence_same", "The input sequence's type (elements removed or kept, never changed).")
def sequence_same(ctx: InferenceContext) -> None:
    if type(ctx.input_type("input_sequence")) is SequenceType:
        ctx.set_output("output_sequence", ctx.input_type("input_sequence"))


@rule("sequence_length", "A scalar int64: how many tensors the sequence holds.")
def sequence_length(ctx: InferenceContext) -> None:
    ctx.set_output_shape("length", (), INT64)


@rule("split_to_sequence", "Pieces of the input along 'axis': equal lengths when known, else an unknown length.",
      axis=attribute(), keepdims=attribute(), split=input())
def split_to_sequence(ctx: InferenceContext) -> None:
    x = ctx.input_shape("input")
    elem = ctx.input_elem("input")
    if x is None:
        ctx.set_output("output_sequence", SequenceType(TensorType(elem, None)))
        return
    axis = ctx.normalize_axis(ctx.int_attr("axis", 0), len(x))
    index = ctx.input_arg("split")
    if index is None:  # pieces of length 1
        piece = x[:axis] + ((1,) if ctx.int_attr("keepdims", 1) else ()) + x[axis + 1:]
        ctx.set_output("output_sequence", SequenceType(TensorType(elem, piece)))
        return
    values, data = ctx.input_values(index), ctx.input_data(index)
    length = None
    split_shape = ctx.input_shape(index)
    if (values is not None and all(type(v) is int for v in values) and split_shape is not None
            and len(split_shape) == 1 and type(x[axis]) is int and sum(values) != x[axis]):
        ctx.fail(f"the split lengths {list(values)} add up to {sum(values)}, not to the {x[axis]} elements "
                 f"of axis {axis} of {format_shape(x)}")
    if values is not None and values and all(type(v) is int for v in values):
        if len(set(values)) == 1 and (len(values) > 1 or ctx.input_shape(index) != ()):
            length = values[0]  # a list of equal lengths
        elif ctx.input_shape(index) == () or (data is not None and data.shape == ()):
            size = values[0]  # one length for all pieces: the last one may be shorter, unless it divides
            if type(x[axis]) is int and size > 0 and x[axis] % size == 0:
                length = size
            elif type(x[axis]) is not int and size == 1:
                length = 1
    ctx.set_output("output_sequence", SequenceType(TensorType(elem, x[:axis] + (length,) + x[axis + 1:])))


@rule("concat_from_sequence", "The elements joined along 'axis' (or stacked along a new one), their count unknown.",
      axis=attribute(required=True), new_axis=attribute())
def concat_from_sequence(ctx: InferenceContext) -> None:
    element = _element(ctx, "input_sequence")
    if type(element) is not TensorType or element.shape is None:
        ctx.set_output_shape("concat_result", None, element.elem if type(element) is TensorType else None)
        return
    shape = element.shape
    stack = ctx.flag_attr("new_axis")
    rank = len(shape) + (1 if stack else 0)
    axis = ctx.normalize_axis(ctx.int_attr("axis", 0), rank)
    if stack:
        out = shape[:axis] + (None,) + shape[axis:]
    else:
        out = shape[:axis] + (None,) + shape[axis + 1:]
    ctx.set_output_shape("concat_result", out, element.elem)


@rule("optional", "An optional of the input's type, or of the 'type' attribute's when there is no input.",
      type=attribute())
def optional(ctx: InferenceContext) -> None:
    if ctx.has_input("input"):
        ctx.set_output("output", OptionalType(ctx.input_type("input")))
        return
    declared = ctx.attr("type")
    if declared is None:
        ctx.fail("an Optional without input needs the 'type' attribute")
    ctx.set_output("output", OptionalType(declared))


@rule("optional_get_element", "The optional's value type; a tensor or sequence passes through.")
def optional_get_element(ctx: InferenceContext) -> None:
    value = ctx.input_type("input")
    if type(value) is OptionalType:
        if value.elem is not None:
            ctx.set_output("output", value.elem)
    elif value is not None:
        ctx.set_output("output", value)


@rule("optional_has_element", "A scalar bool.")
def optional_has_element(ctx: InferenceContext) -> None:
    ctx.set_output_shape("output", (), BOOL)


@rule("sequence_map", "Sequences of the body's outputs, the body inferred on one element of each sequence input.",
      body=attribute())
def sequence_map(ctx: InferenceContext) -> None:
    given = []
    for index in range(ctx.input_count):
        value = ctx.input_type(index)
        given.append(value.elem if type(value) is SequenceType else value if index else None)
    result = ctx.infer_subgraph(ctx.named("body"), tuple(given))
    if result is None:
        return
    if len(result.outputs) != ctx.output_count:
        ctx.fail(f"the body gives {len(result.outputs)} outputs but the node has {ctx.output_count}")
    for index, value in enumerate(result.outputs):
        ctx.set_output(index, SequenceType(value))
