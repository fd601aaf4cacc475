"""Unification and arithmetic on single dims.

A dim is an ``int >= 0`` (known), ``None`` (unknown) or a ``Sym`` (symbolic).  Every function
tries the two-``int`` case first, since that is what almost every call sees.
"""
from __future__ import annotations

from typing import Optional, Union, overload

from .errors import ShapeError
from .render import format_dim
from .sym import Sym

__all__ = [
    "Dim", "merge_dim", "relax_dim", "add_dim", "sub_dim", "mul_dim", "div_dim",
    "ceil_div_dim", "min_dim", "max_dim",
]

Dim = Optional[Union[int, Sym]]
#: A dim that is known: a number or a symbolic expression.
KnownDim = Union[int, Sym]


def merge_dim(a: Dim, b: Dim) -> Dim:
    """Unify two dims that must be equal.

    Unknown yields to anything, a known value beats a symbol, and of two different symbols
    the first is kept; two different known values raise ``ShapeError``.
    """
    if a is b:
        return a
    if type(a) is int:
        if type(b) is int:
            if a == b:
                return a
            raise ShapeError(f"cannot merge dims {a} and {b}")
        return a
    if type(b) is int or a is None:
        return b
    return a


def relax_dim(a: Dim, b: Dim) -> Dim:
    """The most specific dim covering both: ``a`` if they are equal, else unknown."""
    if a is b or a == b:
        return a
    return None


@overload
def add_dim(a: KnownDim, b: KnownDim) -> KnownDim: ...
@overload
def add_dim(a: Dim, b: Dim) -> Dim: ...
def add_dim(a: Dim, b: Dim) -> Dim:
    """``a + b``; unknown if either is unknown."""
    if type(a) is int and type(b) is int:
        return a + b
    if a is None or b is None:
        return None
    return a + b


def sub_dim(a: Dim, b: Dim) -> Dim:
    """``a - b``; ``ShapeError`` when the result is a negative constant."""
    if type(a) is int and type(b) is int:
        if a >= b:
            return a - b
        raise ShapeError(f"cannot subtract dim {b} from dim {a}: the result is negative")
    if type(b) is int and b == 0:
        return a
    if a is None or b is None:
        return None
    result = a - b
    if type(result) is int and result < 0:
        raise ShapeError(
            f"cannot subtract dim {b} from dim {a}: the result is negative ({result})"
        )
    return result


@overload
def mul_dim(a: KnownDim, b: KnownDim) -> KnownDim: ...
@overload
def mul_dim(a: Dim, b: Dim) -> Dim: ...
def mul_dim(a: Dim, b: Dim) -> Dim:
    """``a * b``; ``0`` when either is ``0``, the other operand when one is ``1``."""
    if type(a) is int:
        if type(b) is int:
            return a * b
        if a == 0 or a == 1:
            return 0 if a == 0 else b
        return None if b is None else b * a
    if type(b) is int:
        if b == 0 or b == 1:
            return 0 if b == 0 else a
        return None if a is None else a * b
    if a is None or b is None:
        return None
    return a * b


def _trivial_division(a: Dim, b: Dim) -> bool:
    """Reject a non-positive known divisor; True when ``a`` is the quotient (``b == 1``, ``a == 0``)."""
    if type(b) is int:
        if b <= 0:
            raise ShapeError(f"cannot divide dim {format_dim(a)} by {b}")
        if b == 1:
            return True
    return type(a) is int and a == 0


def div_dim(a: Dim, b: Dim, evenly: bool = True) -> Dim:
    """``a / b``.

    With ``evenly`` the division must be exact (``ShapeError`` when it provably is not);
    otherwise it floors.  A symbolic divisor gives a result only when the quotient is exact
    (``(N*M) / M == N``), else unknown.
    """
    if type(a) is int and type(b) is int:
        if b > 0:
            if evenly and a % b:
                raise ShapeError(f"cannot evenly divide dim {a} by {b}")
            return a // b
        raise ShapeError(f"cannot divide dim {a} by {b}")
    if _trivial_division(a, b):
        return a
    if a is None or b is None:
        return None
    if type(b) is int and type(a) is Sym:
        if evenly and a.remainder(b):
            raise ShapeError(f"cannot evenly divide dim {a} by {b}")
        return a // b
    if type(a) is not Sym:  # a non-zero constant over a symbol is never an exact expression
        return None
    return a.exact_div(b)


def ceil_div_dim(a: Dim, b: Dim) -> Dim:
    """``ceil(a / b)``; symbolic divisors behave as in ``div_dim``."""
    if type(a) is int and type(b) is int:
        if b > 0:
            return -(-a // b)
        raise ShapeError(f"cannot divide dim {a} by {b}")
    if _trivial_division(a, b):
        return a
    if a is None or b is None:
        return None
    if type(b) is int and type(a) is Sym:
        return a.ceildiv(b)
    if type(a) is not Sym:
        return None
    return a.exact_div(b)


@overload
def min_dim(a: KnownDim, b: KnownDim) -> KnownDim: ...
@overload
def min_dim(a: Dim, b: Dim) -> Dim: ...
def min_dim(a: Dim, b: Dim) -> Dim:
    """``min(a, b)``; ``0`` when either is ``0`` (dims are never negative)."""
    if type(a) is int:
        if type(b) is int:
            return a if a <= b else b
        if a == 0:
            return 0
    elif type(b) is int and b == 0:
        return 0
    if a is None or b is None:
        return None
    return Sym.min(a, b)


@overload
def max_dim(a: KnownDim, b: KnownDim) -> KnownDim: ...
@overload
def max_dim(a: Dim, b: Dim) -> Dim: ...
def max_dim(a: Dim, b: Dim) -> Dim:
    """``max(a, b)``; the other operand when one is ``0``."""
    if type(a) is int:
        if type(b) is int:
            return a if a >= b else b
        if a == 0:
            return b
    elif type(b) is int and b == 0:
        return a
    if a is None or b is None:
        return None
    return Sym.max(a, b)
