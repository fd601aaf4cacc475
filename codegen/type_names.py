"""Type lists in the docs, written with the names of the tree's type sets.

``tensor(float16), tensor(float), tensor(double), tensor(bfloat16)`` reads as
``float_types_bf16``; a list that is a named set plus a few more types reads as the set
and the extras. Each name links to its entry on the type sets page.
"""
from __future__ import annotations

from typing import Sequence

#: A set is named only when it saves listing at least this many types.
_MIN_SET_SIZE = 2


class TypeSetNames:
    """Renders type lists for one docs folder, naming type sets where they fit."""

    def __init__(self, type_sets: Sequence[tuple[str, tuple[str, ...]]], page: str = "types.md") -> None:
        # Largest sets first, so a list is named by as few sets as possible.
        self.sets = sorted(((name, frozenset(types)) for name, types in type_sets if len(types) >= _MIN_SET_SIZE),
                           key=lambda entry: (-len(entry[1]), entry[0]))
        self.page = page
        self._written: dict[tuple[str, ...], str] = {}

    def parts(self, types: Sequence[str]) -> tuple[list[str], list[str]]:
        """(names of type sets, remaining type strings) that together are exactly ``types``."""
        wanted = frozenset(types)
        left = set(wanted)
        names = []
        for name, members in self.sets:
            if members <= wanted and len(members & left) >= _MIN_SET_SIZE:
                names.append(name)
                left -= members
        return names, [t for t in types if t in left]

    def markdown(self, types: Sequence[str]) -> str:
        """Markdown for a type list: linked set names, then the remaining types as code (each list
        written once: the same lists recur on many pages)."""
        key = tuple(types)
        text = self._written.get(key)
        if text is None:
            names, rest = self.parts(key)
            words = [f"[`{name}`]({self.page}#{name})" for name in names] + [f"`{t}`" for t in rest]
            text = self._written[key] = ", ".join(words)
        return text


__all__ = ["TypeSetNames"]
