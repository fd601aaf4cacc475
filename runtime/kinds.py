"""The kinds a schema and the rule contract both name: how many values a formal input or output
binds, and what an attribute holds.

A leaf module (it imports only :mod:`enum`), so that the light :mod:`opspec.runtime.schema` and the
contract rules are written against can share these enums without importing each other.
"""
from __future__ import annotations

import enum


class FormalParameterOption(enum.IntEnum):
    """How many actual values a formal input or output binds."""

    Single = 0
    Optional = 1
    Variadic = 2


class AttrType(enum.IntEnum):
    """Attribute kinds, numbered as in the ONNX wire format (AttributeProto.AttributeType)."""

    FLOAT = 1
    INT = 2
    STRING = 3
    TENSOR = 4
    GRAPH = 5
    FLOATS = 6
    INTS = 7
    STRINGS = 8
    TENSORS = 9
    GRAPHS = 10
    SPARSE_TENSOR = 11
    SPARSE_TENSORS = 12
    TYPE_PROTO = 13
    TYPE_PROTOS = 14

    @property
    def spelling(self) -> str:
        """The name used in opdefs YAML (``int``, ``floats``, ``sparse_tensor``...)."""
        return self.name.lower()

    @property
    def is_list(self) -> bool:
        return self in _LIST_TYPES


_LIST_TYPES = frozenset(
    {AttrType.FLOATS, AttrType.INTS, AttrType.STRINGS, AttrType.TENSORS, AttrType.GRAPHS,
     AttrType.SPARSE_TENSORS, AttrType.TYPE_PROTOS}
)

__all__ = ["AttrType", "FormalParameterOption"]
