"""Helpers shared by rules that read one size (TopK's k, OneHot's depth) or compute sizes."""
from __future__ import annotations

from opspec.runtime.contract import MAX_DIM, InferenceContext


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
