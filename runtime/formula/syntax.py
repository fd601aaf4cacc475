"""Reading formula text into a tree of frozen nodes, each knowing the column it starts at.

Grammar (Python-like precedence)::

    formula := sum
    sum     := product (("+" | "-") product)*
    product := unary (("*" | "//" | "%") unary)*
    unary   := "-" unary | primary
    primary := INT | NAME | NAME "(" [args] ")" | "(" sum ")"
    args    := arg ("," arg)*
    arg     := sum | sum "/" unary          (a ratio, only as the argument of ceil and floor)
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Union

__all__ = ["Call", "Formula", "FormulaSyntaxError", "Name", "Number", "Operation", "Ratio", "parse_formula"]

_TOKEN = re.compile(r"\s*(?:(?P<int>[0-9]+)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>//|[-+*/%(),]))")
#: Longer texts are refused: a formula is a line, not a program.
MAX_LENGTH = 2000
#: Deeper nesting is refused rather than risking Python's stack.
MAX_DEPTH = 64


class FormulaSyntaxError(ValueError):
    """Text that is not a formula; ``offset`` is the column (0-based) where reading stopped."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


@dataclass(frozen=True)
class Number:
    value: int
    offset: int = 0

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True)
class Name:
    """An attribute of the node, or (as a function's argument) one of its inputs or outputs."""

    name: str
    offset: int = 0

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Operation:
    """``left op right`` with op one of ``+ - * // %``; a negation is ``0 - operand``."""

    op: str
    left: "Formula"
    right: "Formula"
    offset: int = 0

    def __str__(self) -> str:
        return f"({self.left} {self.op} {self.right})"


@dataclass(frozen=True)
class Ratio:
    """``numerator / denominator``: only as the argument of ``ceil`` and ``floor``."""

    numerator: "Formula"
    denominator: "Formula"
    offset: int = 0

    def __str__(self) -> str:
        return f"{self.numerator} / {self.denominator}"


@dataclass(frozen=True)
class Call:
    function: str
    args: tuple["Formula", ...]
    offset: int = 0

    def __str__(self) -> str:
        return f"{self.function}({', '.join(map(str, self.args))})"


Formula = Union[Number, Name, Operation, Ratio, Call]


def _tokenize(text: str) -> list[tuple[str, str, int]]:
    tokens = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        match = _TOKEN.match(text, pos)
        if match is None:
            column = len(text) - len(text[pos:].lstrip())
            raise FormulaSyntaxError(f"unexpected character {text[column]!r}", column)
        kind = match.lastgroup or "op"
        start = match.start(kind)
        tokens.append((kind, match.group(kind), start))
        pos = match.end()
    return tokens


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.pos = 0
        self.depth = 0

    def _column(self) -> int:
        return self.tokens[self.pos][2] if self.pos < len(self.tokens) else len(self.text)

    def _peek(self) -> str | None:
        if self.pos < len(self.tokens) and self.tokens[self.pos][0] == "op":
            return self.tokens[self.pos][1]
        return None

    def _expect(self, op: str) -> None:
        if self._peek() != op:
            found = self.tokens[self.pos][1] if self.pos < len(self.tokens) else "the end"
            raise FormulaSyntaxError(f"expected {op!r}, found {found!r}", self._column())
        self.pos += 1

    def formula(self) -> Formula:
        value = self.sum()
        if self._peek() == "/":
            raise FormulaSyntaxError("`a / b` is only allowed inside ceil() or floor(); use // for floor division",
                                     self._column())
        if self.pos != len(self.tokens):
            raise FormulaSyntaxError(f"unexpected {self.tokens[self.pos][1]!r}", self._column())
        return value

    def sum(self) -> Formula:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise FormulaSyntaxError(f"nested deeper than {MAX_DEPTH} levels", self._column())
        value = self.product()
        while self._peek() in ("+", "-"):
            op, offset = self.tokens[self.pos][1], self._column()
            self.pos += 1
            value = Operation(op, value, self.product(), offset)
        self.depth -= 1
        return value

    def product(self) -> Formula:
        value = self.unary()
        while self._peek() in ("*", "//", "%"):
            op, offset = self.tokens[self.pos][1], self._column()
            self.pos += 1
            value = Operation(op, value, self.unary(), offset)
        return value

    def unary(self) -> Formula:
        if self._peek() == "-":
            offset = self._column()
            self.pos += 1
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise FormulaSyntaxError(f"nested deeper than {MAX_DEPTH} levels", offset)
            operand = self.unary()
            self.depth -= 1
            return Operation("-", Number(0, offset), operand, offset)
        return self.primary()

    def primary(self) -> Formula:
        if self.pos >= len(self.tokens):
            raise FormulaSyntaxError("the formula ends where a value was expected", len(self.text))
        kind, text, offset = self.tokens[self.pos]
        self.pos += 1
        if kind == "int":
            return Number(int(text), offset)
        if kind == "name":
            if self._peek() != "(":
                return Name(text, offset)
            self.pos += 1
            args: list[Formula] = []
            if self._peek() != ")":
                args.append(self.argument())
                while self._peek() == ",":
                    self.pos += 1
                    args.append(self.argument())
            self._expect(")")
            return Call(text, tuple(args), offset)
        if text == "(":
            value = self.sum()
            self._expect(")")
            return value
        raise FormulaSyntaxError(f"unexpected {text!r}", offset)

    def argument(self) -> Formula:
        value = self.sum()
        if self._peek() == "/":
            offset = self._column()
            self.pos += 1
            return Ratio(value, self.unary(), offset)
        return value


@lru_cache(maxsize=4096)
def parse_formula(text: str) -> Formula:
    """The formula ``text`` says; :class:`FormulaSyntaxError` (with its column) when it is not one."""
    if not isinstance(text, str):
        raise FormulaSyntaxError(f"a formula is text, not {type(text).__name__}", 0)
    if len(text) > MAX_LENGTH:
        raise FormulaSyntaxError(f"longer than {MAX_LENGTH} characters", MAX_LENGTH)
    if not text.strip():
        raise FormulaSyntaxError("the formula is empty", 0)
    return _Reader(text).formula()
