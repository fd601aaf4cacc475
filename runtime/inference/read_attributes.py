"""Reading node attributes from the IR: ``AttributeProto`` -> plain Python values.

Numbers, strings and their lists become Python values, tensors :class:`TensorValue`,
types value types; graphs stay protobuf messages (the subgraph module infers them).
"""
from __future__ import annotations

from operator import methodcaller
from typing import Any, Callable, Iterable, Iterator, Mapping

from opspec.runtime.contract.values import TensorValue
from opspec.runtime.inference.read_tensors import sparse_tensor_value, tensor_value
from opspec.runtime.inference.read_types import DimReader
from opspec.runtime.ir.codes import AttrType

#: Where each kind keeps its value: repeated fields first (an empty list is unset), then singular ones.
_LIST_FIELDS = (("floats", AttrType.FLOATS), ("ints", AttrType.INTS), ("strings", AttrType.STRINGS),
                ("tensors", AttrType.TENSORS), ("graphs", AttrType.GRAPHS),
                ("sparse_tensors", AttrType.SPARSE_TENSORS), ("type_protos", AttrType.TYPE_PROTOS))
_SINGLE_FIELDS = (("f", AttrType.FLOAT), ("i", AttrType.INT), ("s", AttrType.STRING), ("t", AttrType.TENSOR),
                  ("g", AttrType.GRAPH), ("sparse_tensor", AttrType.SPARSE_TENSOR), ("tp", AttrType.TYPE_PROTO))


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def attribute_kind(attribute: Any) -> int:
    """The attribute's kind (an :class:`AttrType`, 0 when it holds nothing), worked out from
    its fields when ``type`` is unset."""
    kind: int = attribute.type
    if kind:
        return kind
    for field, number in _LIST_FIELDS:
        if len(getattr(attribute, field)):
            return number
    for field, number in _SINGLE_FIELDS:
        if attribute.HasField(field):
            return number
    return 0


#: How to read each kind of attribute that needs no :class:`DimReader`.
_READERS: dict[int, Callable[[Any], Any]] = {
    AttrType.INT: lambda a: a.i,
    AttrType.INTS: lambda a: list(a.ints),
    AttrType.FLOAT: lambda a: a.f,
    AttrType.STRING: lambda a: _decode(a.s),
    AttrType.FLOATS: lambda a: list(a.floats),
    AttrType.STRINGS: lambda a: [_decode(s) for s in a.strings],
    AttrType.TENSOR: lambda a: tensor_value(a.t),
    AttrType.TENSORS: lambda a: [tensor_value(t) for t in a.tensors],
    AttrType.GRAPH: lambda a: a.g,
    AttrType.GRAPHS: lambda a: list(a.graphs),
    AttrType.SPARSE_TENSOR: lambda a: sparse_tensor_value(a.sparse_tensor),
    AttrType.SPARSE_TENSORS: lambda a: [sparse_tensor_value(t) for t in a.sparse_tensors],
}


def attribute_value(attribute: Any, reader: DimReader | None = None) -> Any:
    """An attribute as a plain Python value; graphs stay protobuf messages, None for no value."""
    kind = attribute.type or attribute_kind(attribute)
    if kind == AttrType.INT:  # the most common kind, first
        return attribute.i
    read = _READERS.get(kind)
    if read is not None:
        return read(attribute)
    if kind == AttrType.TYPE_PROTO:
        return (reader or DimReader()).type(attribute.tp)
    if kind == AttrType.TYPE_PROTOS:
        reader = reader or DimReader()
        return [reader.type(t) for t in attribute.type_protos]
    return None


def attribute_values(attributes: Any) -> dict[str, Any]:
    """Every attribute a node sets, by name."""
    return {attribute.name: attribute_value(attribute) for attribute in attributes}


def freeze(attributes: dict[str, Any]) -> tuple[Any, ...] | None:
    """Attributes as a hashable key (lists become tuples, values tagged with their type), or
    None when one holds a graph or another message."""
    items = []
    for name, value in attributes.items():
        kind = type(value)
        if kind is list:
            value = tuple(value)
        elif kind is not int and kind is not float and kind is not str and kind is not TensorValue:
            return None  # graphs and other messages: not worth keying on
        items.append((name, kind, value))
    return tuple(items)


_SERIALIZED = methodcaller("SerializeToString")


