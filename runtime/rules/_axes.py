"""Helpers shared by the shape-op rules: axes, shapes of known data, passing data through."""
from __future__ import annotations

from typing import Sequence

from opspec.runtime.contract import Data, InferenceContext, option
from opspec.runtime.shape import num_elements

#: The ``negative_axes`` parameter: versions that predate negative (counted from the back)
#: axes say so with ``negative_axes: false``.
NEGATIVE_AXES = option("bool", True, doc="whether negative axes count from the back (false: they are an error)")


def all_ints(values: Sequence | None) -> tuple | None:
    """``values`` when every element is a known int, else None."""
    if values is None or any(type(v) is not int for v in values):
        return None
    return tuple(values)


def refuse_negative(ctx: InferenceContext, axis: int, what: str) -> None:
    """Fail for a negative axis when the op version says they are not allowed yet."""
    if axis < 0 and not ctx.option("negative_axes", True):
        ctx.fail(f"{what} {axis} is negative, which {ctx.op_type}-{ctx.schema.since_version} does not allow")


def axis_arg(ctx: InferenceContext, axis: int, rank: int, what: str = "axis") -> int:
    """Normalise ``axis`` for ``rank``, refusing negative values where the version does."""
    refuse_negative(ctx, axis, what)
    return ctx.normalize_axis(axis, rank, what)


def axes_arg(ctx: InferenceContext, axes: Sequence[int], rank: int,
          what: str = "axes") -> list[int]:
    """Normalise a list of distinct axes."""
    normalized = [axis_arg(ctx, a, rank, what) for a in axes]
    if len(set(normalized)) != len(normalized):
        ctx.fail(f"{what} {list(axes)} repeat an axis")
    return normalized


def shape_of(ctx: InferenceContext, index: int):
    """The input's shape, or the shape of its known data when the type has none."""
    shape = ctx.input_shape(index)
    if shape is None:
        data = ctx.input_data(index)
        if data is not None:
            return tuple(data.shape)
    return shape


def pass_data(ctx: InferenceContext, shape) -> None:
    """Carry input 0's known data to output 0 unchanged, under the new ``shape``."""
    data = ctx.input_data(0)
    if data is None or shape is None or any(type(d) is not int for d in shape):
        return
    if num_elements(shape) == len(data.values):
        ctx.set_output_data(0, Data(tuple(shape), tuple(data.values)))
