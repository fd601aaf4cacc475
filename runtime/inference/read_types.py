"""Reading value types from the IR: ``TypeProto`` messages and type strings -> plain values.

Dims read from a model become ``int`` (``dim_value``), ``Sym`` (``dim_param``, parsed) or
None (neither).
"""
from __future__ import annotations

from itertools import compress, count
from operator import attrgetter
from typing import Any, Callable, Iterable, Sequence

from opspec.runtime.contract.elements import ELEMENT_TYPES
from opspec.runtime.contract.limits import MAX_DIM
from opspec.runtime.contract.values import (
    LONG_RANK, LongShape, MapType, OptionalType, SequenceType, SparseTensorType, TensorType,
)
from opspec.runtime.inference.raw_dims import RawDims, UnusualDim
from opspec.runtime.ir.codes import TypeCase
from opspec.runtime.ir.model_io import ModelLoadError
from opspec.runtime.shape import Sym, parse_dim
from opspec.runtime.shape.parse import is_name
from opspec.runtime.types import BARE, TypeTerm, parse_type_string

#: Deepest nesting of types read. Each level is two protobuf messages, so what is read can
#: always be written back within protobuf's own parse limit of 100 nested messages.
MAX_TYPE_DEPTH = 40

#: The largest dim a model can hold (``dim_value`` is an int64).
INT64_MAX = MAX_DIM

_TENSOR = TypeCase.TENSOR.field
_SEQUENCE = TypeCase.SEQUENCE.field
_OPTIONAL = TypeCase.OPTIONAL.field
_MAP = TypeCase.MAP.field
_SPARSE_TENSOR = TypeCase.SPARSE_TENSOR.field
_MISSING = object()


class DimParams:
    """Reads ``dim_param`` texts as dims, each text once, recording the names it reads.

    Apart from :class:`DimReader` so that the :class:`RawDims` it serves holds no reference
    back to the reader: a reader is freed as soon as it is let go, with every dim it made,
    not at the cycle collector's next pass over them.
    """

    __slots__ = ("_cache", "names")

    def __init__(self, names: set[str]) -> None:
        self._cache: dict[str | bytes, Any] = {}
        self.names = names

    def __call__(self, text: str | bytes) -> Any:
        """A ``dim_param`` as a dim: a number, or a symbol (an expression or an opaque name)."""
        value = self._cache.get(text, _MISSING)
        if value is _MISSING and type(text) is str and is_name(text):  # the common case: a plain name
            value = self._cache[text] = Sym(text)
            self.names.add(text)
            return value
        if value is _MISSING:
            key = text
            if isinstance(text, bytes):  # invalid UTF-8 arrives as bytes
                text = text.decode("utf-8", "replace")
            try:
                value = parse_dim(text)
            except Exception:  # noqa: BLE001 - a dim_param we cannot read is an opaque name
                value = Sym(text)
            if type(value) is int and not 0 <= value <= INT64_MAX:
                value = Sym(text)
            self._cache[key] = value
            self.names.add(text)
        return value


