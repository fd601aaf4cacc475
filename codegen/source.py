"""Safe YAML loading that remembers where every key and value came from.

Documents are composed with PyYAML's safe machinery (no object construction, no custom
tags) and turned into plain dicts, lists and scalars. Each dict and list carries a
:class:`Location` for itself and for each of its keys and items, so any later check can
point at ``file:line:col``.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

try:  # libyaml is much faster; the pure-Python composer gives identical nodes.
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

_STANDARD_TAGS = {
    "tag:yaml.org,2002:" + name
    for name in ("str", "int", "float", "bool", "null", "map", "seq")
}
_scalars = yaml.constructor.SafeConstructor()


@dataclass(frozen=True, order=True)
class Location:
    """A 1-based position in a source file."""

    path: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"


class SourceError(Exception):
    """A problem in one source file, at one place."""

    def __init__(self, location: Location, message: str):
        super().__init__(f"{location}: {message}")
        self.location = location
        self.message = message


class Map(dict):
    """A mapping that knows the location of itself, its keys and its values."""

    location: Location
    key_locations: dict[Any, Location]
    value_locations: dict[Any, Location]
    quoted: set[Any]  # keys whose value is a quoted scalar

    def key_at(self, key: Any) -> Location:
        return self.key_locations.get(key, self.location)

    def value_at(self, key: Any) -> Location:
        return self.value_locations.get(key, self.location)

    def inside_value(self, key: Any, offset: int) -> Location:
        """The position ``offset`` characters into a one-line scalar value (past any quote)."""
        start = self.value_at(key)
        return Location(start.path, start.line, start.column + offset + (key in self.quoted))


class Seq(list):
    """A sequence that knows the location of itself and of each item."""

    location: Location
    item_locations: list[Location]

    def item_at(self, index: int) -> Location:
        return self.item_locations[index] if index < len(self.item_locations) else self.location


def _where(path: str, node: yaml.Node) -> Location:
    mark = node.start_mark
    return Location(path, mark.line + 1, mark.column + 1)


def _convert(path: str, node: yaml.Node) -> Any:
    if node.tag not in _STANDARD_TAGS:
        raise SourceError(_where(path, node), f"unsupported YAML tag {node.tag!r}")
    if isinstance(node, yaml.MappingNode):
        result = Map()
        result.location = _where(path, node)
        result.key_locations, result.value_locations, result.quoted = {}, {}, set()
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise SourceError(_where(path, key_node), "YAML merge keys ('<<') are not supported")
            key = _convert(path, key_node)
            if isinstance(key, (Map, Seq)):
                raise SourceError(_where(path, key_node), "mapping keys must be plain scalars")
            if key in result:
                first = result.key_locations[key]
                raise SourceError(
                    _where(path, key_node),
                    f"duplicate key {key!r} (first defined at line {first.line})",
                )
            result[key] = _convert(path, value_node)
            result.key_locations[key] = _where(path, key_node)
            result.value_locations[key] = _where(path, value_node)
            if isinstance(value_node, yaml.ScalarNode) and value_node.style in ("'", '"'):
                result.quoted.add(key)
        return result
    if isinstance(node, yaml.SequenceNode):
        result = Seq(_convert(path, item) for item in node.value)
        result.location = _where(path, node)
        result.item_locations = [_where(path, item) for item in node.value]
        return result
    return _scalars.construct_object(node)


def load_yaml(path: Path, display: str | None = None) -> Any:
    """Load one YAML document, keeping locations; raise :class:`SourceError` on any problem."""
    shown = display or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise SourceError(Location(shown, 1, 1), f"cannot read file: {error}") from None
    return parse_yaml(text, shown)


def parse_yaml(text: str, display: str) -> Any:
    """Parse YAML text named ``display`` (used in locations)."""
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = Location(display, mark.line + 1, mark.column + 1) if mark else Location(display, 1, 1)
        problem = " ".join(part for part in (error.context, error.problem) if part)
        raise SourceError(where, f"YAML syntax error: {problem}") from None
    except yaml.YAMLError as error:
        raise SourceError(Location(display, 1, 1), f"YAML error: {error}") from None
    if node is None:
        raise SourceError(Location(display, 1, 1), "the file is empty")
    return _convert(display, node)
