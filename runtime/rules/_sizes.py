"""A helper shared by rules that read one size from an input or attribute (TopK's k, OneHot's depth)."""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext


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
