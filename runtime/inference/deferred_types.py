"""Graph input types kept as the bytes they were read from until something looks at their dims.

A graph input's tensor type whose ``TypeProto`` bytes are exactly what writing its type gives
(every dim a plain name or a number below 2**21) is held as an :class:`UnreadType`:
its bytes and element type. A node whose output type is its input's, unchanged (a rule declared
``passes_input_type``), hands the object on, and the write-back writes it from its bytes: such
dims never become symbolic objects. Whatever else looks at one (another rule, a subgraph, a
function body, a declared type to merge with, the report) first has :class:`DeferredTypes`
decode them all at once, as they would have been read at the start. A type with a dim of
neither value nor name is read at once: each such dim gets a symbol of its own input.
"""
from __future__ import annotations

import re
import sys
from functools import cache
from typing import Any, Sequence

from opspec.runtime.ir.varint import TruncatedVarint, read_varint

_TENSOR_KEY = 0x0A  # TypeProto.tensor_type: field 1, length-delimited
_ELEM_KEY = 0x08  # TypeProto.Tensor.elem_type: field 1, varint
_SHAPE_KEY = 0x12  # TypeProto.Tensor.shape: field 2, length-delimited

#: The longest name a dim kept as read may have (a type with a longer one is read at once):
#: the pattern below spells out every length, and its compile time grows with them.
LONGEST_PLAIN_NAME = 32


@cache
def _plain_dims() -> re.Pattern[bytes]:
    """``TensorShapeProto.dim`` fields as a writer writes plain dims: a number of one to three
    varint bytes or a name of ASCII identifier characters, each name length spelled
    out with its own length bytes, so that a match is a reading field by field (compiled on
    first use: it takes a few milliseconds)."""
    forms = [rb"\x02\x08[\x00-\x7f]", rb"\x03\x08[\x80-\xff][\x01-\x7f]", rb"\x04\x08[\x80-\xff][\x80-\xff][\x01-\x7f]"]
    forms += [re.escape(bytes((size + 2, 0x12, size))) + rb"[A-Za-z_][A-Za-z0-9_]{%d}" % (size - 1)
              for size in range(1, LONGEST_PLAIN_NAME + 1)]
    # No two forms start alike, so nothing is ever given back: a possessive repeat (Python 3.11
    # on) keeps no state per dim, which for a shape of 10^6 dims is a third of the time and 60 MB.
    repeat = b"*+" if sys.version_info >= (3, 11) else b"*"
    return re.compile(rb"(?:\x0a(?:" + b"|".join(forms) + rb"))" + repeat)


class UnreadType:
    """A tensor type not decoded yet: ``key``, its ``TypeProto`` bytes (what writing it gives),
    ``elem`` its element type (never 0), read from the ``type`` of ``holders[position]``."""

    __slots__ = ("key", "elem", "_holders", "_position")

    def __init__(self, key: bytes, elem: int, holders: Sequence[Any], position: int) -> None:
        self.key, self.elem, self._holders, self._position = key, elem, holders, position

    @property
    def message(self) -> Any:
        """The ``TypeProto`` it was read from."""
        return self._holders[self._position].type

    def __repr__(self) -> str:
        return f"UnreadType(elem={self.elem}, {len(self.key)} bytes)"


def plain_tensor_elem(key: bytes) -> int:
    """The element type of a serialized ``TypeProto`` that is exactly a writer's encoding of a
    tensor type of known element type whose dims are all plain; 0 for any other bytes."""
    end = len(key)
    if end < 4 or key[0] != _TENSOR_KEY:
        return 0
    size, start = key[1], 2
    if size >= 0x80:  # (a short type's length is one byte)
        try:
            size, start = read_varint(key, 1)
        except TruncatedVarint:
            return 0
    if start + size != end or key[start] != _ELEM_KEY or not 0 < key[start + 1] < 0x80:
        return 0
    elem = key[start + 1]
    position = start + 2
    if position == end:
        return elem  # no shape
    if key[position] != _SHAPE_KEY:
        return 0
    size, start = key[position + 1], position + 2
    if size >= 0x80:
        try:
            size, start = read_varint(key, position + 1)
        except TruncatedVarint:
            return 0
    if start + size != end or _plain_dims().fullmatch(key, start) is None:
        return 0
    return elem


def deferred_types(reader: Any, value_infos: Sequence[Any], keys: list[bytes]) -> list[Any]:
    """The types of ``value_infos``, whose ``type`` fields serialize as ``keys``, as ``reader``
    reads them, except that each plain tensor type is an :class:`UnreadType` (one object per
    distinct type)."""
    unread: dict[bytes, UnreadType | None] = {}
    for key, position in dict(zip(keys, range(len(keys)))).items():  # each distinct type once
        elem = plain_tensor_elem(key)
        unread[key] = UnreadType(key, elem, value_infos, position) if elem else None
    values: list[Any] = list(map(unread.__getitem__, keys))
    if None in unread.values():
        rest = [position for position, value in enumerate(values) if value is None]
        read = reader.value_infos([value_infos[position] for position in rest], [keys[position] for position in rest])
        for position, value in zip(rest, read):
            values[position] = value
    return values


class DeferredTypes:
    """The names of ``types`` that may hold :class:`UnreadType` s, and their decoding."""

    __slots__ = ("reader", "types", "names")

    def __init__(self, reader: Any, types: dict[str, Any], names: list[str]) -> None:
        self.reader = reader
        self.types = types
        #: Names whose value was an unread type when stored (graph inputs, and node outputs
        #: that took one on); some may hold a decoded type since.
        self.names = names

    def resolve(self) -> None:
        """Decode every unread type held (all together), in place in ``types``."""
        types = self.types
        pending = {id(value): value for name in self.names if type(value := types.get(name)) is UnreadType}
        if pending:
            held = list(pending.values())
            decoded = dict(zip(pending, self.reader.types_of([value.key for value in held],
                                                             [value.message for value in held])))
            for name in self.names:
                value = types.get(name)
                if type(value) is UnreadType:
                    types[name] = decoded[id(value)]
        self.names = []


__all__ = ["DeferredTypes", "UnreadType", "deferred_types", "plain_tensor_elem"]
