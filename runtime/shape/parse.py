"""Reading ``dim_param`` text back into dims (the grammar that ``str(Sym)`` renders).

Grammar (Python-like precedence, whitespace allowed between tokens)::

    expr    := term (("+" | "-") term)*
    term    := unary (("*" | "//") unary)*
    unary   := "-" unary | primary
    primary := INT | NAME | "(" expr ")"
             | ("min" | "max") "(" expr ("," expr)* ")"
             | ("floor" | "ceil") "(" term "/" unary ")"

Text outside the grammar, or whose value cannot be represented (``N//M``, a negative
constant), is an opaque symbol named by the whole text.
"""
from __future__ import annotations

import re
from typing import List, Optional, Tuple, Union

from .errors import ShapeError
from .sym import Sym

_is_identifier = re.compile(r"[^\W\d]\w*").fullmatch
#: Whether a dim_param text is a plain name (which parses to a symbol of that name).
is_name = _is_identifier

__all__ = ["parse_dim"]

_TOKEN = re.compile(r"\s*(?:([0-9]+)|([^\W\d]\w*)|(//|[-+*/(),]))")
_INT, _NAME, _OP = 1, 2, 3


class _Invalid(Exception):
    """The text is not an expression of the grammar."""


def _tokenize(text: str) -> List[Tuple[int, str]]:
    tokens = []
    pos, end = 0, len(text)
    while pos < end:
        m = _TOKEN.match(text, pos)
        if m is None:
            raise _Invalid
        kind = m.lastindex or 0
        tokens.append((kind, m.group(kind)))
        pos = m.end()
    return tokens


class _Parser:
    __slots__ = ("tokens", "pos")

    def __init__(self, tokens: List[Tuple[int, str]]) -> None:
        self.tokens = tokens
        self.pos = 0

    def peek(self) -> Optional[str]:
        """The next token's text if it is an operator, else ``None``."""
        if self.pos < len(self.tokens):
            kind, text = self.tokens[self.pos]
            if kind == _OP:
                return text
        return None

    def expect(self, op: str) -> None:
        if self.peek() != op:
            raise _Invalid
        self.pos += 1

    def expr(self) -> Union[int, Sym]:
        value = self.term()
        while True:
            op = self.peek()
            if op == "+":
                self.pos += 1
                value = value + self.term()
            elif op == "-":
                self.pos += 1
                value = value - self.term()
            else:
                return value

    def term(self) -> Union[int, Sym]:
        value = self.unary()
        while True:
            op = self.peek()
            if op == "*":
                self.pos += 1
                value = value * self.unary()
            elif op == "//":
                self.pos += 1
                value = value // self.unary()
            else:
                return value

    def unary(self) -> Union[int, Sym]:
        if self.peek() == "-":
            self.pos += 1
            return -self.unary()
        return self.primary()

    def primary(self) -> Union[int, Sym]:
        if self.pos >= len(self.tokens):
            raise _Invalid
        kind, text = self.tokens[self.pos]
        self.pos += 1
        if kind == _INT:
            return int(text)
        if kind == _NAME:
            if self.peek() != "(":
                return Sym(text)
            self.pos += 1
            return self.call(text.lower())
        if text == "(":
            value = self.expr()
            self.expect(")")
            return value
        raise _Invalid

    def call(self, func: str) -> Union[int, Sym]:
        if func in ("min", "max"):
            args = [self.expr()]
            while self.peek() == ",":
                self.pos += 1
                args.append(self.expr())
            self.expect(")")
            return Sym.min(*args) if func == "min" else Sym.max(*args)
        if func in ("floor", "ceil", "ceiling"):
            num = self.term()
            self.expect("/")
            den = self.unary()
            self.expect(")")
            if type(den) is not int or den == 0:
                raise _Invalid
            if func == "floor":
                return num // den
            return num.ceildiv(den) if type(num) is Sym else -(-num // den)
        raise _Invalid


_CACHE: dict = {}
_CACHE_CAP = 4096


def parse_dim(text: str) -> Union[int, Sym, None]:
    """Parse ``dim_param`` text; see the module docstring.  ``""`` gives ``None`` (unknown)."""
    try:
        return _CACHE[text]
    except KeyError:
        pass
    value = _parse(text)
    if len(_CACHE) < _CACHE_CAP:
        _CACHE[text] = value
    return value


def _parse(text: str) -> Union[int, Sym, None]:
    if not text:
        return None
    if _is_identifier(text):
        return Sym(text)
    if text.strip() != text:  # keep surrounding whitespace significant: opaque
        return Sym(text)
    try:
        parser = _Parser(_tokenize(text))
        value = parser.expr()
        if parser.pos != len(parser.tokens):
            raise _Invalid
    except (_Invalid, ShapeError, ZeroDivisionError, RecursionError):
        return Sym(text)
    if type(value) is int and value < 0:
        return Sym(text)
    return value
