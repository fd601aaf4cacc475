"""Size expressions over a node's integer attributes, as the YAML's dim relations write them.

Grammar (Python precedence, whitespace free)::

    expr  := term (("+" | "-") term)*
    term  := atom (("*" | "//" | "%") atom)*
    atom  := INT | NAME | "(" expr ")" | "ceil" "(" expr "/" expr ")"

``ceil(a / b)`` rounds up and ``a // b`` down: ``ceil(K / block_size)`` blocks of ``block_size * bits // 8``
bytes. :func:`parse_size` reads the text once into a tree (no ``eval``); :func:`evaluate` gives its
value for the attribute values at hand, or None when one is missing or a division is by zero.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping, Union

_TOKEN = re.compile(r"\s*(?:(?P<int>\d+)|(?P<name>[A-Za-z_]\w*)|(?P<op>//|[-+*%/()]))")


class SizeSyntaxError(ValueError):
    """Text outside the grammar; ``offset`` is 0-based within the text."""

    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.offset = offset


@dataclass(frozen=True)
class Binary:
    """``left op right``; ``op`` is ``+ - * // %`` or ``ceil/`` (division rounding up)."""

    op: str
    left: "Size"
    right: "Size"


Size = Union[int, str, Binary]  # a constant, an attribute's name, or an operation


@dataclass(frozen=True)
class SizeExpression:
    """A parsed size expression and the attribute names it reads."""

    text: str
    tree: Size
    names: frozenset[str]


class _Reader:
    def __init__(self, text: str):
        self.text = text
        self.tokens: list[tuple[str, str, int]] = []
        position = 0
        while text[position:].strip():
            match = _TOKEN.match(text, position)
            if match is None:
                start = len(text) - len(text[position:].lstrip())
                raise SizeSyntaxError(f"unexpected character {text[start]!r} in a size expression", start)
            kind = match.lastgroup or "op"
            self.tokens.append((kind, match.group(kind), match.start(kind)))
            position = match.end()
        self.index = 0

    def peek(self) -> str | None:
        return self.tokens[self.index][1] if self.index < len(self.tokens) else None

    def take(self) -> tuple[str, str, int]:
        if self.index >= len(self.tokens):
            raise SizeSyntaxError("the size expression ends too soon", len(self.text))
        self.index += 1
        return self.tokens[self.index - 1]

    def expect(self, text: str) -> None:
        kind, found, offset = self.take()
        if found != text:
            raise SizeSyntaxError(f"expected {text!r} in the size expression, found {found!r}", offset)

    def expr(self) -> Size:
        tree = self.term()
        while self.peek() in ("+", "-"):
            tree = Binary(self.take()[1], tree, self.term())
        return tree

    def term(self) -> Size:
        tree = self.atom()
        while self.peek() in ("*", "//", "%"):
            tree = Binary(self.take()[1], tree, self.atom())
        return tree

    def atom(self) -> Size:
        kind, text, offset = self.take()
        if kind == "int":
            return int(text)
        if kind == "name" and text == "ceil":
            self.expect("(")
            numerator = self.expr()
            self.expect("/")
            denominator = self.expr()
            self.expect(")")
            return Binary("ceil/", numerator, denominator)
        if kind == "name":
            return text
        if text == "(":
            tree = self.expr()
            self.expect(")")
            return tree
        raise SizeSyntaxError(f"expected a number, an attribute or '(' in the size expression, found {text!r}", offset)


def _names(tree: Size) -> set[str]:
    if isinstance(tree, str):
        return {tree}
    if isinstance(tree, Binary):
        return _names(tree.left) | _names(tree.right)
    return set()


@lru_cache(maxsize=1024)  # the same few expressions are read for every node of their op
def parse_size(text: str) -> SizeExpression:
    """Read ``text`` (see the module docstring); :class:`SizeSyntaxError` when it is outside the grammar."""
    reader = _Reader(text)
    tree = reader.expr()
    if reader.index != len(reader.tokens):
        raise SizeSyntaxError(f"unexpected {reader.tokens[reader.index][1]!r} after the size expression",
                              reader.tokens[reader.index][2])
    return SizeExpression(text, tree, frozenset(_names(tree)))


def evaluate(tree: Size, values: Mapping[str, object]) -> int | None:
    """The value of ``tree`` with each name read from ``values``; None when a name has no integer
    value there or a division is by zero."""
    if type(tree) is int:
        return tree
    if isinstance(tree, str):
        value = values.get(tree)
        return value if type(value) is int else None
    assert isinstance(tree, Binary)
    left, right = evaluate(tree.left, values), evaluate(tree.right, values)
    if left is None or right is None:
        return None
    if tree.op in ("//", "%", "ceil/") and right == 0:
        return None
    if tree.op == "+":
        return left + right
    if tree.op == "-":
        return left - right
    if tree.op == "*":
        return left * right
    if tree.op == "//":
        return left // right
    if tree.op == "%":
        return left % right
    return -(-left // right)


__all__ = ["SizeExpression", "SizeSyntaxError", "evaluate", "parse_size"]
