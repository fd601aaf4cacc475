"""Render schema values as Python source: every string goes through ``repr``, never pasted.

Records (named tuples, as :mod:`opspec.runtime.schema` defines them) and dataclasses become
constructor calls that list only non-default fields, one per line; values given a name (module-level
constants such as the op's doc text or a shared type set) are replaced by that name. Output is
deterministic: sets are sorted.

A :class:`LiteralWriter` picks the way to write each type once (not per value), and a type set is
sorted and written once per process, however many modules use it.
"""
from __future__ import annotations

import dataclasses
import enum
import math
from types import MappingProxyType
from typing import Any, Callable, Mapping

INDENT = "    "

#: Writes one value at an indentation depth.
_Write = Callable[["LiteralWriter", Any, int], str]


class LiteralWriter:
    """Writes values as Python source, each value it has a name for as that name."""

    def __init__(self, names: Mapping[Any, str] | None = None) -> None:
        self.names: dict[Any, str] = {}
        #: The exact types of the named values: only a value of one of them is looked up (hashing a
        #: deep record costs, and ``1 == True`` must not make ``True`` a name for ``1``).
        self.named_kinds: set[type] = set()
        #: The record and enum types written so far (a module imports exactly these).
        self.kinds: set[type] = set()
        for value, name in (names or {}).items():
            self.name(value, name)

    def name(self, value: Any, name: str) -> None:
        """Write ``value`` as ``name`` from now on."""
        self.names[value] = name
        self.named_kinds.add(type(value))

    def write(self, value: Any, depth: int = 0) -> str:
        """Python source text that evaluates to ``value``, indented for ``depth``."""
        kind = type(value)
        if kind in self.named_kinds and (found := _name_of(self, value)) is not None:
            return found
        if kind is str:
            return repr(value)
        return (_WRITERS.get(kind) or _writer_for(kind))(self, value, depth)


def py(value: Any, hoisted: Mapping[Any, str] | None = None, depth: int = 0) -> str:
    """Python source text that evaluates to ``value`` (the values in ``hoisted`` written as their names)."""
    return (LiteralWriter(hoisted) if hoisted else _PLAIN).write(value, depth)


#: The writer of values without names (never given any).
_PLAIN = LiteralWriter()


def _plain(writer: LiteralWriter, value: Any, depth: int) -> str:
    return repr(value)


def _float(writer: LiteralWriter, value: float, depth: int) -> str:
    if math.isnan(value):
        return 'float("nan")'
    if math.isinf(value):
        return 'float("inf")' if value > 0 else 'float("-inf")'
    return repr(value)


#: The source of each tuple or set of strings (none of them named), once per process: type lists
#: and type sets repeat across operators.
_STRING_TEXTS: dict[tuple[str, ...] | frozenset[str], str] = {}


_ONLY_STR = {str}


def _strings(writer: LiteralWriter, value: tuple[str, ...] | frozenset[str]) -> str | None:
    """The source of a tuple or set when it holds only strings, none of them named (else None)."""
    if set(map(type, value)) != _ONLY_STR or str in writer.named_kinds and not writer.names.keys().isdisjoint(value):
        return None
    text = _STRING_TEXTS.get(value)
    if text is None:
        if type(value) is tuple:
            text = "(" + ", ".join(map(repr, value)) + ("," if len(value) == 1 else "") + ")"
        else:
            text = "frozenset({" + ", ".join(map(repr, sorted(value))) + "})"
        _STRING_TEXTS[value] = text
    return text


def _frozenset(writer: LiteralWriter, value: frozenset[Any], depth: int) -> str:
    if not value:
        return "frozenset()"
    return _strings(writer, value) or "frozenset({" + ", ".join([writer.write(v) for v in sorted(value)]) + "})"


def _sequence(writer: LiteralWriter, value: tuple[Any, ...] | list[Any], depth: int) -> str:
    if not value:
        return "[]" if isinstance(value, list) else "()"
    first = type(value[0])
    if first is str and type(value) is tuple and (text := _strings(writer, value)) is not None:
        return text
    open_, close = ("[", "]") if isinstance(value, list) else ("(", ")")
    write = writer.write
    items = [write(v, depth + 1) for v in value]
    if _is_record_kind(first) and all(map(_is_record_kind, set(map(type, value)))):
        pad = INDENT * (depth + 1)
        return open_ + "\n" + "".join([f"{pad}{item},\n" for item in items]) + INDENT * depth + close
    trailing = "," if len(items) == 1 and isinstance(value, tuple) else ""
    return open_ + ", ".join(items) + trailing + close


def _mapping(writer: LiteralWriter, value: Mapping[Any, Any], depth: int) -> str:
    if not value:
        body = "{}"
    else:
        pad = INDENT * (depth + 1)
        write = writer.write
        body = "{\n" + "".join([f"{pad}{write(k)}: {write(v, depth + 1)},\n" for k, v in value.items()]) \
            + INDENT * depth + "}"
    return f"MappingProxyType({body})" if isinstance(value, MappingProxyType) else body