class AttributeReader:
    """Reads a node's attributes into values and a hashable key (:func:`freeze`), each distinct
    set once: models repeat the same attributes (and the same small constants) many times."""

    __slots__ = ("_seen",)

    #: Attribute sets whose serialized form is longer than this are not kept: each attribute
    #: of them is read when a rule asks for it (:class:`AttributesByName`), and the node's
    #: result is not remembered (few rules look at more than a handful of a large set).
    LARGEST_KEPT = 4096

    def __init__(self) -> None:
        self._seen: dict[tuple[bytes, ...], tuple[dict[str, Any], tuple[Any, ...] | None, tuple[bytes, ...]]] = {}

    #: Sets of at least this many attributes are serialized one attribute at a time, stopping
    #: once past :attr:`LARGEST_KEPT` (a tree ensemble's dozen lists need not be serialized whole
    #: to be found large); smaller ones at once, which is quicker when they are small.
    SERIALIZED_IN_TURN = 6

    def read(self, attributes: Any) -> tuple[Mapping[str, Any], tuple[Any, ...] | None, tuple[bytes, ...] | None]:
        """The values of ``attributes`` (a node's ``AttributeProto`` list) by name, their key by
        value (:func:`freeze`) and their exact key (each attribute's serialized form, which also
        tells apart encodings of the same value; None for a set too large to keep).

        The values are shared between nodes: callers must not change them."""
        protos = attributes[:]  # a slice of a repeated field iterates far quicker
        count = len(protos)
        # Most nodes set one attribute: a tuple made directly is far quicker than from a map.
        if count == 1:
            key: tuple[bytes, ...] = (protos[0].SerializeToString(),)
        elif count < self.SERIALIZED_IN_TURN:
            key = tuple(map(_SERIALIZED, protos))
        else:
            within = _serialized_within(protos, self.LARGEST_KEPT)
            if within is None:
                return AttributesByName(protos), None, None
            key = within
        found = self._seen.get(key)
        if found is None:
            if sum(map(len, key)) > self.LARGEST_KEPT:
                return AttributesByName(protos), None, None
            values = attribute_values(protos)
            frozen = freeze(values) if values else ()
            found = (values, frozen, key)
            if frozen is not None:  # never graphs: each is its own
                self._seen[key] = found
        return found


def _serialized_within(protos: list[Any], limit: int) -> tuple[bytes, ...] | None:
    """Each attribute's serialized form, or None as soon as together they pass ``limit`` bytes."""
    parts = []
    total = 0
    for proto in protos:
        part = proto.SerializeToString()
        total += len(part)
        if total > limit:
            return None
        parts.append(part)
    return tuple(parts)


class AttributesByName(Mapping[str, Any]):
    """A node's attributes by name, each read from its message when first asked for (the last
    of a repeated name wins, as in :func:`attribute_values`)."""

    __slots__ = ("_protos", "_values")

    def __init__(self, protos: Iterable[Any]) -> None:
        self._protos = {proto.name: proto for proto in protos}
        self._values: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        values = self._values
        if name in values:
            return values[name]
        value = values[name] = attribute_value(self._protos[name])
        return value

    def get(self, name: str, default: Any = None) -> Any:  # rules ask for absent names often: no KeyError
        values = self._values
        if name in values:
            return values[name]
        proto = self._protos.get(name)
        if proto is None:
            return default
        value = values[name] = attribute_value(proto)
        return value

    def __contains__(self, name: object) -> bool:
        return name in self._protos

    def __iter__(self) -> Iterator[str]:
        return iter(self._protos)

    def __len__(self) -> int:
        return len(self._protos)


class AttributesOnDemand(Mapping[str, Any]):
    """A node's attributes by name, read from the node only when first asked for.

    For ops whose schema declares no attribute: their rules rarely look, and a node's
    attributes cost more to read than the rest of it. ``read`` says whether they were.
    """

    __slots__ = ("_node", "_values")

    def __init__(self, node: Any) -> None:
        self._node = node
        self._values: dict[str, Any] | None = None

    @property
    def read(self) -> bool:
        return self._values is not None

    def _loaded(self) -> dict[str, Any]:
        if self._values is None:
            self._values = attribute_values(self._node.attribute)
        return self._values

    def __getitem__(self, name: str) -> Any:
        return self._loaded()[name]

    def get(self, name: str, default: Any = None) -> Any:  # without a KeyError for an absent name
        return self._loaded().get(name, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())


__all__ = ["AttributeReader", "AttributesByName", "AttributesOnDemand", "attribute_kind", "attribute_value", "attribute_values",
           "freeze"]
