"""The compact one-line notation of opdefs, in the spirit of TensorFlow's spec strings.

Formal inputs and outputs::

    T                   one value whose type is bound to type parameter T
    tensor(int64)?      an optional input of a fixed type
    T+                  variadic, at least one value (``T*``: zero or more)
    T+ heterogeneous    variadic whose values may have different types
    T differentiable    flags: differentiable | non-differentiable | heterogeneous

Attributes::

    int = 1                               optional, with a default
    ints                                  optional, no default
    int required
    float >= 0 = 0.5                      value constraints before the default
    string in {NOTSET, VALID} = NOTSET    allowed values
    strings in {Relu, Tanh} any case      allowed strings, compared without regard to case
    ints len >= 1                         list length
    tensor len == 1                       a tensor's element count
    int in rank(X) = 0                    an axis of input X: -r <= v < r, r = rank(X)
                                          (for a sequence X, the rank of its elements)
    int in rank(X) + 1                    one more axis each side: -(r+1) <= v <= r
    ints len == 2 * rank(X) - 4           a list length relative to input X's rank
    floats len == len(indexes)            as many values as list attribute ``indexes``
    int divides dim(query, -1)            the value divides dim -1 of input ``query``
    int == dim(W, 0) or -1                the value is W's dim 0, unless it is -1 ("not set")
    int dim(B, 1) == ceil(K / block_size) the dim is a size over the node's int attributes
                                          (a formula of :mod:`opspec.runtime.formula`)
    ... if rank(query) == 3               a relation only for an input of that rank
    ... if present(key)                   a relation only for a node that gives input ``key``
    ... as "query's hidden size"          how messages name the dim

Each parser raises :class:`NotationError` with the character offset of the problem.
"""
from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

from opspec.runtime.schema import (
    AttrType,
    DifferentiationCategory,
    DimRelation,
    DimRelationKind,
    FormalParameterOption,
    ValueConstraint,
)
from opspec.runtime.formula import (ARITHMETIC, FormulaNames, FormulaSyntaxError, attribute_names,
                                    formula_problems, parse_formula)


class NotationError(ValueError):
    """A spec string that does not parse; ``offset`` is 0-based within the string."""

    def __init__(self, message: str, offset: int = 0):
        super().__init__(message)
        self.offset = offset


@dataclass(frozen=True)
class ParamSpec:
    """What a formal-parameter spec string says."""

    type_str: str
    option: FormalParameterOption = FormalParameterOption.Single
    min_arity: int = 1
    is_homogeneous: bool = True
    differentiation: DifferentiationCategory = DifferentiationCategory.Unknown


@dataclass(frozen=True)
class AttrSpec:
    """What an attribute spec string says."""

    type: AttrType
    required: bool = False
    default: Any = None
    constraint: ValueConstraint | None = None


ATTR_TYPES = {t.spelling: t for t in AttrType}
DIFFERENTIATION = {
    "differentiable": DifferentiationCategory.Differentiable,
    "non-differentiable": DifferentiationCategory.NonDifferentiable,
    "unknown": DifferentiationCategory.Unknown,
}
_TOKEN = re.compile(
    r"""\s*(?:
        (?P<number>[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?inf\b|nan\b)
      | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
      | (?P<word>[A-Za-z_][\w.\-]*)
      | (?P<op>>=|<=|==|//|[<>={}\[\](),*+\-/%])
    )""",
    re.VERBOSE,
)


class _Token(NamedTuple):
    kind: str
    text: str
    offset: int


_BLANK_TO_END = re.compile(r"\s*\Z")


def _tokenize(text: str) -> list[_Token]:
    tokens, position = [], 0
    while position < len(text):
        if _BLANK_TO_END.match(text, position):
            break
        match = _TOKEN.match(text, position)
        if not match:
            start = len(text) - len(text[position:].lstrip())
            raise NotationError(f"unexpected character {text[start]!r}", start)
        kind = match.lastgroup or "op"
        tokens.append(_Token(kind, match.group(kind), match.start(kind)))
        position = match.end()
    return tokens


def split_type(text: str) -> tuple[str, int]:
    """Split a leading type (``T`` or ``tensor(float)``) off ``text``; return it and its end."""
    match = re.match(r"\s*[A-Za-z_][\w.]*", text)
    if not match:
        raise NotationError("expected a type parameter or a type such as tensor(float)", 0)
    end, depth = match.end(), 0
    if end < len(text) and text[end] == "(":
        for index in range(end, len(text)):
            depth += {"(": 1, ")": -1}.get(text[index], 0)
            if depth == 0:
                end = index + 1
                break
        else:
            raise NotationError("unbalanced parentheses in type", end)
    return re.sub(r"\s+", "", text[: end]).strip(), end


