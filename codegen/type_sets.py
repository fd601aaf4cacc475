"""Named type sets: expanded recursively, in order, with ``seq(S)``/``optional(S)`` wrapping a set."""
from __future__ import annotations

import difflib
from typing import Any

from opspec.codegen.diagnostics import Diagnostics
from opspec.codegen.source import Location
from opspec.runtime.types import TypeStringError, is_type_string, normalize_type_string, split_type_string


def wrapped_set(item: str) -> tuple[str, str] | None:
    """``("seq", "numeric_types")`` for ``seq(numeric_types)``: a container of every type of a set."""
    split = split_type_string(item)
    return split if split is not None and split[0] in ("seq", "optional") else None


#: Up to this many known set names are listed in an error.
_LISTED = 12


class TypeSets:
    """Named type sets, expanded (recursively, order kept) on demand."""

    def __init__(self, declared: dict[str, Any], diagnostics: Diagnostics):
        self._declared = declared
        self._diagnostics = diagnostics
        self._expanded: dict[str, tuple[str, ...]] = {}

    def expand_all(self) -> None:
        """Expand every declared set now, by name (so later uses only look them up)."""
        for name in sorted(self._declared):
            self.expand(name, self._declared[name].location)

    def reporting_to(self, diagnostics: Diagnostics) -> TypeSets:
        """The same sets (sharing what is expanded), with problems going to ``diagnostics``."""
        view = TypeSets(self._declared, diagnostics)
        view._expanded = self._expanded
        return view

    def expand(self, name: str, location: Location, trail: tuple[str, ...] = ()) -> tuple[str, ...]:
        if name in self._expanded:
            return self._expanded[name]
        if name in trail:
            self._diagnostics.error(location, f"type set {name!r} includes itself ({' -> '.join(trail + (name,))})")
            return ()
        declared = self._declared.get(name)
        if declared is None:
            self._diagnostics.error(location, f"unknown type set {name!r} ({self._hint(name)})")
            return ()
        result = self.items(declared.items, trail + (name,))
        self._expanded[name] = result
        return result

    def _hint(self, name: str) -> str:
        """The closest known names, else every known name (few) or where they are listed."""
        close = difflib.get_close_matches(name, self._declared, n=3)
        if close:
            return "did you mean " + " or ".join(repr(c) for c in close) + "?"
        if len(self._declared) > _LISTED:
            return f"none of the {len(self._declared)} known sets; the reference lists them in types.md"
        return "known: " + (", ".join(sorted(self._declared)) or "none are defined")

    def items(self, items: tuple[tuple[str, Location], ...], trail: tuple[str, ...] = ()) -> tuple[str, ...]:
        """Expand a list of type strings and type set names, de-duplicated in order."""
        result: dict[str, None] = {}
        for item, location in items:
            wrapped = wrapped_set(item)
            if wrapped is not None and wrapped[1] in self._declared:
                wrapper, inner = wrapped
                result.update(dict.fromkeys(f"{wrapper}({t})" for t in self.expand(inner, location, trail)))
            elif is_type_string(item):
                try:
                    result[normalize_type_string(item)] = None
                except TypeStringError as error:
                    self._diagnostics.error(location, str(error))
            else:
                result.update(dict.fromkeys(self.expand(item, location, trail)))
        return tuple(result)
