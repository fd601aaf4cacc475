"""Numbers of the ONNX wire format that reading and writing the IR rely on, as enums.

Element types are :class:`~opspec.runtime.contract.elements.ElementType` and attribute kinds
:class:`~opspec.runtime.schema.AttrType`; both are re-exported here so the IR modules
take every code from one place.
"""
from __future__ import annotations

import enum

from opspec.runtime.contract.elements import ElementType
from opspec.runtime.schema import AttrType


class TypeCase(enum.IntEnum):
    """The cases of ``TypeProto``'s ``value`` oneof, numbered by their protobuf field."""

    TENSOR = 1
    SEQUENCE = 4
    MAP = 5
    OPAQUE = 7
    SPARSE_TENSOR = 8
    OPTIONAL = 9

    @property
    def field(self) -> str:
        """The oneof field's name (``tensor_type``), as ``WhichOneof("value")`` gives it."""
        return _FIELDS[self]

    @classmethod
    def of(cls, type_proto: object) -> TypeCase | None:
        """The case a ``TypeProto`` holds, or None when it holds none."""
        return _BY_FIELD.get(type_proto.WhichOneof("value"))  # type: ignore[attr-defined]


_FIELDS = {TypeCase.TENSOR: "tensor_type", TypeCase.SEQUENCE: "sequence_type", TypeCase.MAP: "map_type",
           TypeCase.OPAQUE: "opaque_type", TypeCase.SPARSE_TENSOR: "sparse_tensor_type",
           TypeCase.OPTIONAL: "optional_type"}
_BY_FIELD: dict[str | None, TypeCase] = {name: case for case, name in _FIELDS.items()}


class DataLocation(enum.IntEnum):
    """Where a tensor's data is (``TensorProto.DataLocation``)."""

    DEFAULT = 0
    EXTERNAL = 1


class WireType(enum.IntEnum):
    """How a protobuf field's value is encoded after its key (the key's low three bits)."""

    VARINT = 0
    FIXED64 = 1
    LENGTH_DELIMITED = 2
    START_GROUP = 3
    END_GROUP = 4
    FIXED32 = 5


#: Attribute kinds that hold graphs.
GRAPH_KINDS = frozenset({AttrType.GRAPH, AttrType.GRAPHS})

__all__ = ["AttrType", "DataLocation", "ElementType", "GRAPH_KINDS", "TypeCase", "WireType"]