def _enum_writer(kind: type[enum.Enum]) -> _Write:
    texts = {member: f"{kind.__name__}.{member.name}" for member in kind}

    def write_member(writer: LiteralWriter, value: Any, depth: int) -> str:
        writer.kinds.add(kind)
        return texts[value]

    return write_member


def _named_tuple_writer(record_kind: type) -> _Write:
    """Writes a named-tuple record: the fields that differ from their defaults, one per line."""
    defaults = getattr(record_kind, "_field_defaults")
    fields = getattr(record_kind, "_fields")
    layout = tuple(defaults.get(name, _NO_DEFAULT) for name in fields)
    layout_types = tuple(map(type, layout))
    head = f"{record_kind.__name__}(\n"
    #: Per depth: each field's ``name=`` with its indentation, and the closing line.
    shapes: dict[int, tuple[tuple[str, ...], str]] = {}

    def shape(depth: int) -> tuple[tuple[str, ...], str]:
        pad = INDENT * (depth + 1)
        found = shapes[depth] = (tuple(f"{pad}{name}=" for name in fields), ",\n" + INDENT * depth + ")")
        return found

    def write_record(writer: LiteralWriter, value: Any, depth: int) -> str:
        labels, close = shapes.get(depth) or shape(depth)
        writer.kinds.add(record_kind)
        named_kinds = writer.named_kinds
        names = writer.names if str in named_kinds else _NO_NAMES
        lines = []
        for label, current, default, default_type in zip(labels, value, layout, layout_types):
            if current is default:
                continue
            kind = type(current)
            if kind is default_type and current == default:
                continue
            if kind is str:  # most fields: written here, without a call per field
                lines.append(label + (names.get(current) or repr(current)))
            elif kind is int and int not in named_kinds:
                lines.append(label + repr(current))
            else:
                lines.append(label + (kind in named_kinds and _name_of(writer, current)
                                      or (_WRITERS.get(kind) or _writer_for(kind))(writer, current, depth + 1)))
        return head + ",\n".join(lines) + close if lines else head + close[2:]

    return write_record


def _name_of(writer: LiteralWriter, value: Any) -> str | None:
    """The name ``writer`` has for ``value`` (None: none, or unhashable, as values with names never are)."""
    try:
        return writer.names.get(value)
    except TypeError:
        return None


_NO_DEFAULT = object()
_NO_NAMES: dict[Any, str] = {}


def _dataclass(writer: LiteralWriter, value: Any, depth: int) -> str:
    writer.kinds.add(type(value))
    pad = INDENT * (depth + 1)
    parts = []
    for field in dataclasses.fields(value):
        current = getattr(value, field.name)
        default = field.default_factory() if field.default_factory is not dataclasses.MISSING else field.default
        if default is dataclasses.MISSING or not current == default:
            parts.append(f"{pad}{field.name}={writer.write(current, depth + 1)},\n")
    return f"{type(value).__name__}(\n" + "".join(parts) + INDENT * depth + ")"


def _unwritable(writer: LiteralWriter, value: Any, depth: int) -> str:
    raise TypeError(f"cannot render {type(value).__name__} as Python source")


#: The way to write each exact type met so far.
_WRITERS: dict[type, _Write] = {type(None): _plain, bool: _plain, int: _plain, str: _plain, float: _float,
                                frozenset: _frozenset, tuple: _sequence, list: _sequence,
                                dict: _mapping, MappingProxyType: _mapping}


def _writer_for(kind: type) -> _Write:
    """The way to write values of ``kind`` (a record, a subclass of a plain type ...), chosen once."""
    found: _Write
    if dataclasses.is_dataclass(kind):
        found = _dataclass
    elif hasattr(kind, "_field_defaults"):
        found = _named_tuple_writer(kind)
    elif issubclass(kind, enum.Enum):
        found = _enum_writer(kind)
    elif issubclass(kind, (bool, int, str)):
        found = _plain
    elif issubclass(kind, float):
        found = _float
    elif issubclass(kind, frozenset):
        found = _frozenset
    elif issubclass(kind, (tuple, list)):
        found = _sequence
    elif issubclass(kind, (dict, MappingProxyType)):
        found = _mapping
    else:
        found = _unwritable
    _WRITERS[kind] = found
    return found


_RECORD_KINDS: dict[type, bool] = {}


def _is_record_kind(kind: type) -> bool:
    """Whether values of ``kind`` are records (written as constructor calls, one field per line)."""
    known = _RECORD_KINDS.get(kind)
    if known is None:
        known = _RECORD_KINDS[kind] = dataclasses.is_dataclass(kind) or hasattr(kind, "_field_defaults")
    return known


def docstring(text: str) -> str:
    """A docstring literal for ``text``: triple-quoted when that is exact and safe, else ``repr``.

    Every text that reaches generated Python goes through :func:`py` or this function,
    so no name, path or description can end a literal and become code.
    """
    lines = text.replace("\n", "")
    plain = text.isprintable() or lines and lines.isprintable()  # printable but for line breaks
    if plain and '"' not in text and "\\" not in text:
        return f'"""{text}"""'
    return repr(text)
