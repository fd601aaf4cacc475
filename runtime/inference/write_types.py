"""Writing value types into the IR: a small protobuf writer for ``TypeProto`` and ``value_info``.

Types are serialized by hand (the few fields a type has), each distinct type once, so
writing a large graph's results is mostly a byte join and one protobuf parse.
"""
from __future__ import annotations

from typing import Any, Container, Iterable, Mapping

from opspec.runtime.contract.values import LongShape, MapType, OptionalType, SequenceType, SparseTensorType, TensorType
from opspec.runtime.inference.deferred_types import UnreadType
from opspec.runtime.inference.read_types import INT64_MAX
from opspec.runtime.ir.codes import TypeCase, WireType
from opspec.runtime.ir.varint import encode_varint
from opspec.runtime.shape import Sym

_LENGTH_DELIMITED = int(WireType.LENGTH_DELIMITED)


def _tag(field: int) -> int:
    """The key byte of a length-delimited field (every field written here is one, numbered below 16)."""
    return field << 3 | _LENGTH_DELIMITED


# Field keys: TypeProto's cases, then fields inside them.
_TENSOR, _SEQUENCE, _MAP = _tag(TypeCase.TENSOR), _tag(TypeCase.SEQUENCE), _tag(TypeCase.MAP)
_SPARSE_TENSOR, _OPTIONAL = _tag(TypeCase.SPARSE_TENSOR), _tag(TypeCase.OPTIONAL)
_ELEM_TYPE = b"\x08"  # Tensor.elem_type, Map.key_type: field 1, varint
_SHAPE = _tag(2)  # Tensor.shape, Map.value_type
_INNER = _tag(1)  # Sequence.elem_type, Optional.elem_type
_DIM = _tag(1)  # TensorShapeProto.dim
_DIM_VALUE = b"\x08"  # Dimension.dim_value: field 1, varint
_DIM_PARAM = _tag(2)  # Dimension.dim_param
_UNKNOWN_DIM = bytes((_DIM, 0))
_VALUE_INFO_NAME = _tag(1)  # ValueInfoProto.name
_VALUE_INFO_TYPE = _tag(2)  # ValueInfoProto.type
_GRAPH_VALUE_INFO = _tag(13)  # GraphProto.value_info


def _field(tag: int, payload: bytes) -> bytes:
    return bytes((tag,)) + encode_varint(len(payload)) + payload


def _dim_bytes(dim: Any) -> bytes:
    """One ``Dimension`` field of a shape."""
    if dim is None:
        return _UNKNOWN_DIM
    if type(dim) is int:
        return _field(_DIM, _DIM_VALUE + encode_varint(dim)) if 0 <= dim <= INT64_MAX else _UNKNOWN_DIM
    text = str(dim).encode("utf-8")
    if len(text) < 126:  # both lengths fit in one byte
        return bytes((_DIM, len(text) + 2, _DIM_PARAM, len(text))) + text
    return _field(_DIM, _field(_DIM_PARAM, text))


#: A ``dim`` field's bytes before a ``dim_param`` text, by the text's length (below 126 bytes).
_NAME_HEADS = [bytes((_DIM, size + 2, _DIM_PARAM, size)) for size in range(126)]


def name_fields(names: list[str]) -> tuple[list[bytes], list[bytes]]:
    """The ``Dimension`` fields of names (a ``dim_param`` each), as :func:`shape_bytes` writes
    them, each in two parts (to join with others as they are): the bytes before the name's
    text, and the text. Made in C-level loops when every name is short ASCII text."""
    if names and all(map(str.isascii, names)) and max(map(len, names)) < 126:
        texts = "\n".join(names).encode("ascii").split(b"\n")
        if len(texts) == len(names):  # (no name held a line break)
            return list(map(_NAME_HEADS.__getitem__, map(len, texts))), texts
    return list(map(_dim_bytes, names)), [b""] * len(names)


class DimEncoder(dict[Any, bytes]):
    """Dim -> its encoded ``Dimension`` field, each distinct dim encoded once."""

    __slots__ = ()

    def __missing__(self, dim: Any) -> bytes:
        kind = type(dim)
        if kind is int and 0 <= dim < 0x80:  # the common cases, inlined
            encoded = bytes((_DIM, 2, _DIM_VALUE[0], dim))
        elif kind is Sym and dim.name is not None and len(dim.name) < 126 and dim.name.isascii():
            encoded = bytes((_DIM, len(dim.name) + 2, _DIM_PARAM, len(dim.name))) + dim.name.encode()
        else:
            encoded = _dim_bytes(dim)
        self[dim] = encoded
        return encoded


def shape_bytes(shape: tuple[Any, ...], dims: DimEncoder | None = None) -> bytes:
    """The dims of a shape, each encoded once however often it repeats (ranks may be huge);
    ``dims`` keeps the encodings across shapes."""
    return b"".join(map((DimEncoder() if dims is None else dims).__getitem__, shape))


def _tensor_bytes(elem: int, shape: tuple[Any, ...] | None, dims: DimEncoder) -> bytes:
    body = _ELEM_TYPE + encode_varint(elem) if elem else b""
    if shape is not None:
        encoded = shape.encoded if type(shape) is LongShape else None  # a long shape written as it was read
        body += _field(_SHAPE, shape_bytes(shape, dims) if encoded is None else encoded)
    return body


