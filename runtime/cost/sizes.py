"""Sizes of values: element counts and bytes, exact or symbolic, None when not known."""
from __future__ import annotations

from typing import Any

from opspec.runtime.contract.elements import ELEMENT_BITS
from opspec.runtime.contract.values import TensorType

__all__ = ["Size", "add_sizes", "element_count", "tensor_bytes", "value_bytes"]

#: An int, a symbolic dim (``Sym``) or None (unknown).
Size = Any


def element_count(shape: tuple[Any, ...] | None) -> Size:
    """The product of a shape's dims; None when the rank or a dim is unknown (unless a dim is 0)."""
    if shape is None:
        return None
    if any(d == 0 for d in shape):
        return 0
    count: Any = 1
    for dim in shape:
        if dim is None:
            return None
        count = count * dim
    return count


def tensor_bytes(elem: int, count: Size) -> Size:
    """Bytes of ``count`` elements of element type ``elem`` (sub-byte types packed, rounded up)."""
    bits = ELEMENT_BITS.get(elem)
    if bits is None or count is None:
        return None
    if bits % 8 == 0:
        return count * (bits // 8)
    total = count * bits
    return -(-total // 8) if type(total) is int else total.ceildiv(8)


def value_bytes(value_type: Any) -> Size:
    """Bytes a value of this type holds; None unless it is a tensor of known element type and shape."""
    if type(value_type) is not TensorType:
        return None
    return tensor_bytes(value_type.elem, element_count(value_type.shape))


def add_sizes(a: Size, b: Size) -> Size:
    """``a + b``; unknown when either is."""
    if a is None or b is None:
        return None
    return a + b
