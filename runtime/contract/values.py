"""Abstract values that inference computes: types (with shapes) and known data.

Plain immutable tuples, cheap to build and compare; protobuf is touched only when a
model is read and when results are written back.
"""
from __future__ import annotations

from collections import namedtuple

from opspec.runtime.contract.elements import ELEMENT_NAMES

#: A tensor: ``elem`` is a TensorProto.DataType number (0 = unknown), ``shape`` a shape
#: (tuple of dims) or None for unknown rank.
TensorType = namedtuple("TensorType", "elem shape")
#: A sparse tensor, described like a dense one.
SparseTensorType = namedtuple("SparseTensorType", "elem shape")
#: A sequence of values of one type (``elem`` None when unknown).
SequenceType = namedtuple("SequenceType", "elem")
#: An optional value of type ``elem``.
OptionalType = namedtuple("OptionalType", "elem")
#: A map from key element type (an int) to value type.
MapType = namedtuple("MapType", "key value")

#: The rank from which a shape read from a model is a :class:`LongShape`.
LONG_RANK = 1024


class LongShape(tuple):  # a tuple of dims, like any shape
    """A shape of high rank, read from a model, that hashes its dims once.

    Inference keys its caches by types, and a plain tuple hashes every dim each time (a call
    per symbolic dim); shapes of 10^5 dims would pay that at every lookup. Equal to, and
    hashing like, the plain tuple of the same dims. Every dim fits in a model (it was read
    from one). ``encoded`` is the serialized ``TensorShapeProto`` when those bytes are exactly
    what writing the dims afresh gives, else None; what rules build from a long shape (a
    slice, a concatenation) is a plain tuple.
    """

    _hash: int
    encoded: bytes | None = None

    def __hash__(self) -> int:
        try:
            return self._hash
        except AttributeError:
            self._hash = value = tuple.__hash__(self)
            return value


#: Data propagated for small integer tensors (shapes, axes, sizes): ``shape`` is the
#: tensor's shape (``()`` for a scalar, ``(n,)`` for a vector) and ``values`` its
#: elements flattened, each an int, a float, a ``Sym`` or None (unknown element).
Data = namedtuple("Data", "shape values")


def type_string(value: object) -> str:
    """The type-string spelling of a value's type (``tensor(float)``), for type checks."""
    if isinstance(value, TensorType):
        return f"tensor({ELEMENT_NAMES.get(value.elem, '?')})"
    if isinstance(value, SparseTensorType):
        return f"sparse_tensor({ELEMENT_NAMES.get(value.elem, '?')})"
    if isinstance(value, SequenceType):
        return f"seq({type_string(value.elem) if value.elem is not None else '?'})"
    if isinstance(value, OptionalType):
        return f"optional({type_string(value.elem) if value.elem is not None else '?'})"
    if isinstance(value, MapType):
        return f"map({ELEMENT_NAMES.get(value.key, '?')},{type_string(value.value)})"  # as FormalParameter.types
    return "?"


class TensorValue(namedtuple("TensorValue", "type data")):
    """A tensor held in an attribute (Constant's ``value``, ConstantOfShape's ``value``).

    ``type`` is its :class:`TensorType` (shape fully known); ``data`` its contents as
    :class:`Data` when the tensor is small and numeric, else None.
    """

    __slots__ = ()

    @property
    def elem(self) -> int:
        return self.type.elem

    @property
    def shape(self) -> tuple:
        return self.type.shape

    @property
    def values(self) -> tuple | None:
        return self.data.values if self.data is not None else None