def tensor_type_bytes(elem: int, dim_fields: bytes) -> bytes:
    """A tensor ``TypeProto`` of element type ``elem`` and a shape of ``dim_fields`` (its
    ``Dimension`` fields, as written)."""
    size = len(dim_fields)
    if size < 0x7C and 0 < elem < 0x80:  # every length one byte: the common case
        return bytes((_TENSOR, size + 4, _ELEM_TYPE[0], elem, _SHAPE, size)) + dim_fields
    return _field(_TENSOR, (_ELEM_TYPE + encode_varint(elem) if elem else b"") + _field(_SHAPE, dim_fields))


class TypeEncoder:
    """Serializes value types as ``TypeProto`` bytes, remembering each type it has seen;
    ``dims`` and ``types`` are encodings known beforehand (``DimReader.encoded_dims`` and
    ``DimReader.encoded_types``: a type read is written back from the bytes it was read from)."""

    __slots__ = ("_cache", "_dims")

    def __init__(self, dims: dict[Any, bytes] | None = None, types: dict[Any, bytes] | None = None) -> None:
        self._cache: dict[Any, bytes] = dict(types or ())
        self._dims = DimEncoder(dims or ())

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
        if kind is UnreadType:  # bytes that are what writing its type gives
            return value.key
        if kind is TensorType:
            return _field(_TENSOR, _tensor_bytes(value.elem, value.shape, self._dims))
        if kind is SparseTensorType:
            return _field(_SPARSE_TENSOR, _tensor_bytes(value.elem, value.shape, self._dims))
        if kind is SequenceType:
            return _field(_SEQUENCE, _field(_INNER, self(value.elem)) if value.elem is not None else b"")
        if kind is OptionalType:
            return _field(_OPTIONAL, _field(_INNER, self(value.elem)) if value.elem is not None else b"")
        if kind is MapType:
            body = (_ELEM_TYPE + encode_varint(value.key) if value.key else b"")
            if value.value is not None:
                body += _field(_SHAPE, self(value.value))
            return _field(_MAP, body)
        return b""


def graph_value_infos(encoder: TypeEncoder, names: Iterable[str], types: Mapping[str, Any],
                      skip: Container[str]) -> tuple[int, bytes]:
    """Serialized ``GraphProto`` bytes holding only ``value_info`` entries (to merge into a
    graph): one per name of ``names`` not in ``skip`` whose type in ``types`` says something,
    in order; and how many entries there are."""
    out = bytearray()
    #: Per type object (values mostly share them): the entry's format with its ``type`` field,
    #: the field's size + 2 and the field (no format for a type that says nothing).
    formats: dict[int, tuple[bytes | None, int, bytes]] = {}
    known_format = formats.get
    get = types.get
    head = bytes((_GRAPH_VALUE_INFO,))
    count = 0
    for name in names:
        if name in skip:
            continue
        value = get(name)
        known = known_format(id(value))  # the type stays alive in ``types`` meanwhile
        if known is None:
            known = formats[id(value)] = _entry_format(encoder, value)
        template, extra, type_field = known
        if template is None:
            continue
        name_bytes = name.encode() if isinstance(name, str) else name  # invalid UTF-8 arrives as bytes
        size = len(name_bytes)
        if size + extra < 0x80:  # every length fits in one byte: the common case
            out += template % (size + extra, size, name_bytes)
        else:
            body = _field(_VALUE_INFO_NAME, name_bytes) + type_field
            out += head + encode_varint(len(body)) + body
        count += 1
    return count, bytes(out)


def _entry_format(encoder: TypeEncoder, value: Any) -> tuple[bytes | None, int, bytes]:
    """How :func:`graph_value_infos` writes an entry of type ``value`` (no format: it writes none)."""
    if value is None or type(value) is TensorType and not value.elem and value.shape is None:
        return None, 0, b""
    type_field = _field(_VALUE_INFO_TYPE, encoder(value))
    escaped = type_field.replace(b"%", b"%%")  # part of the format: a % byte in it (a dim of 37, say) is doubled
    template = bytes((_GRAPH_VALUE_INFO,)) + b"%c" + bytes((_VALUE_INFO_NAME,)) + b"%c%b" + escaped
    return template, len(type_field) + 2, type_field

#: The keys of ``TypeProto.denotation`` (field 6) and ``Dimension.denotation`` (field 3): a
#: serialized type without either byte has no denotation to keep.
_DENOTATION_KEYS = (bytes((_tag(6),)), bytes((_tag(3),)))


def write_type(type_proto: Any, value: Any, encoder: TypeEncoder) -> None:
    """Replace ``type_proto``'s content with ``value``, keeping its denotations where they still fit."""
    old = type_proto.SerializeToString()
    if _DENOTATION_KEYS[0] not in old and _DENOTATION_KEYS[1] not in old:  # nothing to keep: the common case
        type_proto.ParseFromString(encoder(value))
        return
    denotation = type_proto.denotation
    old_dims = None
    if TypeCase.of(type_proto) is TypeCase.TENSOR and type_proto.tensor_type.HasField("shape"):
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


__all__ = ["TypeEncoder", "graph_value_infos", "name_fields", "shape_bytes", "tensor_type_bytes", "write_type"]
