"""Reading a shape's dims from its serialized bytes, each distinct dim decoded once.

A shape is parsed as a message whose ``dim`` field holds each ``Dimension`` as raw bytes
(one C call for any rank), and each distinct byte string is decoded once per model: a
rank-200,000 shape of a few kinds of dims costs a dictionary lookup per dim. Only the
three forms a writer produces for a plain dim are decoded here (no field, one
``dim_value``, one ``dim_param``); anything else (a denotation, unknown fields, both
fields) is left to the message-based reader, so both readings always agree.
"""
from __future__ import annotations

from itertools import chain, filterfalse
from typing import Any, Callable, Iterable

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError
from google.protobuf.unknown_fields import UnknownFieldSet

from opspec.runtime.contract.values import LONG_RANK, LongShape, TensorType
from opspec.runtime.ir.varint import TruncatedVarint, encode_varint, read_varint
from opspec.runtime.shape import Sym
from opspec.runtime.shape.sym import plain_symbols

_DIM = 0x0A  # TensorShapeProto.dim: field 1, length-delimited
_DIM_VALUE = 0x08  # Dimension.dim_value: field 1, varint
_DIM_PARAM = 0x12  # Dimension.dim_param: field 2, length-delimited
_ELEM_TYPE_KEY = b"\x08"  # TypeProto.Tensor.elem_type: field 1, varint
_INT64_SIGN = 1 << 63
_UINT64_MASK = (1 << 64) - 1


def _raw_message_classes() -> tuple[Any, Any]:
    """Message classes reading ``TensorShapeProto`` bytes, and ``TypeProto`` bytes as far as a
    tensor's element type and shape, with each ``dim`` left as bytes (other fields unread)."""
    proto = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(name="opspec_raw_shape.proto", package="opspec.raw_shape")
    shape = file.message_type.add(name="RawShape")
    shape.field.add(name="dim", number=1, label=proto.LABEL_REPEATED, type=proto.TYPE_BYTES)
    tensor = file.message_type.add(name="RawTensor")
    tensor.field.add(name="elem_type", number=1, label=proto.LABEL_OPTIONAL, type=proto.TYPE_INT32)
    tensor.field.add(name="shape", number=2, label=proto.LABEL_OPTIONAL, type=proto.TYPE_MESSAGE,
                     type_name=".opspec.raw_shape.RawShape")
    type_ = file.message_type.add(name="RawType")
    type_.field.add(name="tensor_type", number=1, label=proto.LABEL_OPTIONAL, type=proto.TYPE_MESSAGE,
                    type_name=".opspec.raw_shape.RawTensor")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return (message_factory.GetMessageClass(pool.FindMessageTypeByName("opspec.raw_shape.RawShape")),
            message_factory.GetMessageClass(pool.FindMessageTypeByName("opspec.raw_shape.RawType")))


_RawShape, _RawType = _raw_message_classes()
#: ``TensorShapeProto.dim`` key and length, by the length of a short ``Dimension`` field.
_FIELD_HEADS = [bytes((_DIM, size)) for size in range(0x80)]


class UnusualDim(Exception):
    """A dim in a form this module does not decode (the caller reads the shape otherwise)."""


def _varint(data: bytes, position: int) -> tuple[int, int]:
    """The varint at ``position`` and the position after it; :class:`UnusualDim` when cut short."""
    try:
        return read_varint(data, position)
    except TruncatedVarint:
        raise UnusualDim from None


def _dimension_field(raw: bytes) -> bytes:
    """``TensorShapeProto.dim`` holding the ``Dimension`` bytes ``raw``."""
    return bytes((_DIM,)) + encode_varint(len(raw)) + raw


