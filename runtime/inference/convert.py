"""Protobuf <-> plain values: types, tensors and attributes, read once and written once.

Dims read from a model become ``int`` (``dim_value``), ``Sym`` (``dim_param``, parsed) or
None (neither). Types are written back as serialized ``TypeProto`` bytes, cached per
type, so writing a large graph is mostly a byte join and one protobuf parse.
"""
from __future__ import annotations

import struct
from typing import Any, Iterable

from opspec.runtime.contract.values import (
    Data,
    MapType,
    OptionalType,
    SequenceType,
    SparseTensorType,
    TensorType,
    TensorValue,
)
from opspec.runtime.contract.elements import DATA_FLOAT_ELEMS as _FLOAT_ELEMS
from opspec.runtime.contract.elements import DATA_INT_ELEMS as INT_ELEMS
from opspec.runtime.contract.elements import ELEMENT_TYPES
from opspec.runtime.contract.limits import DATA_LIMIT, FLOAT_DATA_LIMIT, MAX_DIM
from opspec.runtime.shape import Sym, parse_dim
from opspec.runtime.ir.model_io import ModelLoadError

#: Deepest nesting of types read. Each level is two protobuf messages, so what is read can
#: always be written back within protobuf's own parse limit of 100 nested messages.
MAX_TYPE_DEPTH = 40

#: The largest dim a model can hold (``dim_value`` is an int64).
INT64_MAX = MAX_DIM
_RAW_FORMATS = {1: "f", 2: "B", 3: "b", 4: "H", 5: "h", 6: "i", 7: "q", 9: "?", 10: "e", 11: "d", 12: "I",
                13: "Q", 16: "H"}  # bfloat16: raw 16-bit patterns, widened below
_EXTERNAL = 1  # TensorProto.DataLocation.EXTERNAL

# AttributeProto.AttributeType numbers.
_FLOAT, _INT, _STRING, _TENSOR, _GRAPH, _FLOATS, _INTS, _STRINGS, _TENSORS, _GRAPHS = range(1, 11)
_SPARSE_TENSOR, _SPARSE_TENSORS, _TYPE_PROTO, _TYPE_PROTOS = 11, 12, 13, 14


# --------------------------------------------------------------------------- reading types

class DimReader:
    """Parses ``dim_param`` texts once each and records them (for the symbol table)."""

    __slots__ = ("_cache", "names")

    def __init__(self) -> None:
        self._cache: dict[str, Any] = {}
        self.names: set[str] = set()

    def param(self, text: str) -> Any:
        value = self._cache.get(text, _MISSING)
        if value is _MISSING:
            if type(text) is not str:  # invalid UTF-8 arrives as bytes
                text = text.decode("utf-8", "replace")
            try:
                value = parse_dim(text)
            except Exception:  # noqa: BLE001 - a dim_param we cannot read is an opaque name
                value = Sym(text)
            if type(value) is int and not 0 <= value <= INT64_MAX:
                value = Sym(text)
            self._cache[text] = value
            self.names.add(text)
        return value

    def shape(self, shape_proto: Any) -> tuple:
        dims = []
        for dim in shape_proto.dim:
            which = dim.WhichOneof("value")
            if which == "dim_value":
                value = dim.dim_value
                dims.append(value if value >= 0 else None)
            elif which == "dim_param" and dim.dim_param:
                dims.append(self.param(dim.dim_param))
            else:
                dims.append(None)
        return tuple(dims)

    def type(self, type_proto: Any, depth: int = 0) -> Any:
        """A value type from a ``TypeProto``; None when it says nothing we can use.

        Raises :class:`ModelLoadError` for types nested deeper than ``MAX_TYPE_DEPTH``.
        """
        if depth > MAX_TYPE_DEPTH:
            raise ModelLoadError(f"cannot read the model: a type is nested deeper than {MAX_TYPE_DEPTH} levels")
        which = type_proto.WhichOneof("value")
        if which == "tensor_type":
            tensor = type_proto.tensor_type
            return TensorType(tensor.elem_type, self.shape(tensor.shape) if tensor.HasField("shape") else None)
        if which == "sequence_type":
            inner = type_proto.sequence_type
            return SequenceType(self.type(inner.elem_type, depth + 1) if inner.HasField("elem_type") else None)
        if which == "optional_type":
            inner = type_proto.optional_type
            return OptionalType(self.type(inner.elem_type, depth + 1) if inner.HasField("elem_type") else None)
        if which == "map_type":
            inner = type_proto.map_type
            return MapType(inner.key_type, self.type(inner.value_type, depth + 1) if inner.HasField("value_type") else None)
        if which == "sparse_tensor_type":
            tensor = type_proto.sparse_tensor_type
            return SparseTensorType(tensor.elem_type,
                                    self.shape(tensor.shape) if tensor.HasField("shape") else None)
        return None

    def value_info(self, value_info: Any) -> Any:
        return self.type(value_info.type) if value_info.HasField("type") else None


