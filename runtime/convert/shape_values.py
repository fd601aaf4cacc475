"""What a small integer tensor computed at run time holds, element by element, as far as the
nodes making it tell: constants, and dims of other values (``Shape``), carried through
``Concat``, ``Slice``, ``Gather``, ``Unsqueeze``, ``Squeeze`` and ``Identity``.

This is the shape arithmetic exporters write before a ``Reshape`` or ``Expand``; it lets a
version step that depends on a shape's values decide without the values being constants.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union

from opspec.runtime.convert.values import GraphValues
from opspec.runtime.inference.read_attributes import attribute_value


@dataclass(frozen=True)
class Dim:
    """Dim ``index`` of value ``name``, not known as a number."""

    name: str
    index: int


#: One element: a known integer, a dim of a value, or None (unknown).
Element = Union[int, Dim, None]

_STANDARD = ("", "ai.onnx")
#: How far back through producers an element is followed.
_DEPTH = 24


def elements(name: str, values: GraphValues, depth: int = 0) -> list[Element] | None:
    """The elements of the 0-D or 1-D integer value ``name`` (None when its length is unknown)."""
    constant = values.values_of(name)
    if constant is not None:
        dims, items = constant
        if len(dims) > 1:
            return None
        return [item if isinstance(item, int) else None for item in items]
    node = values.producer(name)
    if node is None or node.domain not in _STANDARD or depth > _DEPTH:
        return None
    inputs = list(node.input)
    if node.op_type == "Shape":
        return _shape(node, values)
    if node.op_type == "Identity":
        return elements(inputs[0], values, depth + 1)
    parts = [elements(actual, values, depth + 1) if actual else None for actual in inputs]
    if node.op_type == "Concat":
        if _attribute(node, "axis", 0) not in (0, -1) or any(part is None for part in parts):
            return None
        return [element for part in parts for element in part or []]
    if node.op_type in ("Unsqueeze", "Squeeze"):
        known = values.type_of(inputs[0])
        wanted = 0 if node.op_type == "Unsqueeze" else 1
        if parts[0] is None or len(parts[0]) != 1 or known is None or known.rank != wanted:
            return None
        return parts[0]  # a 0-D value made 1-D of one element, or back
    if node.op_type == "Gather":
        return _gathered(node, parts, values)
    if node.op_type == "Slice":
        return _sliced(node, parts, values)
    return None


def _attribute(node: Any, name: str, default: Any) -> Any:
    for attribute in node.attribute:
        if attribute.name == name:
            return attribute_value(attribute)
    return default


def _shape(node: Any, values: GraphValues) -> list[Element] | None:
    known = values.type_of(node.input[0])
    if known is None or known.dims is None:
        return None
    rank = len(known.dims)
    start, end = (_attribute(node, key, default) for key, default in (("start", 0), ("end", rank)))
    start, end = (min(max(bound + rank if bound < 0 else bound, 0), rank) for bound in (start, end))
    return [known.dims[index] if known.dims[index] is not None else Dim(node.input[0], index)
            for index in range(start, end)]


def _gathered(node: Any, parts: list, values: GraphValues) -> list[Element] | None:
    data = parts[0]
    indices = values.values_of(node.input[1])
    if data is None or indices is None or _attribute(node, "axis", 0) not in (0, -1) or len(indices[0]) > 1:
        return None
    picked = []
    for index in indices[1]:
        if not isinstance(index, int) or not -len(data) <= index < len(data):
            return None
        picked.append(data[index])
    return picked


def _sliced(node: Any, parts: list, values: GraphValues) -> list[Element] | None:
    data = parts[0]
    if data is None:
        return None
    if len(node.input) == 1:  # Slice before 10: bounds are attributes
        bounds = [_attribute(node, key, None) for key in ("starts", "ends", "axes")]
        steps: Any = [1]
    else:
        found = [values.values_of(actual) if actual else None for actual in list(node.input[1:]) + [""] * 3]
        if found[0] is None or found[1] is None:
            return None
        bounds = [list(found[0][1]), list(found[1][1]), list(found[2][1]) if found[2] else None]
        steps = list(found[3][1]) if found[3] else [1]
    starts, ends, axes = bounds
    if starts is None or ends is None or len(starts) != 1 or (axes is not None and list(axes) not in ([0], [-1])):
        return None
    if list(steps) != [1]:
        return None
    return data[int(starts[0]):int(ends[0])]  # step 1: Python's slice clamps as Slice does
