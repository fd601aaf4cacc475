"""Helpers shared by rules that read one size (TopK's k, OneHot's depth) or compute sizes."""
from __future__ import annotations

from typing import Sequence

from opspec.runtime.contract import MAX_DIM, InferenceContext
from opspec.runtime.shape import Sym, num_elements


def single_size(ctx: InferenceContext, key: str, least: int):
    """The one value that argument ``key`` holds (an int or a ``Sym``), or None when unknown.

    A node error when the argument holds more than one value, or an int below ``least``; an
    empty one says nothing.
    """
    values = ctx.ints_arg(key)
    if values.length is not None and values.length > 1:
        ctx.fail(f"{ctx.named(key)} must hold one value, got {values.length}")
    size = values.values[0] if values.values else None
    if type(size) is int and size < least:
        ctx.fail(f"{ctx.named(key)} is {size}, less than {least}")
    return size


def within_limits(ctx: InferenceContext, shape):
    """``shape`` when every known dim fits in int64, else a node error (no tensor can be that large)."""
    if shape is not None:
        for dim in shape:
            if type(dim) is int and dim > MAX_DIM:
                ctx.fail(f"a dim of {dim} does not fit in int64")
    return shape


def _factors(dims: Sequence) -> tuple[int, list] | None:
    """The product of the known dims and the symbolic dims apart; None when a dim is unknown,
    zero or negative."""
    product, symbolic = 1, []
    for dim in dims:
        if type(dim) is int:
            if dim <= 0:
                return None
            product *= dim
        elif type(dim) is Sym:
            symbolic.append(dim)
        else:
            return None
    return product, symbolic


def _leftover(of: list, taken: list) -> list | None:
    """The symbolic dims of ``of`` left once each of ``taken`` is matched to an equal one; None when one is not."""
    left = list(of)
    for dim in taken:
        try:
            left.remove(dim)
        except ValueError:
            return None
    return left


def same_size(a: Sequence | None, b: Sequence) -> bool:
    """True when shape ``a`` plainly holds as many elements as ``b``: the products of their known dims
    agree and their symbolic dims pair up. False says only that it takes symbolic arithmetic to tell."""
    if a is None:
        return False
    first, second = _factors(a), _factors(b)
    if first is None or second is None or first[0] != second[0] or len(first[1]) != len(second[1]):
        return False
    return _leftover(first[1], second[1]) == []


def size_quotient(whole: Sequence | None, part: Sequence):
    """The dim that ``part``'s dims make up ``whole``'s element count with (Reshape's -1), where it
    plainly follows: every symbolic dim of ``part`` is one of ``whole``'s, the product of ``part``'s
    known dims divides that of ``whole``'s, and either what ``part`` takes or what it leaves is a
    single term (``N``, ``2*N*M``: then the quotient is the one symbolic division finds). None when it
    takes symbolic arithmetic."""
    if whole is None:
        return None
    first, second = _factors(whole), _factors(part)
    if first is None or second is None or first[0] % second[0]:
        return None
    left = _leftover(first[1], second[1])
    if left is None:
        return None
    if not all(dim.single_term for dim in second[1]) and not all(dim.single_term for dim in left):
        return None
    return num_elements((first[0] // second[0], *left))
