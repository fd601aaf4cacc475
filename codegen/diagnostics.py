"""Collects every problem of a compiler run, so that all are reported together."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from opspec.codegen.source import Location, SourceError


@dataclass(frozen=True, order=True)
class Diagnostic:
    location: Location
    message: str
    severity: str = "error"

    def __str__(self) -> str:
        return f"{self.location}: {self.severity}: {self.message}"


@dataclass
class Diagnostics:
    """An ordered, de-duplicated list of errors."""

    items: list[Diagnostic] = field(default_factory=list)
    _seen: set[Diagnostic] = field(default_factory=set, repr=False)

    def error(self, location: Location, message: str) -> None:
        diagnostic = Diagnostic(location, message)
        if diagnostic not in self._seen:
            self._seen.add(diagnostic)
            self.items.append(diagnostic)

    def add(self, error: SourceError) -> None:
        self.error(error.location, error.message)

    def __bool__(self) -> bool:
        return bool(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def sorted(self) -> list[Diagnostic]:
        return sorted(self.items, key=_order)


def _order(diagnostic: Diagnostic) -> tuple[str, int, int, str]:
    """A sort key that never compares unlike types."""
    where = diagnostic.location
    return (str(where.path), int(where.line), int(where.column), str(diagnostic.message))


class CompileError(Exception):
    """Raised when an opdefs tree has errors; carries all of them."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = diagnostics
        super().__init__("\n".join(str(d) for d in diagnostics))

    def __reduce__(self) -> tuple[type[CompileError], tuple[list[Diagnostic]]]:
        return CompileError, (self.diagnostics,)


def joined_failure(errors: Sequence[BaseException | None]) -> BaseException | None:
    """The one error to raise for work done in independent pieces, each of which may have failed:
    the errors of every :class:`CompileError` together (sorted), else the first error, if any."""
    diagnostics = {diagnostic for error in errors if isinstance(error, CompileError) for diagnostic in error.diagnostics}
    if diagnostics:
        return CompileError(sorted(diagnostics, key=_order))
    return next((error for error in errors if error is not None), None)