class RawDims(dict[bytes, Any]):
    """Raw ``Dimension`` bytes -> dim, filled on first sight. A plain name becomes its symbol
    (and joins ``names``); other ``dim_param`` text (or bytes, when not valid UTF-8) goes to
    ``param``. ``encoded`` gets each number, and each plain name not decoded in bulk, with its
    ``Dimension`` field as a writer writes it (the bytes read, which are canonical for those two
    forms), so such a dim is never encoded again; ``types`` likewise gets tensor types read
    (see :meth:`tensor_types`)."""

    __slots__ = ("param", "names", "encoded", "types", "rewritten")

    def __init__(self, param: Callable[[str | bytes], Any], names: set[str], encoded: dict[Any, bytes],
                 types: dict[Any, bytes]) -> None:
        super().__init__()
        self.param = param
        self.names = names
        self.encoded = encoded
        #: Tensor types read by :meth:`tensor_types`, with the ``TypeProto`` bytes they were read
        #: from where writing the type gives the same message: written back as read.
        self.types = types
        #: Raw dims that a writer writes otherwise (a negative number, an empty or non-plain
        #: ``dim_param``): a shape holding one is not written back from the bytes read.
        self.rewritten: set[bytes] = set()

    def __missing__(self, raw: bytes) -> Any:
        self.decode({raw})
        return self[raw]

    def decode(self, raws: set[bytes], keep_fields: bool = True) -> None:
        """Decode dims not seen before: short plain names and small numbers, the forms models
        are made of, in C-level loops over all of them (a model may hold 10^5 new ones), the
        rest one by one. ``keep_fields`` False leaves small numbers out of ``encoded`` (for a
        long shape, written back from its own bytes); short plain names are left out always
        (a writer encodes one as cheaply as it would look it up)."""
        rest = self._decode_small_numbers(self._decode_names(raws), keep_fields)
        if rest:
            self._decode_each(rest)

    def _decode_names(self, raws: set[bytes]) -> set[bytes]:
        """Decode the short ``dim_param`` fields holding ASCII identifiers; the other dims."""
        params = [raw for raw in raws if raw[:1] == b"\x12" and 2 < len(raw) < 0x80 and raw[1] == len(raw) - 2]
        if not params:
            return raws
        try:
            names = b"\n".join([raw[2:] for raw in params]).decode("ascii").split("\n")
        except UnicodeDecodeError:
            return raws
        if len(names) != len(params) or not all(map(str.isidentifier, names)):
            return raws  # (an identifier holds no line break, so each name is one dim's)
        self.names.update(names)
        self.update(zip(params, plain_symbols(names)))
        return raws.difference(params) if len(params) < len(raws) else set()

    def _decode_small_numbers(self, raws: set[bytes], keep_fields: bool) -> set[bytes]:
        """Decode the ``dim_value`` fields of numbers below 2**21 (varints of one to three bytes)."""
        numbers = [raw for raw in raws if raw[:1] == b"\x08"]
        if not numbers:
            return raws
        one = [raw for raw in numbers if len(raw) == 2 and raw[1] < 0x80]
        two = [raw for raw in numbers if len(raw) == 3 and raw[1] >= 0x80 > raw[2]]
        three = [raw for raw in numbers if len(raw) == 4 and raw[1] >= 0x80 and raw[2] >= 0x80 > raw[3]]
        values = [raw[1] for raw in one] + [raw[1] & 0x7F | raw[2] << 7 for raw in two] + \
            [raw[1] & 0x7F | (raw[2] & 0x7F) << 7 | raw[3] << 14 for raw in three]
        decoded = one + two + three
        self.update(zip(decoded, values))
        if keep_fields:
            self.encoded.update(zip(values, [_FIELD_HEADS[len(raw)] + raw for raw in decoded]))
        return raws.difference(decoded)

    def _decode_each(self, raws: Iterable[bytes]) -> None:
        """Decode dims one by one (any form this module reads); :class:`UnusualDim` after all
        the others are decoded if one is in another form (so what is decoded does not depend
        on the order of ``raws``)."""
        unusual = False
        for raw in raws:
            try:
                self._decode_one(raw)
            except UnusualDim:
                unusual = True
        if unusual:
            raise UnusualDim

    def _decode_one(self, raw: bytes) -> None:
        """Decode one dim; :class:`UnusualDim` when it is in another form."""
        names, encoded, param = self.names, self.encoded, self.param
        dim: Any
        size = len(raw) - 2
        if not raw:
            dim = None
        elif raw[0] == _DIM_PARAM:
            if 0 <= size < 0x7F and raw[1] == size:  # a short text: one byte of length
                text = raw[2:]
            else:
                size, start = _varint(raw, 1)
                if start + size != len(raw):
                    raise UnusualDim
                text = raw[start:]
            try:
                name = text.decode("utf-8")
            except UnicodeDecodeError:
                name = None
            if name is not None and size and name.isascii() and name.isidentifier():
                # a plain name (for ASCII, what ``is_name`` matches)
                names.add(name)
                dim = Sym(name)
                encoded[dim] = bytes((_DIM, size + 2)) + raw if size < 0x7E else _dimension_field(raw)
            else:
                self.rewritten.add(raw)
                dim = None if not size else param(text) if name is None else param(name)
        elif raw[0] == _DIM_VALUE:
            # ``size`` is one less than the varint's length here: the common short ones inline.
            if size == 0 and raw[1] < 0x80:  # one byte: below 128
                dim = raw[1]
            elif size == 1 and raw[1] >= 0x80 and raw[2] < 0x80:  # two bytes: below 16,384
                dim = raw[1] & 0x7F | raw[2] << 7
            elif size == 2 and raw[1] >= 0x80 and raw[2] >= 0x80 and raw[3] < 0x80:  # three: below 2**21
                dim = raw[1] & 0x7F | (raw[2] & 0x7F) << 7 | raw[3] << 14
            else:
                value, end = _varint(raw, 1)
                if end != len(raw):
                    raise UnusualDim
                value &= _UINT64_MASK  # as an int64 field reads it
                if value >= _INT64_SIGN:  # a negative int64: unknown
                    self.rewritten.add(raw)
                    dim = None
                else:
                    dim = value
            if dim is not None:
                encoded[dim] = bytes((_DIM, size + 2)) + raw  # a varint field is at most 11 bytes
        else:
            raise UnusualDim
        self[raw] = dim

    def shape(self, shape_proto: Any) -> tuple[Any, ...]:
        """The dims of a ``TensorShapeProto``; :class:`UnusualDim` when one is in another form."""
        serialized = shape_proto.SerializeToString()
        raws = _RawShape.FromString(serialized).dim[:]  # bytes objects made (and hashed) once
        unseen = {raw for raw in raws if raw not in self}
        if unseen:
            self.decode(unseen, len(raws) < LONG_RANK)
        dims = map(self.__getitem__, raws)
        if len(raws) < LONG_RANK:
            return tuple(dims)
        shape = LongShape(dims)
        if (not self.rewritten or self.rewritten.isdisjoint(raws)) and not len(UnknownFieldSet(shape_proto)):
            shape.encoded = serialized  # what writing the dims gives: written back as read
        return shape

    def tensor_types(self, type_protos: Iterable[bytes]) -> dict[bytes, TensorType]:
        """The tensor types among serialized ``TypeProto``s of short shapes (or none), read
        together: every new dim of all of them is decoded at once. A type left out (another
        kind, a long shape, an unusual dim) is for the message-based reader. A type whose bytes
        are what writing it gives (in content: fields may come in another order) goes into
        ``types`` with them."""
        read: list[tuple[bytes, int, list[bytes] | None]] = []
        for serialized in type_protos:
            try:
                raw_type = _RawType.FromString(serialized)
            except DecodeError:
                continue
            if raw_type.HasField("tensor_type"):
                tensor = raw_type.tensor_type
                if not tensor.HasField("shape"):
                    read.append((serialized, tensor.elem_type, None))
                elif len(tensor.shape.dim) < LONG_RANK:
                    # the dims as a list: each a bytes object that hashes once
                    read.append((serialized, tensor.elem_type, tensor.shape.dim[:]))
        try:
            all_dims = chain.from_iterable([dims for _, _, dims in read if dims])
            self.decode(set(filterfalse(self.__contains__, all_dims)))
        except UnusualDim:
            return {}  # one of them is read otherwise; the others' dims are known now
        get = self.__getitem__
        found = {serialized: TensorType(elem, None if dims is None else tuple(map(get, dims)))
                 for serialized, elem, dims in read}
        rewritten = self.rewritten
        for serialized, elem, dims in read:
            if len(serialized) == _written_size(elem, dims) and (
                    dims is None or not rewritten or rewritten.isdisjoint(dims)):
                self.types.setdefault(found[serialized], serialized)
        return found


def _written_size(elem: int, dims: list[bytes] | None) -> int:
    """The size of a tensor's ``TypeProto`` as a writer writes it, from its element type and
    its ``Dimension`` fields as read, if each is shorter than 128 bytes (a longer one makes the
    size read larger than this). Bytes read of just this size hold nothing else: no unknown or
    repeated field, no denotation, no padded varint, no element type written as 0."""
    size = len(_ELEM_TYPE_KEY) + len(encode_varint(elem)) if elem else 0
    if dims is not None:
        shape = sum(map(len, dims)) + 2 * len(dims)
        size += 1 + len(encode_varint(shape)) + shape
    return 1 + len(encode_varint(size)) + size


__all__ = ["RawDims", "UnusualDim"]
