"""Helpers shared by rules that hold several operands to one dim."""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext
from opspec.runtime.shape import ShapeError, merge_dim


def merged(ctx: InferenceContext, what: str, *dims):
    """The dims, which the op needs equal, merged into one; a node error naming ``what`` when two known ones differ."""
    result = None
    for dim in dims:
        try:
            result = merge_dim(result, dim)
        except ShapeError:
            ctx.fail(f"{what} disagree: {', '.join(str(d) for d in dims if d is not None)}")
    return result