_MISSING = object()


# --------------------------------------------------------------------------- tensors

def tensor_type(tensor: Any) -> TensorType:
    return TensorType(tensor.data_type, tuple(tensor.dims))


def initializer_data(tensor: Any) -> Data | None:
    """The data an initializer carries into inference: small integer tensors (shapes, axes,
    sizes) and very small floating-point ones (scales); None for anything else."""
    elem = tensor.data_type
    if elem in INT_ELEMS:
        return tensor_data(tensor, INT_ELEMS)
    if elem in _FLOAT_ELEMS:
        return tensor_data(tensor, _FLOAT_ELEMS, FLOAT_DATA_LIMIT)
    return None


def tensor_data(tensor: Any, elems: frozenset | None = None, limit: int = DATA_LIMIT) -> Data | None:
    """A small tensor's contents as :class:`Data` (None when too big, external or unreadable).

    ``elems`` restricts the element types read (default: integers and floats).
    """
    elem = tensor.data_type
    if elems is not None and elem not in elems:
        return None
    if elem not in INT_ELEMS and elem not in _FLOAT_ELEMS:
        return None
    dims = tuple(tensor.dims)
    count = 1
    for dim in dims:
        count *= dim
    if count > limit or count < 0 or tensor.data_location == _EXTERNAL:
        return None
    raw = tensor.raw_data
    if raw:
        code = _RAW_FORMATS.get(elem)
        if code is None or len(raw) != count * struct.calcsize(code):
            return None
        values = struct.unpack(f"<{count}{code}", raw)
        if elem == 16:
            values = tuple([_bfloat16(bits) for bits in values])
    elif elem == 7:
        values = tuple(tensor.int64_data)
    elif elem in (12, 13):
        values = tuple(tensor.uint64_data)
    elif elem == 1:
        values = tuple(tensor.float_data)
    elif elem == 11:
        values = tuple(tensor.double_data)
    elif elem == 10:
        values = tuple([_float16(bits) for bits in tensor.int32_data])
    elif elem == 16:
        values = tuple([_bfloat16(bits) for bits in tensor.int32_data])
    else:
        values = tuple(tensor.int32_data)
    if len(values) != count:
        return None
    if elem == 9:
        values = tuple(int(bool(v)) for v in values)
    return Data(dims, values)


def _float16(bits: int) -> float:
    return struct.unpack("<e", struct.pack("<H", bits & 0xFFFF))[0]