@lru_cache(maxsize=4096)  # the same few declarations recur in every op; the result is frozen
def parse_param(text: str) -> ParamSpec:
    """Parse a formal input/output spec such as ``T+ differentiable``."""
    type_str, end = split_type(text)
    option, min_arity = FormalParameterOption.Single, 1
    rest = text[end:]
    if rest[:1] in ("?", "+", "*"):
        option = FormalParameterOption.Optional if rest[0] == "?" else FormalParameterOption.Variadic
        min_arity = 0 if rest[0] == "*" else 1
        end += 1
        rest = rest[1:]
    homogeneous, differentiation = True, DifferentiationCategory.Unknown
    for token in _tokenize(rest):
        offset = end + token.offset
        if token.text == "heterogeneous":
            if option is not FormalParameterOption.Variadic:
                raise NotationError("only a variadic (T+ or T*) can be heterogeneous", offset)
            homogeneous = False
        elif token.text in DIFFERENTIATION:
            differentiation = DIFFERENTIATION[token.text]
        else:
            raise NotationError(
                f"unknown flag {token.text!r} (expected differentiable, non-differentiable "
                "or heterogeneous)",
                offset,
            )
    return ParamSpec(type_str, option, min_arity, homogeneous, differentiation)


class _Cursor:
    def __init__(self, text: str):
        self.text = text
        self.tokens = _tokenize(text)
        self.index = 0

    def peek(self) -> _Token | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def take(self) -> _Token:
        token = self.peek()
        if token is None:
            raise NotationError("unexpected end of spec", len(self.text))
        self.index += 1
        return token

    def expect(self, text: str) -> _Token:
        token = self.take()
        if token.text != text:
            raise NotationError(f"expected {text!r}, found {token.text!r}", token.offset)
        return token


def _literal(cursor: _Cursor) -> Any:
    token = cursor.take()
    if token.kind == "number":
        if re.fullmatch(r"[-+]?\d+", token.text):
            return int(token.text)
        return float(token.text)
    if token.kind == "string":
        return bytes(token.text[1:-1], "utf-8").decode("unicode_escape")
    if token.kind == "word":
        return token.text
    if token.text == "[":
        items: list[Any] = []
        if cursor.peek() is not None and cursor.peek().text == "]":  # type: ignore[union-attr]
            cursor.take()
            return items
        while True:
            items.append(_literal(cursor))
            closing = cursor.take()
            if closing.text == "]":
                return items
            if closing.text != ",":
                raise NotationError(f"expected ',' or ']', found {closing.text!r}", closing.offset)
    raise NotationError(f"expected a value, found {token.text!r}", token.offset)


def _number(cursor: _Cursor) -> int | float:
    token = cursor.peek()
    value = _literal(cursor)
    if not isinstance(value, (int, float)):
        raise NotationError("expected a number", token.offset if token else 0)
    return value


def _count(cursor: _Cursor) -> int:
    token = cursor.peek()
    value = _literal(cursor)
    if type(value) is not int or value < 0:
        raise NotationError("expected a whole number", token.offset if token else 0)
    return value


def _rank_of(cursor: _Cursor) -> str:
    """``rank(NAME)``: the input whose rank a limit is relative to."""
    cursor.expect("rank")
    return _parenthesized_name(cursor, "an input name")


def _parenthesized_name(cursor: _Cursor, what: str) -> str:
    """``(NAME)``: the input or attribute a limit is relative to."""
    cursor.expect("(")
    name = cursor.take()
    if name.kind != "word":
        raise NotationError(f"expected {what}, found {name.text!r}", name.offset)
    cursor.expect(")")
    return name.text


def _relative_length(cursor: _Cursor) -> bool:
    """Whether a ``len ==`` ahead is relative to a rank (``len == 2 * rank(X) - 4``)."""
    ahead = cursor.tokens[cursor.index:cursor.index + 3]
    return len(ahead) >= 2 and ahead[0].text == "==" and (
        ahead[1].text == "rank" or (len(ahead) == 3 and ahead[2].text == "*"))


