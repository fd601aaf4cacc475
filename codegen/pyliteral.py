"""Render schema values as Python source: every string goes through ``repr``, never pasted.

Records (named tuples, as :mod:`opspec.runtime.schema` defines them) and dataclasses become constructor calls that list only non-default fields, one per
line; values named in ``hoisted`` are replaced by that name (for module-level constants
such as the op's doc text or a shared type set). Output is deterministic: sets are sorted.
"""
from __future__ import annotations

import dataclasses
import enum
import math
from itertools import islice
from types import MappingProxyType
from typing import Any, Mapping

INDENT = "    "


#: Types whose source is their ``repr`` (exact types: an enum that is an int or a str is written by name).
_REPR_TYPES = frozenset({type(None), bool, int, str})


def py(value: Any, hoisted: Mapping[Any, str] | None = None, depth: int = 0) -> str:
    """Python source text that evaluates to ``value``."""
    kind = type(value)
    if kind in _REPR_TYPES and kind is not str:  # never named: no look-up
        return repr(value)
    names = hoisted or _NO_NAMES
    if names and kind in _hoisted_types(names):  # hashing a deep record costs: only when it may be named
        try:
            found = names.get(value)
        except TypeError:  # unhashable values are never hoisted
            found = None
        if found is not None:
            return found
    if kind in _REPR_TYPES:
        return repr(value)
    if _is_record(value):
        return _record(value, names, depth)
    if value is None or isinstance(value, (bool, int, str)) and not isinstance(value, enum.Enum):
        return repr(value)
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if isinstance(value, float):
        if math.isnan(value):
            return 'float("nan")'
        if math.isinf(value):
            return 'float("inf")' if value > 0 else 'float("-inf")'
        return repr(value)
    if isinstance(value, frozenset):
        return "frozenset({" + ", ".join(py(v, names) for v in sorted(value)) + "})" if value else "frozenset()"
    if isinstance(value, (tuple, list)):
        return _sequence(value, names, depth)
    if isinstance(value, (dict, MappingProxyType)):
        body = _mapping(value, names, depth)
        return f"MappingProxyType({body})" if isinstance(value, MappingProxyType) else body
    raise TypeError(f"cannot render {type(value).__name__} as Python source")


_NO_NAMES: Mapping[Any, str] = MappingProxyType({})


def _sequence(value: tuple[Any, ...] | list[Any], names: Mapping[Any, str], depth: int) -> str:
    open_, close = ("[", "]") if isinstance(value, list) else ("(", ")")
    items = [py(v, names, depth + 1) for v in value]
    if not items:
        return open_ + close
    if all(_is_record(v) for v in value):
        pad = INDENT * (depth + 1)
        return open_ + "\n" + "".join(f"{pad}{item},\n" for item in items) + INDENT * depth + close
    trailing = "," if len(items) == 1 and isinstance(value, tuple) else ""
    return open_ + ", ".join(items) + trailing + close


def _mapping(value: Mapping[Any, Any], names: Mapping[Any, str], depth: int) -> str:
    if not value:
        return "{}"
    pad = INDENT * (depth + 1)
    named_texts = str in _hoisted_types(names) if names else False
    lines = "".join([f"{pad}{repr(k) if type(k) is str and not (named_texts and k in names) else py(k, names)}: "
                     f"{py(v, names, depth + 1)},\n" for k, v in value.items()])
    return "{\n" + lines + INDENT * depth + "}"


#: The types of the keys of the last ``hoisted`` mapping seen, with its size then: a module reuses
#: one mapping, which only grows (a dict keeps keys in insertion order, so the new ones are last).
_last_hoisted: list[tuple[Mapping[Any, str], int, frozenset[type]]] = []


def _hoisted_types(names: Mapping[Any, str]) -> frozenset[type]:
    if _last_hoisted and _last_hoisted[0][0] is names and _last_hoisted[0][1] == len(names):
        return _last_hoisted[0][2]
    if _last_hoisted and _last_hoisted[0][0] is names and isinstance(names, dict) and _last_hoisted[0][1] < len(names):
        added = islice(reversed(names), len(names) - _last_hoisted[0][1])
        types = _last_hoisted[0][2] | {type(key) for key in added}
    else:
        types = frozenset(type(key) for key in names)
    _last_hoisted[:] = [(names, len(names), types)]
    return types


_RECORD_TYPES: dict[type, bool] = {}


def _is_record(value: Any) -> bool:
    kind = type(value)
    known = _RECORD_TYPES.get(kind)
    if known is None:
        known = _RECORD_TYPES[kind] = dataclasses.is_dataclass(value) or hasattr(kind, "_field_defaults")
    return known


def _fields(value: Any) -> list[tuple[str, Any, bool]]:
    """(name, value, equals its default) for every field of a record or dataclass."""
    if dataclasses.is_dataclass(value):
        result = []
        for field in dataclasses.fields(value):
            current = getattr(value, field.name)
            default = field.default_factory() if field.default_factory is not dataclasses.MISSING else field.default
            result.append((field.name, current, default is not dataclasses.MISSING and current == default))
        return result
    defaults = type(value)._field_defaults
    return [
        (name, current, name in defaults and _same(current, defaults[name]))
        for name, current in zip(value._fields, value)
    ]


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


#: Per named-tuple record type: each field's name and default (``_NO_DEFAULT`` if it has none).
_LAYOUTS: dict[type, tuple[tuple[str, Any], ...]] = {}
_NO_DEFAULT = object()


def _layout(kind: type) -> tuple[tuple[str, Any], ...]:
    found = _LAYOUTS.get(kind)
    if found is None:
        defaults = getattr(kind, "_field_defaults")
        found = _LAYOUTS[kind] = tuple((name, defaults.get(name, _NO_DEFAULT)) for name in getattr(kind, "_fields"))
    return found


def _record(value: Any, names: Mapping[Any, str], depth: int) -> str:
    pad = INDENT * (depth + 1)
    if dataclasses.is_dataclass(value):
        parts = [f"{pad}{name}={py(current, names, depth + 1)},\n"
                 for name, current, is_default in _fields(value) if not is_default]
    else:
        parts = [f"{pad}{name}={py(current, names, depth + 1)},\n"
                 for (name, default), current in zip(_layout(type(value)), value)
                 if not (type(current) is type(default) and current == default)]
    return f"{type(value).__name__}(\n" + "".join(parts) + INDENT * depth + ")"


def docstring(text: str) -> str:
    """A docstring literal for ``text``: triple-quoted when that is exact and safe, else ``repr``.

    Every text that reaches generated Python goes through :func:`py` or this function,
    so no name, path or description can end a literal and become code.
    """
    plain = text.isprintable() or set(text) - {"\n"} and all(c.isprintable() for c in text if c != "\n")
    if plain and '"' not in text and "\\" not in text:
        return f'"""{text}"""'
    return repr(text)
