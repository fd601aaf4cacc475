"""Helpers shared by rules that hold several operands to one dim."""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext, Operand
from opspec.runtime.contract.arguments import element
from opspec.runtime.shape import Dim, Shape, ShapeError, div_dim, format_shape, merge_dim, merge_shapes


def merged(ctx: InferenceContext, what: str, *dims: Dim) -> Dim:
    """The dims, which the op needs equal, merged into one; a node error naming ``what`` when two known ones differ."""
    result: Dim = None
    for dim in dims:
        try:
            result = merge_dim(result, dim)
        except ShapeError:
            ctx.fail(f"{what} disagree: {', '.join(str(d) for d in dims if d is not None)}")
    return result


def alike_shapes(ctx: InferenceContext, first: str, first_shape: Shape | None, second: str,
                 second_shape: Shape | None) -> Shape | None:
    """The shape of two operands the op needs alike: their merge, or the one that is known; a node
    error naming both where they differ, or where both are scalars (the op needs an axis)."""
    shape = first_shape
    if first_shape is not None and second_shape is not None:
        try:
            shape = merge_shapes(first_shape, second_shape)
        except ShapeError:
            ctx.fail(f"{second} {format_shape(second_shape)} must have the shape of {first} {format_shape(first_shape)}")
    elif second_shape is not None:
        shape = second_shape
    if shape is not None and len(shape) == 0:
        ctx.fail(f"{first} and {second} are scalars; they need at least one axis")
    return shape


def one_value(ctx: InferenceContext, index: Operand) -> Dim:
    """The value a known one-element input holds, as a dim (an int or a ``Sym``); None when the
    input is absent, unknown, longer, or holds something else."""
    values = ctx.input_values(index)
    return element(values[0]) if values is not None and len(values) == 1 else None


def named_where_undecided(ctx: InferenceContext, shape, *operands):
    """``shape``, the broadcast of ``operands``, with a fresh symbol for each axis that every operand
    having it gives a dim (a number or a symbol) but the broadcast leaves unknown.

    Two different symbols broadcast to one of them, which one depending on which is 1 at run
    time; the axis has some size all the same, and a symbol of its own lets later nodes carry
    it (as onnx's ``unk__N`` do).
    """
    if shape is None or None not in shape or any(operand is None for operand in operands):
        return shape
    rank = len(shape)
    dims = list(shape)
    for axis in range(rank):
        if dims[axis] is not None:
            continue
        offset = rank - axis
        if all(len(operand) < offset or operand[-offset] is not None for operand in operands):
            dims[axis] = ctx.fresh_dim()
    return tuple(dims)


def split_evenly(ctx: InferenceContext, what: str, whole: Dim, parts: int | None) -> Dim:
    """``whole`` / ``parts`` for an axis the op cuts into ``parts`` equal pieces (a hidden size into
    heads): a node error naming ``what`` when both are numbers and it does not divide, None when it
    cannot be told (an unknown count, or a symbol that may or may not divide)."""
    if whole is None or parts is None or parts <= 0:
        return None
    if type(whole) is int:
        if whole % parts:
            ctx.fail(f"{what} {whole} is not divisible by {parts}")
        return whole // parts
    try:
        return div_dim(whole, parts)
    except ShapeError:
        return None