def _bfloat16(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", (bits & 0xFFFF) << 16))[0]


def tensor_value(tensor: Any) -> TensorValue:
    return TensorValue(tensor_type(tensor), tensor_data(tensor))


def sparse_tensor_value(sparse: Any) -> TensorValue:
    """A sparse tensor attribute as its dense type, with dense data when small and readable."""
    dense = TensorType(sparse.values.data_type, tuple(sparse.dims))
    return TensorValue(dense, _dense_data(sparse, dense.shape))


def _dense_data(sparse: Any, shape: tuple) -> Data | None:
    """The dense contents of a small sparse tensor: zeros with the given values placed."""
    count = 1
    for dim in shape:
        count *= dim
    if count > DATA_LIMIT:
        return None
    values = tensor_data(sparse.values)
    indices = tensor_data(sparse.indices, INT_ELEMS)
    if values is None or indices is None:
        return None
    values, positions = values.values, list(indices.values)
    if len(indices.shape) == 2:  # coordinates: one row of `rank` indices per value
        rank = indices.shape[1]
        positions = []
        for row in range(len(values)):
            position = 0
            for axis in range(rank):
                position = position * shape[axis] + indices.values[row * rank + axis]
            positions.append(position)
    if len(positions) != len(values) or any(not 0 <= p < count for p in positions):
        return None
    dense = [0.0 if values and type(values[0]) is float else 0] * count
    for position, value in zip(positions, values):
        dense[position] = value
    return Data(shape, tuple(dense))


# --------------------------------------------------------------------------- attributes

def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def attribute_kind(attribute: Any) -> int:
    """The attribute's AttrType number, worked out from its fields when ``type`` is unset."""
    kind = attribute.type
    if kind:
        return kind
    for field, number in (("floats", _FLOATS), ("ints", _INTS), ("strings", _STRINGS), ("tensors", _TENSORS),
                          ("graphs", _GRAPHS), ("sparse_tensors", _SPARSE_TENSORS),
                          ("type_protos", _TYPE_PROTOS)):
        if len(getattr(attribute, field)):
            return number
    for field, number in (("f", _FLOAT), ("i", _INT), ("s", _STRING), ("t", _TENSOR), ("g", _GRAPH),
                          ("sparse_tensor", _SPARSE_TENSOR), ("tp", _TYPE_PROTO)):
        if attribute.HasField(field):
            return number
    return 0


def attribute_value(attribute: Any, reader: DimReader | None = None) -> Any:
    """An attribute as a plain Python value; graphs stay protobuf messages."""
    kind = attribute.type or attribute_kind(attribute)
    if kind == _INT:
        return attribute.i
    if kind == _INTS:
        return list(attribute.ints)
    if kind == _FLOAT:
        return attribute.f
    if kind == _STRING:
        return _decode(attribute.s)
    if kind == _FLOATS:
        return list(attribute.floats)
    if kind == _STRINGS:
        return [_decode(s) for s in attribute.strings]
    if kind == _TENSOR:
        return tensor_value(attribute.t)
    if kind == _TENSORS:
        return [tensor_value(t) for t in attribute.tensors]
    if kind == _GRAPH:
        return attribute.g
    if kind == _GRAPHS:
        return list(attribute.graphs)
    if kind == _SPARSE_TENSOR:
        return sparse_tensor_value(attribute.sparse_tensor)
    if kind == _SPARSE_TENSORS:
        return [sparse_tensor_value(t) for t in attribute.sparse_tensors]
    reader = reader or DimReader()
    if kind == _TYPE_PROTO:
        return reader.type(attribute.tp)
    if kind == _TYPE_PROTOS:
        return [reader.type(t) for t in attribute.type_protos]
    return None


def attribute_values(attributes: Any) -> dict[str, Any]:
    """Every attribute a node sets, by name."""
    return {attribute.name: attribute_value(attribute) for attribute in attributes}


# --------------------------------------------------------------------------- type strings

def type_from_string(text: str) -> Any:
    """The value type a type string denotes (``tensor(int64)`` -> ``TensorType(7, None)``)."""
    text = text.replace(" ", "")
    head, _, rest = text.partition("(")
    inner = rest[:-1]
    if head == "tensor":
        return TensorType(ELEMENT_TYPES[inner], None)
    if head == "sparse_tensor":
        return SparseTensorType(ELEMENT_TYPES[inner], None)
    if head == "seq":
        return SequenceType(type_from_string(inner))
    if head == "optional":
        return OptionalType(type_from_string(inner))
    if head == "map":
        key, _, value = inner.partition(",")
        return MapType(ELEMENT_TYPES[key], type_from_string(value))
    raise ValueError(f"not a type string: {text!r}")


# --------------------------------------------------------------------------- writing types

def _varint(value: int) -> bytes:
    if value < 0:
        value &= 0xFFFFFFFFFFFFFFFF
    if value < 0x80:
        return bytes((value,))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(tag: int, payload: bytes) -> bytes:
    return bytes((tag,)) + _varint(len(payload)) + payload


def _shape_bytes(shape: tuple) -> bytes:
    parts = []
    for dim in shape:
        if dim is None:
            parts.append(b"\x0a\x00")
        elif type(dim) is int:
            parts.append(_field(0x0A, b"\x08" + _varint(dim)) if 0 <= dim <= INT64_MAX else b"\x0a\x00")
        else:
            parts.append(_field(0x0A, _field(0x12, str(dim).encode("utf-8"))))
    return b"".join(parts)


def _tensor_bytes(elem: int, shape: tuple | None) -> bytes:
    body = b"\x08" + _varint(elem) if elem else b""
    if shape is not None:
        body += _field(0x12, _shape_bytes(shape))
    return body


class TypeEncoder:
    """Serializes value types as ``TypeProto`` bytes, remembering each type it has seen."""

    __slots__ = ("_cache",)

    def __init__(self) -> None:
        self._cache: dict[Any, bytes] = {}

    def __call__(self, value: Any) -> bytes:
        try:
            return self._cache[value]
        except KeyError:
            pass
        encoded = self._encode(value)
        self._cache[value] = encoded
        return encoded

    def _encode(self, value: Any) -> bytes:
        kind = type(value)
        if kind is TensorType:
            return _field(0x0A, _tensor_bytes(value.elem, value.shape))
        if kind is SparseTensorType:
            return _field(0x42, _tensor_bytes(value.elem, value.shape))
        if kind is SequenceType:
            return _field(0x22, _field(0x0A, self(value.elem)) if value.elem is not None else b"")
        if kind is OptionalType:
            return _field(0x4A, _field(0x0A, self(value.elem)) if value.elem is not None else b"")
        if kind is MapType:
            body = (b"\x08" + _varint(value.key) if value.key else b"")
            if value.value is not None:
                body += _field(0x12, self(value.value))
            return _field(0x2A, body)
        return b""


def graph_value_infos(encoder: TypeEncoder, entries: Iterable[tuple[str, Any]]) -> bytes:
    """Serialized ``GraphProto`` bytes holding only ``value_info`` entries (to merge into a graph)."""
    out = bytearray()
    type_fields: dict[Any, bytes] = {}  # value type -> its serialized ``type`` field
    by_id: dict[int, bytes] = {}  # the same, by object: values mostly share type objects
    for name, value in entries:
        type_field = by_id.get(id(value))
        if type_field is None:
            type_field = type_fields.get(value)
            if type_field is None:
                type_field = type_fields[value] = _field(0x12, encoder(value))
            by_id[id(value)] = type_field
        name_bytes = name.encode("utf-8") if type(name) is str else bytes(name)  # invalid UTF-8 arrives as bytes
        size = len(name_bytes)
        body_size = size + 2 + len(type_field)
        if body_size < 0x80:  # every length fits in one byte: the common case
            out += b"j%c\n%c%b%b" % (body_size, size, name_bytes, type_field)
        else:
            body = _field(0x0A, name_bytes) + type_field
            out += b"j" + _varint(len(body)) + body
    return bytes(out)


def write_type(type_proto: Any, value: Any, encoder: TypeEncoder) -> None:
    """Replace ``type_proto``'s content with ``value``, keeping its denotations where they still fit."""
    denotation = type_proto.denotation
    old_dims = None
    if type_proto.WhichOneof("value") == "tensor_type" and type_proto.tensor_type.HasField("shape"):
        old_dims = [dim.denotation for dim in type_proto.tensor_type.shape.dim]
    type_proto.Clear()
    type_proto.MergeFromString(encoder(value))
    if denotation:
        type_proto.denotation = denotation
    if old_dims and any(old_dims) and type(value) is TensorType and value.shape is not None \
            and len(value.shape) == len(old_dims):
        for dim, text in zip(type_proto.tensor_type.shape.dim, old_dims):
            if text:
                dim.denotation = text


def dim_out_of_range(value: Any) -> int | None:
    """The first known dim of ``value`` (a type) that no model can hold (not in 0..2**63-1), if any."""
    while value is not None:
        kind = type(value)
        if kind is TensorType or kind is SparseTensorType:
            for dim in value.shape or ():
                if type(dim) is int and not 0 <= dim <= INT64_MAX:
                    return dim
            return None
        value = value.value if kind is MapType else getattr(value, "elem", None) if kind in (
            SequenceType, OptionalType) else None
    return None


def without_bad_dims(value: Any) -> Any:
    """``value`` with every dim that :func:`dim_out_of_range` would report made unknown."""
    kind = type(value)
    if kind is TensorType or kind is SparseTensorType:
        if value.shape is None:
            return value
        return kind(value.elem, tuple(None if type(d) is int and not 0 <= d <= INT64_MAX else d
                                      for d in value.shape))
    if kind is SequenceType or kind is OptionalType:
        return kind(without_bad_dims(value.elem))
    if kind is MapType:
        return MapType(value.key, without_bad_dims(value.value))
    return value


def is_informative(value: Any) -> bool:
    """False for a type that says nothing (unknown element type and rank)."""
    if value is None:
        return False
    if type(value) is TensorType:
        return bool(value.elem) or value.shape is not None
    return True


__all__ = [
    "DATA_LIMIT", "DimReader", "INT64_MAX", "INT_ELEMS", "MAX_TYPE_DEPTH", "TypeEncoder", "attribute_kind",
    "dim_out_of_range", "initializer_data", "without_bad_dims", "attribute_value", "attribute_values",
    "graph_value_infos", "is_informative", "sparse_tensor_value", "tensor_data", "tensor_type", "tensor_value",
    "type_from_string", "write_type",
]
