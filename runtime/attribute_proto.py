"""Attribute defaults as ``AttributeProto`` messages, the form ``onnx.defs`` hands out.

Kept apart from :mod:`opspec.runtime.schema` so that looking schemas up never imports
protobuf; only reading ``Attribute.default_value`` does.
"""
from __future__ import annotations

from typing import Any

from opspec.runtime.kinds import AttrType

#: Attribute kinds with defaults: the field that holds the value and whether it holds text.
_FIELDS = {AttrType.FLOAT: ("f", False), AttrType.INT: ("i", False), AttrType.STRING: ("s", True),
           AttrType.FLOATS: ("floats", False), AttrType.INTS: ("ints", False), AttrType.STRINGS: ("strings", True)}



def default_proto(attribute: Any) -> Any:
    """A new ``AttributeProto`` holding the default of ``attribute`` (a schema ``Attribute``).

    Without a default it is empty (``type`` is ``UNDEFINED``), as onnx's is, so
    ``onnx.helper.get_attribute_value`` returns None for it.
    """
    from opspec.generated.opspec_ir_pb2 import AttributeProto

    proto = AttributeProto()
    value = attribute.default
    if value is None:
        return proto
    kind = AttrType(attribute.type)
    if kind not in _FIELDS:
        raise TypeError(f"attribute {attribute.name!r}: {attribute.type.spelling} defaults have no proto form")
    field, text = _FIELDS[kind]
    proto.name = attribute.name
    proto.type = int(kind)
    if isinstance(value, (list, tuple)):
        getattr(proto, field).extend(item.encode() if text else item for item in value)
    else:
        setattr(proto, field, value.encode() if text else value)
    return proto
