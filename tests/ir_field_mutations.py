"""A seeded generator of malformed models driven by the IR's own field descriptors.

It knows nothing of what a field means: it walks ``ModelProto.DESCRIPTOR`` and every
message reachable from it, picks one field (each field name of each message equally
likely, whatever how many instances a model holds), one instance of it in the model, and
one change its protobuf type allows: absent, zero, negative, huge (for an enum, both are
values the IR does not define, written as a file would hold them), a wrong value (an
unknown name or another value's name, another enum or type code, bytes that are no
data, NaN), an element duplicated, or swapped with a sibling (another element, or another
field of the same type).
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from enum import Enum
from typing import Any, Callable, Iterator, Sequence

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from onnx import ModelProto

_INT32 = frozenset({FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_SFIXED32})
_INT64 = frozenset({FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_SINT64, FieldDescriptor.TYPE_SFIXED64})
_UINT = frozenset({FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED32,
                   FieldDescriptor.TYPE_FIXED64})
_FLOAT = frozenset({FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE})


class Change(Enum):
    """The kinds of change made to one field."""

    ABSENT = "absent"
    ZERO = "zero"
    NEGATIVE = "negative"
    HUGE = "huge"
    WRONG = "wrong"
    DUPLICATED = "duplicated"
    SWAPPED = "swapped"


@dataclass(frozen=True)
class Site:
    """One field of one message instance of a model, and the path to it."""

    owner: Message
    field: Any  # a FieldDescriptor (pure Python or upb's)
    path: str


@dataclass(frozen=True)
class Mutation:
    """What was changed where (for the message of a failing case)."""

    path: str
    change: Change
    detail: str

    def __str__(self) -> str:
        return f"{self.path}: {self.change.value} ({self.detail})"


def sites(message: Message, path: str = "model") -> Iterator[Site]:
    """Every field of ``message`` (set or not) and of every message it holds."""
    for field in message.DESCRIPTOR.fields:
        yield Site(message, field, f"{path}.{field.name}")
        if field.type != FieldDescriptor.TYPE_MESSAGE:
            continue
        if field.is_repeated:
            for index, item in enumerate(getattr(message, field.name)):
                yield from sites(item, f"{path}.{field.name}[{index}]")
        elif message.HasField(field.name):
            yield from sites(getattr(message, field.name), f"{path}.{field.name}")


def _names(model: ModelProto) -> list[str]:
    """The value names a model uses (wrong names are taken from them or made up)."""
    graph = model.graph
    found = {value.name for group in (graph.input, graph.output, graph.value_info) for value in group}
    found |= {tensor.name for tensor in graph.initializer}
    for node in graph.node:
        found |= set(node.input) | set(node.output)
    return sorted(name for name in found if name)


def _huge(field: Any) -> list[int]:
    """The largest values an integer field holds (and 2**31 - 1 in every signed one)."""
    if field.type in _INT32:
        return [2**31 - 1]
    if field.type in _UINT:
        return [2**32 - 1] if field.cpp_type == FieldDescriptor.CPPTYPE_UINT32 else [2**64 - 1]
    return [2**31 - 1, 2**63 - 1]


def _scalar_values(field: Any, change: Change, rng: random.Random, names: list[str]) -> list[Any]:
    """The values a scalar field may take for ``change`` (empty: the change does not apply)."""
    kind = field.type
    if kind in _INT32 or kind in _INT64 or kind in _UINT:
        values = {Change.ZERO: [0], Change.NEGATIVE: [] if kind in _UINT else [-1, -(2**31)],
                  Change.HUGE: _huge(field), Change.WRONG: [99, 2**20, 7, 1]}
        return values.get(change, [])
    if kind in _FLOAT:
        return {Change.ZERO: [0.0], Change.NEGATIVE: [-1.0, -0.0], Change.HUGE: [float("inf"), 3.4e38],
                Change.WRONG: [float("nan")]}.get(change, [])
    if kind == FieldDescriptor.TYPE_BOOL:
        return {Change.ZERO: [False], Change.WRONG: [True]}.get(change, [])
    if kind == FieldDescriptor.TYPE_STRING:
        wrong = ["nowhere", "Nope", "ai.unknown", *rng.sample(names, min(2, len(names)))]
        return {Change.ZERO: [""], Change.WRONG: wrong, Change.HUGE: ["x" * 4096]}.get(change, [])
    if kind == FieldDescriptor.TYPE_BYTES:
        return {Change.ZERO: [b""], Change.WRONG: [b"\xff\xfe", b"\0"], Change.HUGE: [b"\1" * 4099]}.get(change, [])
    if kind == FieldDescriptor.TYPE_ENUM:
        defined = _enum_numbers(field)
        return {Change.ZERO: [0] if 0 in defined else [], Change.WRONG: defined,
                Change.NEGATIVE: [-1], Change.HUGE: [2**31 - 1]}.get(change, [])
    return []


def _enum_numbers(field: Any) -> list[int]:
    return [value.number for value in field.enum_type.values] if field.enum_type is not None else []


def _set_undefined_enum(owner: Message, field: Any, value: int) -> None:
    """Write an enum value the IR does not define as a file holds it (its wire form):
    protobuf keeps it as an unknown field, as onnx's own reader does."""
    owner.ClearField(field.name)
    tag = (field.number << 3) | 0  # varint
    owner.MergeFromString(_varint(tag) + _varint(value & (2**64 - 1)))


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _set_scalar(owner: Message, field: Any, value: Any) -> None:
    if field.type == FieldDescriptor.TYPE_ENUM and value not in _enum_numbers(field):
        _set_undefined_enum(owner, field, value)
    else:
        setattr(owner, field.name, value)


