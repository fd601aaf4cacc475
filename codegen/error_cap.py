"""How many of a run's diagnostics reach a person: at most so many per file and in all.

A tree with 10^5 bad entries has 10^5 errors, and printing each would bury the first ones
(and write megabytes); the first few per file show what is wrong, and one line counts
the rest. The count always covers every diagnostic.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from opspec.codegen.diagnostics import Diagnostic

#: Defaults of ``opspec generate --max-errors-per-file`` and ``--max-errors``.
PER_FILE = 50
IN_ALL = 500


@dataclass(frozen=True)
class Capped:
    """The diagnostics to show, in order, and how many were left out."""

    shown: tuple[Diagnostic, ...]
    omitted: int

    @property
    def count(self) -> int:
        return len(self.shown) + self.omitted

    def rest_line(self) -> str | None:
        """The line that counts what was left out (None when nothing was)."""
        if not self.omitted:
            return None
        return (f"... {self.omitted:,} more error{'s' if self.omitted != 1 else ''} not shown "
                "(--max-errors and --max-errors-per-file show more)")


def cap(diagnostics: Sequence[Diagnostic], per_file: int = PER_FILE, in_all: int = IN_ALL) -> Capped:
    """The first ``per_file`` diagnostics of each file, and at most ``in_all`` of them
    (a limit of 0 or less means no limit)."""
    shown: list[Diagnostic] = []
    per_path: dict[str, int] = {}
    for diagnostic in diagnostics:
        path = str(diagnostic.location.path)
        seen = per_path.get(path, 0)
        if (per_file > 0 and seen >= per_file) or (in_all > 0 and len(shown) >= in_all):
            continue
        per_path[path] = seen + 1
        shown.append(diagnostic)
    return Capped(tuple(shown), len(diagnostics) - len(shown))