class DimReader:
    """Reads types, parsing each ``dim_param`` text once and recording it (for the symbol table)."""

    __slots__ = ("_types", "_raw", "names", "encoded_dims", "encoded_types", "param")

    def __init__(self) -> None:
        #: Types read, by their serialized ``TypeProto``: graphs repeat a few types many times.
        self._types: dict[bytes, Any] = {}
        self.names: set[str] = set()
        #: Numbers and plain names read, with their ``dim`` field as written (to seed a ``TypeEncoder``).
        self.encoded_dims: dict[Any, bytes] = {}
        #: Tensor types read whose ``TypeProto`` bytes are what writing them gives (to seed a ``TypeEncoder``).
        self.encoded_types: dict[Any, bytes] = {}
        #: A ``dim_param`` text as a dim.
        self.param = DimParams(self.names)
        #: Dims by their serialized ``Dimension`` bytes: shapes of any rank read at a lookup per dim.
        self._raw = RawDims(self.param, self.names, self.encoded_dims, self.encoded_types)

    def shape(self, shape_proto: Any) -> tuple[Any, ...]:
        try:
            return self._raw.shape(shape_proto)
        except UnusualDim:  # a denotation, unknown fields, two values: read dim by dim
            return self._shape_by_dim(shape_proto)

    def _shape_by_dim(self, shape_proto: Any) -> tuple[Any, ...]:
        dims: list[Any] = []
        for dim in shape_proto.dim:
            which = dim.WhichOneof("value")
            if which == "dim_value":
                value = dim.dim_value
                dims.append(value if value >= 0 else None)
            elif which == "dim_param" and dim.dim_param:
                dims.append(self.param(dim.dim_param))
            else:
                dims.append(None)
        return LongShape(dims) if len(dims) >= LONG_RANK else tuple(dims)

    def type(self, type_proto: Any, depth: int = 0) -> Any:
        """A value type from a ``TypeProto``; None when it says nothing we can use.

        Raises :class:`ModelLoadError` for types nested deeper than ``MAX_TYPE_DEPTH``.
        """
        if depth > MAX_TYPE_DEPTH:
            raise ModelLoadError(f"cannot read the model: a type is nested deeper than {MAX_TYPE_DEPTH} levels")
        which = type_proto.WhichOneof("value")
        if which == _TENSOR:
            tensor = type_proto.tensor_type
            return TensorType(tensor.elem_type, self.shape(tensor.shape) if tensor.HasField("shape") else None)
        if which == _SEQUENCE:
            inner = type_proto.sequence_type
            return SequenceType(self.type(inner.elem_type, depth + 1) if inner.HasField("elem_type") else None)
        if which == _OPTIONAL:
            inner = type_proto.optional_type
            return OptionalType(self.type(inner.elem_type, depth + 1) if inner.HasField("elem_type") else None)
        if which == _MAP:
            inner = type_proto.map_type
            return MapType(inner.key_type, self.type(inner.value_type, depth + 1) if inner.HasField("value_type") else None)
        if which == _SPARSE_TENSOR:
            tensor = type_proto.sparse_tensor_type
            return SparseTensorType(tensor.elem_type,
                                    self.shape(tensor.shape) if tensor.HasField("shape") else None)
        return None

    def value_info(self, value_info: Any) -> Any:
        """The type a ``ValueInfoProto`` declares, or None."""
        if not value_info.HasField("type"):
            return None
        type_proto = value_info.type
        key = type_proto.SerializeToString()
        value = self._types.get(key, _MISSING)
        if value is _MISSING:
            value = self._types[key] = self.type(type_proto)
        return value

    def value_infos(self, value_infos: Sequence[Any], keys: list[bytes] | None = None) -> list[Any]:
        """The types that many ``ValueInfoProto``s declare (None where one declares none), the
        new dims of all their tensor types decoded together; ``keys``, when given, are their
        ``type`` fields serialized."""
        if keys is None:
            keys = [value_info.type.SerializeToString() for value_info in value_infos]
        return self._read_all(keys, value_infos)

    def value_infos_as_written(self, value_infos: Sequence[Any],
                               keys: list[bytes] | None = None) -> tuple[list[Any], frozenset[int]]:
        """What :meth:`value_infos` gives, and the positions of the entries whose type bytes
        are exactly what writing their type gives (no denotation, no unknown field): writing
        another type there has nothing of theirs to keep."""
        if keys is None:
            keys = [value_info.type.SerializeToString() for value_info in value_infos]
        values = self._read_all(keys, value_infos)
        written, types = self.encoded_types.get, self._types
        # Each distinct type once (graphs repeat a few), then the positions holding one of those.
        distinct = set(keys)
        plain_keys = {key for key in distinct if (value := types[key]) is not None and written(value) == key}
        if len(plain_keys) == len(distinct):
            return values, frozenset(range(len(keys)))
        return values, frozenset(compress(count(), map(plain_keys.__contains__, keys)))

    def types_of(self, keys: list[bytes], type_protos: Iterable[Any]) -> list[Any]:
        """The types of ``TypeProto`` messages serialized as ``keys``, read as :meth:`value_infos`
        reads them (together); ``type_protos`` is gone through only if some key is not read
        from its bytes alone."""
        return self._read_all(keys, type_protos, _itself)

    def _read_all(self, keys: list[bytes], messages: Iterable[Any],
                  type_proto: Callable[[Any], Any] = attrgetter("type")) -> list[Any]:
        """The types serialized as ``keys``; ``type_proto`` of each of ``messages`` is the
        ``TypeProto`` of that key (read as a message if its bytes are not read together)."""
        types = self._types
        unseen = set(keys).difference(types)
        if unseen:
            types.update(self._raw.tensor_types(unseen))
            if not types.keys() >= unseen:  # other kinds of types, long or unusual shapes
                for key, message in zip(keys, messages):
                    if key not in types:  # (an absent type reads as an empty one: None)
                        types[key] = self.type(type_proto(message))
        return list(map(types.__getitem__, keys))


def _itself(value: Any) -> Any:
    return value


def type_from_string(text: str) -> Any:
    """The value type a type string denotes (``tensor(int64)`` -> ``TensorType(7, None)``).

    Raises :class:`~opspec.runtime.types.TypeStringError` when it is not well formed.
    """
    return _value_type(parse_type_string(text))


def _value_type(term: TypeTerm) -> Any:
    head = term.head
    if head == "tensor" or head == BARE:
        return TensorType(ELEMENT_TYPES[term.elem], None)
    if head == "sparse_tensor":
        return SparseTensorType(ELEMENT_TYPES[term.elem], None)
    assert term.inner is not None  # seq, optional and map always have one
    if head == "seq":
        return SequenceType(_value_type(term.inner))
    if head == "optional":
        return OptionalType(_value_type(term.inner))
    return MapType(ELEMENT_TYPES[term.elem], _value_type(term.inner))


__all__ = ["DimParams", "DimReader", "INT64_MAX", "MAX_TYPE_DEPTH", "type_from_string"]
