"""Located records: a position in a source file, an error at one, and the mapping and list
types a loaded document is made of, each knowing where it and its parts were written."""
from __future__ import annotations

from typing import Any, NamedTuple


class Location(NamedTuple):
    """A 1-based position in a source file (a named tuple: a document has one per node, and
    tuples are the cheapest records to make)."""

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

    @classmethod
    def made_at(cls, location: Location) -> Map:
        """An empty mapping written at ``location``, ready for its keys."""
        made = cls()
        made.location = location
        made.key_locations, made.value_locations, made.quoted = {}, {}, set()
        return made

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

    @classmethod
    def made_at(cls, location: Location) -> Seq:
        """An empty sequence written at ``location``, ready for its items."""
        made = cls()
        made.location = location
        made.item_locations = []
        return made

    def item_at(self, index: int) -> Location:
        return self.item_locations[index] if index < len(self.item_locations) else self.location