def _siblings(owner: Message, field: Any) -> list[Any]:
    """The other fields of ``owner`` of the same type, both singular, outside any oneof."""
    return [other for other in owner.DESCRIPTOR.fields
            if other is not field and other.type == field.type and not other.is_repeated and not field.is_repeated
            and other.message_type is field.message_type and other.enum_type is field.enum_type
            and other.containing_oneof is None and field.containing_oneof is None]


def _mutate_repeated(site: Site, change: Change, rng: random.Random, names: list[str]) -> str | None:
    items = getattr(site.owner, site.field.name)
    message = site.field.type == FieldDescriptor.TYPE_MESSAGE
    if change is Change.ABSENT:
        if not len(items):
            return None
        site.owner.ClearField(site.field.name)
        return "cleared"
    if change is Change.DUPLICATED:
        if not len(items):
            return None
        index = rng.randrange(len(items))
        if message:
            items.add().CopyFrom(items[index])
        else:
            items.append(items[index])
        return f"element {index} appended again"
    if change is Change.SWAPPED:
        if len(items) < 2:
            return None
        first, second = rng.sample(range(len(items)), 2)
        if message:
            a, b = type(items[first])(), type(items[second])()
            a.CopyFrom(items[first])
            b.CopyFrom(items[second])
            items[first].CopyFrom(b)
            items[second].CopyFrom(a)
        else:
            items[first], items[second] = items[second], items[first]
        return f"elements {first} and {second} swapped"
    if message:
        if change is Change.ZERO:
            items.add()
            return "an empty element appended"
        return None
    values = _scalar_values(site.field, change, rng, names)
    if not values:
        return None
    value = rng.choice(values)
    if len(items) and rng.random() < 0.7:
        index = rng.randrange(len(items))
        items[index] = value
        return f"element {index} set to {value!r:.40}"
    items.append(value)
    return f"{value!r:.40} appended"


def _mutate_singular(site: Site, change: Change, rng: random.Random, names: list[str]) -> str | None:
    owner, field = site.owner, site.field
    if change is Change.ABSENT:
        if not owner.HasField(field.name):
            return None
        owner.ClearField(field.name)
        return "cleared"
    if change is Change.SWAPPED:
        others = _siblings(owner, field)
        if not others:
            return None
        other = rng.choice(others)
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            mine, theirs = type(getattr(owner, field.name))(), type(getattr(owner, other.name))()
            mine.CopyFrom(getattr(owner, field.name))
            theirs.CopyFrom(getattr(owner, other.name))
            getattr(owner, field.name).CopyFrom(theirs)
            getattr(owner, other.name).CopyFrom(mine)
        else:
            mine_value, theirs_value = getattr(owner, field.name), getattr(owner, other.name)
            setattr(owner, field.name, theirs_value)
            setattr(owner, other.name, mine_value)
        return f"swapped with {other.name}"
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        if change is Change.ZERO:
            getattr(owner, field.name).Clear()
            getattr(owner, field.name).SetInParent()
            return "emptied"
        return None
    values = _scalar_values(field, change, rng, names)
    if not values:
        return None
    value = rng.choice(values)
    _set_scalar(owner, field, value)
    return f"set to {value!r:.40}"


_MUTATORS: dict[bool, Callable[[Site, Change, random.Random, list[str]], str | None]] = {
    True: _mutate_repeated, False: _mutate_singular}


def mutate(model: ModelProto, rng: random.Random) -> Mutation | None:
    """One change to one field of ``model`` (in place), or None when the field picked
    admits none of the changes tried."""
    by_field: dict[str, list[Site]] = {}
    for site in sites(model):
        by_field.setdefault(site.field.full_name, []).append(site)
    names = _names(model)
    for _ in range(8):
        site = rng.choice(by_field[rng.choice(sorted(by_field))])
        changes = list(Change)
        rng.shuffle(changes)
        for change in changes:
            detail = _MUTATORS[site.field.is_repeated](site, change, rng, names)
            if detail is not None:
                return Mutation(site.path, change, detail)
    return None


def mutated_models(seed: int, count: int, pools: Sequence[Sequence[ModelProto]]) -> Iterator[
        tuple[int, ModelProto, list[Mutation]]]:
    """``count`` models from ``seed``, each a copy of a model of one of ``pools`` (each pool
    equally likely, whatever its size) given one to three field changes: (case number,
    model, what was changed)."""
    rng = random.Random(seed)
    for case in range(count):
        model = ModelProto()
        model.CopyFrom(rng.choice(rng.choice(pools)))
        done = [m for m in (mutate(model, rng) for _ in range(rng.choice([1, 1, 1, 2, 3]))) if m is not None]
        yield case, model, done


__all__ = ["Change", "Mutation", "Site", "mutate", "mutated_models", "sites"]
