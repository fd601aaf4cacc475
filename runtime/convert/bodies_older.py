"""Bodies in older operators for operators an older opset lacks and onnx gives no usable function
body for: Range of constant inputs (a constant), Einsum (Transpose, Unsqueeze, MatMul or Mul,
ReduceSum).
"""
from __future__ import annotations

import math
import struct

from opspec.runtime.contract.elements import ELEMENT_TYPES
from opspec.runtime.convert.emitter import Emitter
from opspec.runtime.convert.values import GraphValues, Refusal
from opspec.runtime.convert.work_node import WorkNode
from opspec.runtime.schema import OpSchema

_FLOAT, _DOUBLE = ELEMENT_TYPES["float"], ELEMENT_TYPES["double"]
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
    rounded = _float32 if elem == _FLOAT else (lambda value: value)
    floating = elem in (_FLOAT, _DOUBLE)
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