def _length_of(cursor: _Cursor) -> dict[str, Any]:
    """``[N *] rank(NAME) [+|- M]`` after ``len ==``."""
    scale = 1
    if cursor.peek() is not None and cursor.peek().text != "rank":  # type: ignore[union-attr]
        scale = _count(cursor)
        cursor.expect("*")
    found: dict[str, Any] = {"length_of": _rank_of(cursor), "length_scale": scale}
    token = cursor.peek()
    if token is not None and token.text in ("+", "-"):
        cursor.take()
        found["length_offset"] = _count(cursor) * (1 if token.text == "+" else -1)
    elif token is not None and token.kind == "number":  # "-4" written without a space
        found["length_offset"] = int(_number(cursor))
    return found

_SIZE_ENDS = {"if", "as", "or", "required", "divides", "dim", "len", "in", "=", ">=", "<=", ">", "<", "=="}


def _dim_ref(cursor: _Cursor) -> tuple[str, int]:
    """``dim(NAME, AXIS)``: an input and one of its axes."""
    cursor.expect("dim")
    cursor.expect("(")
    name = cursor.take()
    if name.kind != "word":
        raise NotationError(f"expected an input name, found {name.text!r}", name.offset)
    cursor.expect(",")
    axis = cursor.take()
    if axis.kind != "number" or not re.fullmatch(r"[-+]?\d+", axis.text):
        raise NotationError(f"expected a whole-number axis, found {axis.text!r}", axis.offset)
    cursor.expect(")")
    return name.text, int(axis.text)


def _ends_size(cursor: _Cursor) -> bool:
    """Whether the next token opens the clause after a size (``if(c, a, b)`` is the size's own)."""
    ahead = cursor.tokens[cursor.index:cursor.index + 2]
    return not ahead or (ahead[0].text in _SIZE_ENDS and not (
        ahead[0].text == "if" and len(ahead) == 2 and ahead[1].text == "("))


def _size_text(cursor: _Cursor) -> str:
    """The size after ``dim(X, i) ==``, up to the next clause: a formula calling only arithmetic
    functions (which attributes it may read is the version's to say)."""
    start = cursor.peek()
    if start is None or _ends_size(cursor):
        raise NotationError("expected a size expression such as ceil(K / block_size)",
                            start.offset if start else len(cursor.text))
    depth, last = 0, start
    while (token := cursor.peek()) is not None and not (depth == 0 and _ends_size(cursor)):
        depth += {"(": 1, ")": -1}.get(token.text, 0)
        last = cursor.take()
    text = cursor.text[start.offset:last.offset + len(last.text)]
    try:
        formula = parse_formula(text)
    except FormulaSyntaxError as error:
        raise NotationError(str(error), start.offset + error.offset) from None
    any_names = FormulaNames(attributes=dict.fromkeys(attribute_names(formula), "int"), functions=ARITHMETIC)
    problems = formula_problems(text, any_names)
    if problems:
        message, offset = problems[0]
        raise NotationError(message, start.offset + offset)
    return text


def _relation(cursor: _Cursor, kind: DimRelationKind) -> DimRelation:
    """A dim relation after its opening word, with its optional ``or N``, ``if rank(X) == R``,
    ``if present(Y)`` and ``as "name"``."""
    size = None
    if kind is DimRelationKind.SIZE:
        cursor.index -= 1  # the clause opens with the dim itself
    name, axis = _dim_ref(cursor)
    if kind is DimRelationKind.SIZE:
        cursor.expect("==")
        size = _size_text(cursor)
    found: dict[str, Any] = {}
    while (token := cursor.peek()) is not None and token.text in ("or", "if", "as"):
        cursor.take()
        if token.text == "or":
            value = cursor.take()
            if value.kind != "number" or not re.fullmatch(r"[-+]?\d+", value.text):
                raise NotationError(f"expected a whole number after 'or', found {value.text!r}", value.offset)
            found["unless"] = int(value.text)
        elif token.text == "if" and cursor.peek() is not None and cursor.peek().text == "present":  # type: ignore[union-attr]
            cursor.take()
            found["present"] = _parenthesized_name(cursor, "an input name")
        elif token.text == "if":
            ranked = _rank_of(cursor)
            if ranked != name:
                raise NotationError(f"the rank condition must be on {name!r}, the input of the dim", token.offset)
            cursor.expect("==")
            found["rank"] = _count(cursor)
        else:
            label = cursor.take()
            if label.kind != "string":
                raise NotationError(f"expected a quoted name for the dim after 'as', found {label.text!r}",
                                    label.offset)
            found["named"] = _literal_text(label)
    return DimRelation(kind, name, axis, size=size, **found)


