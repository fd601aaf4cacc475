"""Bodies of tensor operators an older opset lacks or cannot state: Shape ranges, CastLike, Split into a count, Trilu."""
from __future__ import annotations

from opspec.runtime.contract.elements import ElementType
from opspec.runtime.convert.emitter import Emitter, element_of
from opspec.runtime.convert.values import GraphValues, Refusal
from opspec.runtime.convert.work_node import WorkNode
from opspec.runtime.schema import OpSchema


def split_count(node: WorkNode, schema: OpSchema, values: GraphValues) -> list[WorkNode]:
    """Split into ``num_outputs`` chunks of ceil(length / count) (the last one smaller) as Slices,
    for an axis whose length is known only at run time."""
    count = node.value("num_outputs")
    if not count or (len(node.inputs) > 1 and node.inputs[1]):
        raise Refusal("only a split into num_outputs chunks is expanded")
    axis = node.value("axis") or 0
    emit = Emitter(node, values)
    length = emit("Gather", emit("Shape", node.inputs[0]), emit.ints("axis", [axis]), axis=0)
    chunk = emit("Div", emit("Add", length, emit.ints("round_up", [count - 1])), emit.ints("count", [count]))
    bounds = [emit("Mul", chunk, emit.ints("index", [index])) for index in range(count + 1)]
    for index, output in enumerate(node.outputs):
        if output:
            emit("Slice", node.inputs[0], bounds[index], bounds[index + 1], emit.ints("axes", [axis]), out=output)
    return emit.nodes


def trilu(node: WorkNode, schema: OpSchema, values: GraphValues) -> list[WorkNode]:
    """Trilu as a mask of the last two axes: keep (i, j) where j - i >= k (upper) or <= k (lower)."""
    known = values.type_of(node.inputs[0])
    if known is None or known.rank is None or known.rank < 2 or known.elem == ElementType.BOOL:
        raise Refusal("the input's rank is unknown, or it is boolean")
    rank = known.rank
    emit = Emitter(node, values)
    shape = emit("Shape", node.inputs[0])
    zero, one = emit.scalar("zero", 7, 0), emit.scalar("one", 7, 1)
    rows = emit("Range", zero, emit("Squeeze", emit.last(shape, 0, rank - 2, rank - 1), emit.ints("at", [0])), one)
    columns = emit("Range", zero, emit("Squeeze", emit.last(shape, 0, rank - 1, rank), emit.ints("at", [0])), one)
    offset = emit("Sub", emit("Unsqueeze", columns, emit.ints("at", [0])), emit("Unsqueeze", rows, emit.ints("at", [1])))
    k = node.inputs[1] if len(node.inputs) > 1 and node.inputs[1] else emit.scalar("k", 7, 0)
    k = emit("Reshape", k, emit.ints("scalar", [1, 1]))
    upper = node.value("upper")
    keep = emit("Not", emit("Less", offset, k)) if upper is None or upper else emit("Not", emit("Greater", offset, k))
    emit("Where", keep, node.inputs[0], emit("Sub", node.inputs[0], node.inputs[0]), out=node.outputs[0])
    return emit.nodes


def shape_range(node: WorkNode, schema: OpSchema, values: GraphValues) -> list[WorkNode]:
    """Shape with ``start``/``end`` (version 15) as Shape, then Slice."""
    start, end = node.value("start") or 0, node.value("end")
    emit = Emitter(node, values)
    whole = emit("Shape", node.inputs[0])
    bounds = [values.add_constant(f"{node.outputs[0]}_{hint}", 7, (1,), [bound])
              for hint, bound in (("start", start), ("end", 2**63 - 1 if end is None else end), ("axis", 0))]
    emit("Slice", whole, *bounds, out=node.outputs[0])
    return emit.nodes


def cast_like(node: WorkNode, schema: OpSchema, values: GraphValues) -> list[WorkNode]:
    known = values.type_of(node.inputs[1])
    if known is None:
        raise Refusal("the element type of 'target_type' is unknown")
    emit = Emitter(node, values)
    emit("Cast", node.inputs[0], out=node.outputs[0], to=known.elem)
    return emit.nodes
