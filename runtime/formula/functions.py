"""The functions a formula may call: each one's name, what its arguments are, and what it means."""
from __future__ import annotations

import enum
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["ARITHMETIC", "ArgKind", "FUNCTIONS", "Function"]


class ArgKind(enum.Enum):
    """What a function's argument must be."""

    VALUE = "value"          # any formula; a bare name there is an integer attribute
    TENSOR = "tensor"        # an input or output name, or input(i) / output(i)
    LIST = "list"            # the name of a list attribute of ints
    ANY_LIST = "any_list"    # the name of a list attribute of any kind
    RATIO = "ratio"          # a / b
    INDEX = "index"          # a literal position
    STRING = "string"        # the name of a string attribute
    WORD = "word"            # a bare word: one value a string attribute may take


@dataclass(frozen=True)
class Function:
    name: str
    args: tuple[ArgKind, ...]
    #: How many of ``args`` may be left out at the end.
    optional: int = 0
    #: The last argument kind repeats (at least once more than ``args`` minus one).
    repeats: bool = False
    doc: str = ""
    #: Its value follows from its arguments' values alone: it reads no tensor and no list attribute.
    arithmetic: bool = False

    @property
    def arity(self) -> str:
        low, high = len(self.args) - self.optional, len(self.args)
        if self.repeats:
            return f"{low} or more"
        return str(low) if low == high else f"{low} to {high}"

    def accepts(self, count: int) -> bool:
        if self.repeats:
            return count >= len(self.args)
        return len(self.args) - self.optional <= count <= len(self.args)

    def kind_at(self, position: int) -> ArgKind:
        return self.args[min(position, len(self.args) - 1)]


_V, _T, _L, _R, _I = ArgKind.VALUE, ArgKind.TENSOR, ArgKind.LIST, ArgKind.RATIO, ArgKind.INDEX
_AL, _S, _W = ArgKind.ANY_LIST, ArgKind.STRING, ArgKind.WORD

FUNCTIONS = MappingProxyType({function.name: function for function in (
    Function("dim", (_T, _V), doc="a dim of a tensor; a negative axis counts from the end"),
    Function("rank", (_T,), doc="the rank of a tensor (0 when an optional input is absent)"),
    Function("numel", (_T, _V, _V), optional=2,
             doc="the product of a tensor's dims (from axis `start` up to `end` when given; 0 when absent)"),
    Function("present", (_T,), doc="1 when the node supplies the optional input or output, else 0"),
    Function("input", (_I,), doc="the node's input at a position"),
    Function("output", (_I,), doc="the node's output at a position"),
    Function("inputs", (), doc="how many inputs the node supplies"),
    Function("outputs", (), doc="how many outputs the node has"),
    Function("prod", (_L,), doc="the product of a list attribute's values"),
    Function("len", (_AL,), doc="the length of a list attribute"),
    Function("min", (_V, _V), repeats=True, doc="the least of its arguments", arithmetic=True),
    Function("max", (_V, _V), repeats=True, doc="the greatest of its arguments", arithmetic=True),
    Function("ceil", (_R,), doc="`ceil(a / b)`", arithmetic=True),
    Function("floor", (_R,), doc="`floor(a / b)`", arithmetic=True),
    Function("if", (_V, _V, _V), doc="`if(c, a, b)`: `a` when `c` is not 0, else `b`", arithmetic=True),
    Function("is", (_S, _W), repeats=True,
             doc="`is(s, w1, w2, ...)`: 1 when the string attribute `s` is one of the words, else 0"),
)})
#: The functions a formula over int attributes alone may call.
ARITHMETIC = frozenset(name for name, function in FUNCTIONS.items() if function.arithmetic)
