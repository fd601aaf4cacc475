"""A graph's declared inputs or outputs read in one pass, each entry serialized once.

Reading a ``ValueInfoProto``'s name and then its type's bytes takes two trips through protobuf
per entry, and graphs may declare 10^5 of them. Serialized once, entries as writers write
them (a name, then a type, nothing else) laid end to end read as one message whose repeated
fields 1 and 2 list every name and every type, in one C call; when some entry holds more or
less than that, each is split by its length bytes, and one that is not as writers write it is
read field by field. The whole bytes are kept too: an output is rewritten from them (see
:mod:`.write_back`).
"""
from __future__ import annotations

from typing import Any, NamedTuple, Sequence

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.unknown_fields import UnknownFieldSet

from opspec.runtime.ir.varint import TruncatedVarint, read_varint

_NAME_KEY = 0x0A  # ValueInfoProto.name: field 1, length-delimited
_TYPE_KEY = 0x12  # ValueInfoProto.type: field 2, length-delimited


def _lists_class() -> Any:
    """A message class whose fields 1 and 2, a ``ValueInfoProto``'s name and type, are repeated
    (text and bytes): entries laid end to end read as the list of their names and of their types."""
    proto = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(name="opspec_value_info_lists.proto", package="opspec.value_info_lists")
    lists = file.message_type.add(name="Lists")
    lists.field.add(name="name", number=1, label=proto.LABEL_REPEATED, type=proto.TYPE_STRING)
    lists.field.add(name="type", number=2, label=proto.LABEL_REPEATED, type=proto.TYPE_BYTES)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("opspec.value_info_lists.Lists"))


_Lists = _lists_class()


#: From this many entries on, they are read as one message first and outputs are rewritten in one
#: parse of them all (below, reading and writing each on its own is quicker).
LISTS_FROM = 16


class Entries(NamedTuple):
    """Per entry of a ``ValueInfoProto`` list: its ``names``, its type's bytes (``keys``; empty
    when it has none), its whole serialized bytes (``raws``), and whether it holds nothing but
    a name and a type (``bare``: writing another type there has nothing else of it to keep);
    ``all_bare`` when every entry does. ``raws`` and ``bare`` are left empty for fewer than
    ``LISTS_FROM`` entries (written one by one), and ``all_bare`` False. (A named tuple: one is
    made per graph read, and a model may hold many small graphs.)"""

    names: list[Any]
    keys: list[bytes]
    raws: list[bytes]
    bare: list[bool]
    all_bare: bool


def read_entries(value_infos: Sequence[Any]) -> Entries:
    """The entries of ``value_infos`` (a repeated ``ValueInfoProto`` field)."""
    if len(value_infos) < LISTS_FROM:  # a few: read as messages, kept as nothing else (not rebuilt)
        return Entries([value_info.name for value_info in value_infos],
                       [value_info.type.SerializeToString() for value_info in value_infos], [], [], False)
    # The class's method, not each message's: looking it up on a message costs a third of
    # what serializing the message does.
    raws = list(map(type(value_infos[0]).SerializeToString, value_infos))
    lists = _Lists.FromString(b"".join(raws))
    if len(lists.name) == len(raws) == len(lists.type) and not len(UnknownFieldSet(lists)):
        # One name and one type each, nothing else: each entry is exactly its name and its type
        # (serializing writes fields in their order), the two lists aligned with the entries.
        return Entries(lists.name[:], lists.type[:], raws, [True] * len(raws), True)
    return _split_each(raws, value_infos)


def _split_each(raws: list[bytes], value_infos: Sequence[Any]) -> Entries:
    """The entries serialized as ``raws``, each split apart by its length bytes."""
    names: list[Any] = []
    keys: list[bytes] = []
    bare: list[bool] = []
    add_name, add_key, add_bare = names.append, keys.append, bare.append
    for position, raw in enumerate(raws):
        # The common case inlined (both lengths below 128, an ASCII name), else :func:`_split`.
        end = len(raw)
        name_end = raw[1] + 2 if end > 3 else end
        if name_end + 1 < end and raw[0] == _NAME_KEY and raw[name_end] == _TYPE_KEY \
                and raw[name_end + 1] + name_end + 2 == end and name_end < 0x82 and raw[name_end + 1] < 0x80 \
                and (name := raw[2:name_end]).isascii():
            add_name(name.decode())
            add_key(raw[name_end + 2:])
            add_bare(True)
            continue
        split = _split(raw)
        if split is None:  # other fields, no type, a name that is not UTF-8: read as a message
            value_info = value_infos[position]
            add_name(value_info.name)
            add_key(value_info.type.SerializeToString())
            add_bare(False)
        else:
            add_name(split[0])
            add_key(split[1])
            add_bare(True)
    return Entries(names, keys, raws, bare, False not in bare)


def _split(raw: bytes) -> tuple[str, bytes] | None:
    """``(name, type bytes)`` of an entry that holds exactly a UTF-8 name and a type, in that order."""
    end = len(raw)
    if end < 4 or raw[0] != _NAME_KEY:
        return None
    size = raw[1]
    start = 2
    if size >= 0x80:
        try:
            size, start = read_varint(raw, 1)
        except TruncatedVarint:
            return None
    name_end = start + size
    if name_end + 2 > end or raw[name_end] != _TYPE_KEY:
        return None
    type_size = raw[name_end + 1]
    type_start = name_end + 2
    if type_size >= 0x80:
        try:
            type_size, type_start = read_varint(raw, name_end + 1)
        except TruncatedVarint:
            return None
    if type_start + type_size != end:
        return None
    try:
        name = raw[start:name_end].decode("utf-8")
    except UnicodeDecodeError:
        return None
    return name, raw[type_start:]


__all__ = ["Entries", "LISTS_FROM", "read_entries"]
