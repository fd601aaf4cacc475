"""Attribute defaults as ``AttributeProto`` messages, the form ``onnx.defs`` hands out.

Kept apart from :mod:`opspec.runtime.schema` so that looking schemas up never imports
protobuf; only reading ``Attribute.default_value`` does.
"""
from __future__ import annotations

from typing import Any

from opspec.runtime.schema import Attribute, AttrType

#: The ``AttributeProto`` field that holds a value of each attribute kind with defaults.
_FIELDS = {
    AttrType.FLOAT: "f", AttrType.INT: "i", AttrType.STRING: "s",
    AttrType.FLOATS: "floats", AttrType.INTS: "ints", AttrType.STRINGS: "strings",
}


def default_proto(attribute: Attribute) -> Any:
    """A new ``AttributeProto`` holding ``attribute``'s default.

    Without a default it is empty (``type`` is ``UNDEFINED``), as onnx's is, so
    ``onnx.helper.get_attribute_value`` returns None for it.
    """
    from opspec.generated.opspec_ir_pb2 import AttributeProto

    proto = AttributeProto()
    value = attribute.default
    if value is None:
        return proto
    field = _FIELDS.get(attribute.type)
    if field is None:
        raise TypeError(f"attribute {attribute.name!r}: {attribute.type.spelling} defaults have no proto form")
    proto.name = attribute.name
    proto.type = int(attribute.type)
    if attribute.type is AttrType.STRING:
        proto.s = value.encode()
    elif attribute.type is AttrType.STRINGS:
        proto.strings.extend(item.encode() for item in value)
    elif attribute.type.is_list:
        getattr(proto, field).extend(value)
    else:
        setattr(proto, field, value)
    return proto
