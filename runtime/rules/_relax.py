"""Relaxing value types: the most specific type that covers several (TensorFlow's ``Relax``)."""
from __future__ import annotations

from opspec.runtime.contract import MapType, OptionalType, SequenceType, SparseTensorType, TensorType
from opspec.runtime.shape import relax_shapes


def relax_types(a, b):
    """The most specific type that covers both ``a`` and ``b``; None (unknown) when either is."""
    if a is None or b is None:
        return None
    if a == b:
        return a
    kind = type(a)
    if kind is not type(b):
        return None
    if kind is TensorType or kind is SparseTensorType:
        elem = a.elem if a.elem == b.elem else 0
        return kind(elem, relax_shapes(a.shape, b.shape))
    if kind is SequenceType or kind is OptionalType:
        return kind(relax_types(a.elem, b.elem))
    if kind is MapType:
        return MapType(a.key if a.key == b.key else 0, relax_types(a.value, b.value))
    return None
