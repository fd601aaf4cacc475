"""The cost of a node or a graph, measure by measure, and how costs add up."""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Callable, Mapping

from opspec.runtime.shape import Sym

from .sizes import Size, add_sizes

__all__ = ["Cost", "ZERO", "bind"]


@dataclass(frozen=True)
class Cost:
    """Counts of one node or graph; each an int, a symbolic expression or None (unknown).

    ``flops`` counts arithmetic other than multiply-accumulates; :attr:`total_flops` adds two
    per MAC (the convention: one MAC is a multiply and an add)."""

    macs: Size = 0
    flops: Size = 0
    transcendental: Size = 0
    bytes_read: Size = 0
    bytes_written: Size = 0

    @property
    def total_flops(self) -> Size:
        if self.macs is None or self.flops is None:
            return None
        return 2 * self.macs + self.flops

    def combine(self, other: "Cost", how: Callable[[Size, Size], Size]) -> "Cost":
        return Cost(*(how(getattr(self, f.name), getattr(other, f.name)) for f in fields(Cost)))

    def __add__(self, other: "Cost") -> "Cost":
        return self.combine(other, add_sizes)

    def times(self, count: Size) -> "Cost":
        """The cost ``count`` times over (0 times is free even when the cost is unknown)."""
        def scale(value: Size) -> Size:
            if count == 0 and type(count) is int:
                return 0
            return None if value is None or count is None else value * count
        return Cost(*(scale(getattr(self, f.name)) for f in fields(Cost)))

    def larger(self, other: "Cost") -> "Cost":
        """Measure by measure, the larger of the two (unknown when either is)."""
        return self.combine(other, lambda a, b: None if a is None or b is None else Sym.max(a, b))

    def bound(self, bindings: Mapping[str, int]) -> "Cost":
        return replace(self, **{f.name: bind(getattr(self, f.name), bindings) for f in fields(Cost)})


ZERO = Cost()


def bind(value: Any, bindings: Mapping[str, int]) -> Any:
    """``value`` as a number when ``bindings`` give every symbol it names, else as it is."""
    if type(value) is Sym and bindings and value.names() <= bindings.keys():
        return value.evaluate(bindings)
    return value