def _literal_text(token: _Token) -> str:
    return bytes(token.text[1:-1], "utf-8").decode("unicode_escape")


@lru_cache(maxsize=4096)  # the same few declarations recur in every op; the result is frozen
def parse_attribute(text: str) -> AttrSpec:
    """Parse an attribute spec such as ``int >= 0 = 1`` or ``string in {a, b} = a``."""
    cursor = _Cursor(text)
    head = cursor.take()
    if head.text not in ATTR_TYPES:
        raise NotationError(
            f"unknown attribute type {head.text!r} (expected one of {', '.join(ATTR_TYPES)})",
            head.offset,
        )
    attr_type = ATTR_TYPES[head.text]
    bounds: dict[str, Any] = {}
    relations: list[DimRelation] = []
    required, default, has_default = False, None, False
    while (token := cursor.peek()) is not None:
        cursor.take()
        if token.text in (">=", ">"):
            bounds["minimum"], bounds["exclusive_minimum"] = _number(cursor), token.text == ">"
        elif token.text in ("<=", "<"):
            bounds["maximum"], bounds["exclusive_maximum"] = _number(cursor), token.text == "<"
        elif token.text == "in" and (cursor.peek() is not None and cursor.peek().text == "rank"):  # type: ignore[union-attr]
            bounds["axis_of"] = _rank_of(cursor)
            if cursor.peek() is not None and cursor.peek().text == "+":  # type: ignore[union-attr]
                cursor.take()
                bounds["axis_extra"] = _count(cursor)
        elif token.text == "in":
            cursor.expect("{")
            allowed = [_literal(cursor)]
            while (separator := cursor.take()).text != "}":
                if separator.text != ",":
                    raise NotationError(f"expected ',' or '}}', found {separator.text!r}", separator.offset)
                allowed.append(_literal(cursor))
            bounds["allowed"] = tuple(allowed)
            if cursor.peek() is not None and cursor.peek().text == "any":  # type: ignore[union-attr]
                cursor.take()
                cursor.expect("case")
                bounds["ignore_case"] = True
        elif token.text == "len" and [t.text for t in cursor.tokens[cursor.index:cursor.index + 2]] == ["==", "len"]:
            cursor.expect("==")
            cursor.expect("len")
            bounds["length_as"] = _parenthesized_name(cursor, "an attribute name")
        elif token.text == "len" and _relative_length(cursor):
            cursor.expect("==")
            bounds.update(_length_of(cursor))
        elif token.text == "len":
            relation = cursor.take()
            size = _number(cursor)
            if relation.text in (">=", "=="):
                bounds["min_length"] = int(size)
            if relation.text in ("<=", "=="):
                bounds["max_length"] = int(size)
            if relation.text not in (">=", "<=", "=="):
                raise NotationError("expected >=, <= or == after len", relation.offset)
        elif token.text in ("divides", "dim") or (
                token.text == "==" and cursor.peek() is not None and cursor.peek().text == "dim"):  # type: ignore[union-attr]
            kind = {"divides": DimRelationKind.DIVIDES, "dim": DimRelationKind.SIZE}.get(token.text,
                                                                                      DimRelationKind.EQUALS)
            relations.append(_relation(cursor, kind))
        elif token.text == "required":
            required = True
        elif token.text == "=":
            default, has_default = _literal(cursor), True
        else:
            raise NotationError(
                f"unexpected {token.text!r} (expected a constraint, '= default' or 'required')",
                token.offset,
            )
    if required and has_default:
        raise NotationError("an attribute cannot be both required and defaulted", 0)
    if relations:
        bounds["relations"] = tuple(relations)
    constraint = ValueConstraint(**bounds) if bounds else None
    return AttrSpec(attr_type, required, default if has_default else None, constraint)


def float32(value: float) -> float:
    """The float onnx stores for a float attribute (rounded to float32)."""
    try:
        return struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:  # beyond float32's range: onnx would store an infinity
        return math.copysign(math.inf, value)


def shortest_float(value: float) -> str:
    """The shortest text that reads back as the same float32 (``1e-05``, not ``9.99e-06``)."""
    if math.isinf(value) or math.isnan(value):
        return repr(value)
    stored = float32(value)
    for digits in range(1, 18):
        text = f"{stored:.{digits}g}"
        if float32(float(text)) == stored:
            return text if ("e" in text or "." in text) else text + ".0"
    return repr(stored)
