"""Numpy-style broadcasting over shapes with unknown and symbolic dims.

Per aligned axis: ``1`` yields to the other dim; an unknown or symbolic dim against a known
``k != 1`` gives ``k`` (it must be ``1`` or ``k``); unknown against unknown, and two different
symbols, give unknown (either could be ``1``) unless one clamps the other (``T`` against
``min(T, 197)`` gives ``T``); two different known dims, neither ``1``, raise.
"""
from __future__ import annotations

import enum
from typing import Final, Literal, Tuple, Union, overload

from .dims import Dim
from .errors import ShapeError
from .render import format_dim, format_shape
from .shapes import Shape
from .sym import Sym

__all__ = ["broadcast_shapes", "unidirectional_broadcast"]

class _Conflict(enum.Enum):
    """Two known dims that differ, neither of them 1."""

    CONFLICT = 0


_CONFLICT: Final = _Conflict.CONFLICT


def _broadcast_dim(a: Dim, b: Dim) -> Union[Dim, Literal[_Conflict.CONFLICT]]:
    """The broadcast of two dims, or ``_CONFLICT``."""
    if a is b:
        return a
    if type(a) is int:
        if type(b) is int:
            if a == b or b == 1:
                return a
            return b if a == 1 else _CONFLICT
        return b if a == 1 else a
    if type(b) is int:
        return a if b == 1 else b
    # Neither is known: equal symbols survive, anything else could hide a 1 ...
    if a == b:
        return a
    if type(a) is not Sym or type(b) is not Sym:  # an unknown dim
        return None
    # ... unless one is a bound of the other that is 1 whenever the other is (min(T, 197) and T).
    return a if _clamps(a, b) else b if _clamps(b, a) else None


def _clamps(big: Sym, small: Sym) -> bool:
    """True when ``small`` is provably at most ``big`` and 0 exactly when ``big`` is 0; then the
    only valid broadcasts of the two (equal, or ``small`` 1, or ``big`` 1 forcing ``small`` 1)
    all give ``big``."""
    return Sym.min(big, small) == small and Sym.min(small, 1) == Sym.min(big, 1)


def _broadcast_pair(a: Tuple[Dim, ...], b: Tuple[Dim, ...]) -> Tuple[Dim, ...]:
    swapped = len(a) < len(b)
    if swapped:
        a, b = b, a
    lead = len(a) - len(b)
    out = list(a[:lead])
    append = out.append
    d: Union[Dim, Literal[_Conflict.CONFLICT]]
    for x, y in zip(a[lead:] if lead else a, b):
        if type(x) is int and type(y) is int:  # the common case, inlined
            if x == y or y == 1:
                append(x)
                continue
            if x == 1:
                append(y)
                continue
            d = _CONFLICT
        else:
            d = _broadcast_dim(x, y)
        if d is _CONFLICT:
            if swapped:
                x, y = y, x
            raise ShapeError(
                f"dims {format_dim(x)} and {format_dim(y)} at axis {len(out) - len(a)} differ"
            )
        append(d)
    return tuple(out)


def _quote(shapes: Tuple[Shape, ...]) -> str:
    texts = [format_shape(s) for s in shapes]
    return ", ".join(texts[:-1]) + " and " + texts[-1]


@overload
def broadcast_shapes(*shapes: Tuple[Dim, ...]) -> Tuple[Dim, ...]: ...
@overload
def broadcast_shapes(*shapes: Shape) -> Shape: ...
def broadcast_shapes(*shapes: Shape) -> Shape:
    """Multidirectional (numpy) broadcast of any number of shapes.

    Unknown rank anywhere gives unknown rank; no shapes give ``()``.
    """
    if len(shapes) == 2:
        a, b = shapes
        if a is None or b is None:
            return None
        if a == b:
            return a
        try:
            return _broadcast_pair(a, b)
        except ShapeError as e:
            raise ShapeError(f"cannot broadcast shapes {_quote(shapes)}: {e}") from None
    if not shapes:
        return ()
    known = [s for s in shapes if s is not None]
    if len(known) < len(shapes):
        return None
    out = known[0]
    try:
        for s in known[1:]:
            if s != out:
                out = _broadcast_pair(out, s)
    except ShapeError as e:
        raise ShapeError(f"cannot broadcast shapes {_quote(shapes)}: {e}") from None
    return out


@overload
def unidirectional_broadcast(target: Tuple[Dim, ...], source: Shape) -> Tuple[Dim, ...]: ...
@overload
def unidirectional_broadcast(target: Shape, source: Shape) -> Shape: ...
def unidirectional_broadcast(target: Shape, source: Shape) -> Shape:
    """Check that ``source`` broadcasts to ``target`` (ONNX unidirectional broadcasting).

    The result has ``target``'s shape, with unknown or symbolic target dims refined to the
    known value a non-``1`` source dim forces on them.
    """
    if source is None or target is None:
        return target
    n, m = len(target), len(source)
    if m > n:
        raise ShapeError(
            f"cannot broadcast shape {format_shape(source)} to {format_shape(target)}: "
            f"rank {m} exceeds {n}"
        )
    if target == source:
        return target
    out = None
    for i in range(1, m + 1):
        s = source[-i]
        if type(s) is not int or s == 1:
            continue  # unknown, symbolic or 1: no constraint the target can use
        t = target[-i]
        if type(t) is int:
            if t != s:
                raise ShapeError(
                    f"cannot broadcast shape {format_shape(source)} to "
                    f"{format_shape(target)}: dims {s} and {t} at axis {-i} differ"
                )
            continue
        if out is None:
            out = list(target)
        out[-i] = s
    return target if out is None else tuple(out)
