"""Bodies in older operators for operators an older opset lacks and onnx gives no usable function
body for: Range of constant inputs (a constant), Einsum (Transpose, Unsqueeze, MatMul or Mul,
ReduceSum), GridSample (GatherElements of the pixels around each position, weighed).
"""
from __future__ import annotations

import math
import struct

from opspec.runtime.contract.elements import ElementType
from opspec.runtime.convert.emitter import Emitter
from opspec.runtime.convert.values import GraphValues, Refusal
from opspec.runtime.convert.work_node import WorkNode
from opspec.runtime.schema import OpSchema

#: The most elements a Range folded into a constant may have.
RANGE_LIMIT = 1 << 16


def _float32(value: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", value))[0])


def range_constant(node: WorkNode, schema: OpSchema, values: GraphValues) -> list[WorkNode]:
    """Range of constant inputs as the constant it gives (onnx's body is a Loop, which older opsets
    have, but whose trip count they cannot take from a scalar the same way): the count is
    ``ceil((limit - start) / delta)``, the values ``start`` then each the one before plus ``delta``,
    rounded to the element type at each step as onnxruntime adds them."""
    found = [values.values_of(name) for name in node.inputs[:3]]
    if len(found) < 3 or any(item is None or len(item[1]) != 1 for item in found):
        raise Refusal("start, limit and delta must be constant scalars to be folded into a constant")
    elem = values.constants[node.inputs[0]].data_type
    start, limit, delta = (item[1][0] for item in found if item is not None)
    if delta == 0:
        raise Refusal("delta is 0")
    rounded = _float32 if elem == ElementType.FLOAT else (lambda value: value)
    floating = elem in (ElementType.FLOAT, ElementType.DOUBLE)
    count = max(math.ceil(rounded(limit - start) / delta), 0) if floating else max(-(-(limit - start) // delta), 0)
    if count > RANGE_LIMIT:
        raise Refusal(f"the range has {count} elements, more than the {RANGE_LIMIT} folded into a constant")
    items, value = [], start
    for _ in range(count):
        items.append(value)
        value = rounded(value + delta)
    constant = values.add_constant(f"{node.outputs[0]}_range", elem, (count,), items)
    emit = Emitter(node, values)
    emit("Identity", constant, out=node.outputs[0])
    return emit.nodes


def _terms(node: WorkNode) -> tuple[list[str], str]:
    """The operands' subscripts and the output's, from the equation (refused for ellipses and
    repeated subscripts within one operand, which take diagonals)."""
    equation = node.value("equation")
    text = (equation.decode() if isinstance(equation, bytes) else str(equation or "")).replace(" ", "")
    if "..." in text:
        raise Refusal("an equation with an ellipsis is not written in older operators")
    left, arrow, output = text.partition("->")
    terms = left.split(",")
    if len(terms) != len(node.inputs) or not all(term.isalpha() or not term for term in terms + [output]):
        raise Refusal("the equation does not name each input's axes by letters")
    if any(len(set(term)) != len(term) for term in terms + [output]):
        raise Refusal("a letter repeated in one term takes a diagonal, which is not written in older operators")
    if not arrow:
        output = "".join(sorted(letter for letter in set(left) - {","} if left.count(letter) == 1))
    if any(letter not in left for letter in output):
        raise Refusal("the output names a letter no input has")
    return terms, output


def einsum(node: WorkNode, schema: OpSchema, values: GraphValues) -> list[WorkNode]:
    """Einsum as a matrix product where two operands share one summed letter and keep every other,
    otherwise as the broadcast product of every operand, its summed letters reduced."""
    terms, output = _terms(node)
    for term, name in zip(terms, node.inputs):
        known = values.type_of(name)
        if known is not None and known.rank is not None and known.rank != len(term):
            raise Refusal(f"'{name}' has rank {known.rank}, and the equation names {len(term)} axes")
    emit = Emitter(node, values)
    if len(terms) == 2:
        product = _matrix_product(emit, node, terms, output)
        if product is not None:
            return product
    summed = [letter for letter in dict.fromkeys("".join(terms)) if letter not in output]
    order = output + "".join(summed)
    operands = [_laid_out(emit, name, term, order) for name, term in zip(node.inputs, terms)]
    result = operands[0]
    for operand in operands[1:]:
        result = emit("Mul", result, operand)
    if summed:
        emit("ReduceSum", result, out=node.outputs[0], axes=list(range(len(output), len(order))), keepdims=0)
    else:
        emit("Identity", result, out=node.outputs[0])
    return emit.nodes


def _laid_out(emit: Emitter, name: str, term: str, order: str) -> str:
    """``name`` with its axes in the order of ``order`` and a 1 for each letter it lacks."""
    perm = sorted(range(len(term)), key=lambda axis: order.index(term[axis]))
    if perm != list(range(len(term))):
        name = emit("Transpose", name, perm=perm)
    missing = [position for position, letter in enumerate(order) if letter not in term]
    return emit("Unsqueeze", name, axes=missing) if missing else name


def _matrix_product(emit: Emitter, node: WorkNode, terms: list[str], output: str) -> list[WorkNode] | None:
    """Two operands summed over one shared letter, every other letter kept: MatMul over the last
    two axes, the letters both keep and those of one operand but one as broadcast batch axes."""
    left, right = terms
    summed = [letter for letter in left if letter in right and letter not in output]
    batch = "".join(letter for letter in output if letter in left and letter in right)
    own_left = "".join(letter for letter in left if letter not in right)
    own_right = "".join(letter for letter in right if letter not in left)
    if len(summed) != 1 or any(letter not in output for letter in own_left + own_right):
        return None
    row, column = own_left[-1:] or "1", own_right[-1:] or "2"
    leading = own_left[:-1] + own_right[:-1] + batch
    a = _laid_out(emit, node.inputs[0], left, leading + row + summed[0])
    b = _laid_out(emit, node.inputs[1], right, leading + summed[0] + column)
    product = emit("MatMul", a, b)
    letters = leading + row + column
    added = [position for position, letter in enumerate(letters) if letter in "12"]
    if added:
        product = emit("Squeeze", product, axes=added)
        letters = "".join(letter for letter in letters if letter not in "12")
    emit("Transpose", product, out=node.outputs[0], perm=[letters.index(letter) for letter in output])
    return emit.nodes




def _text(value: object, default: str) -> str:
    if value is None:
        return default
    return value.decode() if isinstance(value, bytes) else str(value)


def grid_sample(node: WorkNode, schema: OpSchema, values: GraphValues) -> list[WorkNode]:
    """GridSample of a 4-D input, nearest or (bi)linear, with zeros or border padding: the grid's
    coordinates are scaled to pixel positions, and the pixels at the neighbouring whole positions are
    gathered from the input flattened per channel (GatherElements) and weighed. Nearest rounds half
    to even, as Round does; a pixel outside the input counts as 0 (zeros) or is the nearest edge
    pixel, the position first held inside the input (border)."""
    mode = _text(node.value("mode"), str(schema.attributes["mode"].default))
    padding = _text(node.value("padding_mode"), "zeros")
    align = bool(node.value("align_corners"))
    if mode not in ("bilinear", "linear", "nearest"):
        raise Refusal(f"mode {mode!r} is not written in older operators")
    if padding not in ("zeros", "border"):
        raise Refusal(f"padding_mode {padding!r} is not written in older operators")
    known = values.type_of(node.inputs[0])
    if known is None or known.rank != 4 or known.elem not in (ElementType.FLOAT, ElementType.DOUBLE):
        raise Refusal("only a float or double input of rank 4 is written in older operators")
    elem = known.elem
    emit = Emitter(node, values)
    x, grid = node.inputs[0], node.inputs[1]
    shape = emit("Shape", x)
    height = emit("Gather", shape, emit.scalar("at", ElementType.INT64, 2), axis=0)
    width = emit("Gather", shape, emit.scalar("at", ElementType.INT64, 3), axis=0)
    one, half = emit.scalar("one", elem, 1.0), emit.scalar("half", elem, 0.5)

    extents = {size: emit("Cast", size, to=elem) for size in (height, width)}
    zero = emit.scalar("zero", elem, 0.0)

    def position(coordinate: str, size: str) -> str:
        extent = extents[size]
        if align:  # -1 and 1 are the centres of the edge pixels
            scaled = emit("Mul", emit("Mul", emit("Add", coordinate, one), half), emit("Sub", extent, one))
        else:  # -1 and 1 are the outer edges of the edge pixels
            scaled = emit("Mul", emit("Sub", emit("Mul", emit("Add", coordinate, one), extent), one), half)
        if padding == "border":
            scaled = emit("Clip", scaled, zero, emit("Sub", extent, one))
        return scaled

    across = emit("Squeeze", emit.last(grid, 3, 0, 1), emit.ints("axis", [3]))
    down = emit("Squeeze", emit.last(grid, 3, 1, 2), emit.ints("axis", [3]))
    column, row = position(across, width), position(down, height)
    flat = emit("Reshape", x, emit.ints("per_channel", [0, 0, -1]))
    batch_channels = emit("Slice", shape, emit.ints("start", [0]), emit.ints("end", [2]), emit.ints("axis", [0]))
    spread = emit("Concat", batch_channels, emit.ints("one", [1]), axis=0)
    out_shape = emit("Concat", batch_channels, emit("Slice", emit("Shape", across), emit.ints("start", [1]),
                                                    emit.ints("end", [3]), emit.ints("axis", [0])), axis=0)

    def pixels(columns: str, rows: str) -> str:
        """The input's pixels at whole positions ``columns``, ``rows`` (of the input's float type,
        [N, Ho, Wo]), as [N, C, Ho, Wo]."""
        held = [emit("Cast", emit("Clip", place, zero, emit("Sub", extents[size], one)), to=ElementType.INT64)
                for place, size in ((columns, width), (rows, height))]
        index = emit("Add", emit("Mul", held[1], width), held[0])
        index = emit("Expand", emit("Reshape", index, emit.ints("flat", [0, 1, -1])), spread)
        found = emit("Reshape", emit("GatherElements", flat, index, axis=2), out_shape)
        if padding == "border":
            return found
        inside = emit("And", emit("And", emit("Not", emit("Less", columns, zero)), emit("Less", columns, extents[width])),
                      emit("And", emit("Not", emit("Less", rows, zero)), emit("Less", rows, extents[height])))
        inside = emit("Unsqueeze", inside, emit.ints("channel", [1]))
        return emit("Where", inside, found, zero)

    if mode == "nearest":
        emit("Identity", pixels(emit("Round", column), emit("Round", row)), out=node.outputs[0])
        return emit.nodes
    left, top = emit("Floor", column), emit("Floor", row)
    right, bottom = emit("Add", left, one), emit("Add", top, one)
    right_weight, bottom_weight = emit("Sub", column, left), emit("Sub", row, top)
    left_weight, top_weight = emit("Sub", one, right_weight), emit("Sub", one, bottom_weight)
    total = ""
    for columns, rows, weights in ((left, top, (left_weight, top_weight)), (right, top, (right_weight, top_weight)),
                                   (left, bottom, (left_weight, bottom_weight)),
                                   (right, bottom, (right_weight, bottom_weight))):
        weight = emit("Unsqueeze", emit("Mul", *weights), emit.ints("channel", [1]))
        term = emit("Mul", pixels(columns, rows), weight)
        total = emit("Add", total, term) if total else term
    emit("Identity", total, out=node.outputs[0])
    return emit.nodes
