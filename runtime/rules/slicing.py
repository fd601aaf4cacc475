"""Rules that keep part of a tensor's axes or elements: Slice, Squeeze, Unsqueeze."""
from __future__ import annotations

from collections.abc import Sequence

from opspec.runtime.contract import Data, InferenceContext, input, input_or_attribute, rule
from opspec.runtime.rules._axes import NEGATIVE_AXES, all_ints, axes_arg, pass_data, shape_of
from opspec.runtime.shape import Dim, Sym, ceil_div_dim, format_shape, min_dim

#: Slice bounds at or beyond these mean "through the end" / "through the start".
_BIG = 2**31 - 1


@rule("slice", "Take a strided window along some axes.",
      starts=input_or_attribute(required=True), ends=input_or_attribute(required=True),
      axes=input_or_attribute(), steps=input(), negative_axes=NEGATIVE_AXES)
def slice_(ctx: InferenceContext) -> None:
    """Strided windows with numpy clamping; unknown bounds leave the affected dims unknown."""
    source = shape_of(ctx, 0)
    starts = ctx.ints_arg("starts")
    ends = ctx.ints_arg("ends")
    axes = ctx.ints_arg("axes")
    steps = ctx.ints_arg("steps")
    if not starts.present or not ends.present:
        ctx.fail("'starts' and 'ends' are required")
    lengths = {p.length for p in (starts, ends, axes, steps) if p.present and p.length is not None}
    if len(lengths) > 1:
        ctx.fail(f"starts, ends, axes and steps must have one length, got {sorted(lengths)}")
    if source is None:
        ctx.set_output_shape("output", None)
        return
    rank = len(source)
    count = next(iter(lengths)) if lengths else None
    axis_list: list[int] | None
    if axes.present:
        named = all_ints(axes.values)
        axis_list = axes_arg(ctx, named, rank) if named is not None else None
    elif count is not None:
        if count > rank:
            ctx.fail(f"{count} starts for an input of rank {rank}")
        axis_list = list(range(count))
    else:
        axis_list = None
    if axis_list is None:  # which axes are sliced is unknown
        ctx.set_output_shape("output", (None,) * rank)
        return
    n = len(axis_list)
    step_values = steps.values if steps.present else (1,) * n
    out = list(source)
    for k, axis in enumerate(axis_list):
        start = starts.values[k] if starts.values is not None else None
        end = ends.values[k] if ends.values is not None else None
        step = step_values[k] if step_values is not None else None
        if step == 0:
            ctx.fail(f"step 0 on axis {axis}")
        out[axis] = _slice_length(source[axis], start, end, step)
    ctx.set_output_shape("output", tuple(out))
    data = ctx.input_data("data")
    if data is not None and step_values is not None:
        result = _slice_data(data, source, axis_list, starts.values, ends.values, step_values)
        if result is not None:
            ctx.set_output_data("output", result)


def _slice_data(data: Data, source: tuple, axis_list: Sequence[int], starts, ends, steps) -> Data | None:
    """Known data of any rank cut to the window; None unless the sizes and every bound are known ints."""
    if starts is None or ends is None or not all(type(d) is int for d in source):
        return None
    bounds = list(zip(starts, ends, steps))
    if not all(type(b) is int for bound in bounds for b in bound):
        return None
    count = 1
    for d in source:
        count *= d
    if len(data.values) != count:
        return None
    picked = [range(d) for d in source]  # numpy's clamping, which Slice shares
    for axis, (start, end, step) in zip(axis_list, bounds):
        picked[axis] = range(source[axis])[slice(start, end, step)]
    flat = [0]
    for size, indices in zip(source, picked):
        flat = [base * size + index for base in flat for index in indices]
    return Data(tuple(len(indices) for indices in picked), tuple(data.values[i] for i in flat))


def _slice_length(dim, start, end, step):
    """Elements in ``range(dim)[start:end:step]``, symbolic when ``dim`` is.

    Symbolic results follow the shape module's convention that a dim expression stands for
    a non-negative value (``N-1`` for ``[1:]``, ``min(512,S)`` for ``[:S]`` of 512).
    """
    if type(step) is not int:
        return None
    if type(dim) is int and type(start) is int and type(end) is int:
        return len(range(*slice(start, end, step).indices(dim)))
    ints = type(start) is int and type(end) is int
    if ints and ((start >= 0) == (end >= 0)) and (end <= start if step > 0 else start <= end):
        return 0  # empty whatever the dim
    if type(dim) not in (int, Sym) or not all(type(v) is int or _sure_count(v) for v in (start, end)):
        return None
    if step > 0:
        if type(start) is Sym:
            begin = min_dim(dim, start)
        elif 0 <= start < _BIG:
            begin = start
        elif start >= _BIG:
            return 0
        else:
            begin = 0 if start <= -_BIG else dim - min_dim(dim, -start)
        if type(end) is Sym or 0 <= end < _BIG:
            stop = min_dim(dim, end)
        elif end >= _BIG:
            stop = dim
        else:
            stop = 0 if end <= -_BIG else dim + end
        span = stop - begin
    else:
        if type(start) is Sym or type(end) is Sym:
            return None
        if start <= -_BIG:
            return 0
        begin = dim - 1 if start >= _BIG else (min_dim(start + 1, dim) - 1 if start >= 0 else dim + start)
        stop = -1 if end <= -_BIG else (end if end >= 0 else dim - min_dim(dim + 1, -end))
        span = begin - stop
        step = -step
    if type(span) is int:
        return max(0, -(-span // step))
    return ceil_div_dim(span, step)


def _sure_count(value) -> bool:
    """True for a symbolic bound read as a count, by the shape module's convention that a dim
    expression less a constant (``N-1``) stands for a non-negative value. A negated or
    subtracted symbol (``-S``, ``N-S``) may be negative: a negative bound counts from the
    end, which the formulas here do not model."""
    if type(value) is not Sym:
        return False
    count = value - value.constant
    return type(count) is Sym and count.never_negative


@rule("squeeze", "Drop the listed axes of size 1 (all size-1 axes when none).",
      axes=input_or_attribute(), negative_axes=NEGATIVE_AXES)
def squeeze(ctx: InferenceContext) -> None:
    """Drop the listed size-1 axes; without axes, every dim known to be 1 (unknown dims could be)."""
    source = shape_of(ctx, 0)
    axes = ctx.ints_arg("axes")
    if source is None:
        ctx.set_output_shape("squeezed", None)
        return
    rank = len(source)
    if not axes.present:
        if any(type(d) is not int for d in source):
            ctx.set_output_shape("squeezed", None)  # an unknown or symbolic dim may be 1 or not
            return
        shape = tuple(d for d in source if d != 1)
    else:
        named = all_ints(axes.values)
        if named is None:
            if axes.length is not None and axes.length <= rank:
                ctx.set_output_shape("squeezed", (None,) * (rank - axes.length))
            else:
                ctx.set_output_shape("squeezed", None)
            return
        axis_list = axes_arg(ctx, named, rank)
        for axis in axis_list:
            if type(source[axis]) is int and source[axis] != 1:
                ctx.fail(f"cannot squeeze axis {axis} of {format_shape(source)}: its size is {source[axis]}, not 1")
        shape = tuple(d for i, d in enumerate(source) if i not in axis_list)
    ctx.set_output_shape("squeezed", shape)
    pass_data(ctx, shape)


@rule("unsqueeze", "Insert size-1 axes at the listed output positions.",
      axes=input_or_attribute(required=True), negative_axes=NEGATIVE_AXES)
def unsqueeze(ctx: InferenceContext) -> None:
    """Insert 1s at the listed positions of the output (rank + len(axes))."""
    source = shape_of(ctx, 0)
    axes = ctx.ints_arg("axes")
    if not axes.present:
        ctx.fail("'axes' is required")
    if source is None:
        ctx.set_output_shape(0, None)
        return
    named = all_ints(axes.values)
    if named is None:
        ctx.set_output_shape(0, (None,) * (len(source) + axes.length) if axes.length is not None else None)
        return
    rank = len(source) + len(named)
    inserted = set(axes_arg(ctx, named, rank))
    rest = iter(source)
    shape = tuple(1 if i in inserted else next(rest) for i in range(rank))
    ctx.set_output_shape(0, shape)
    pass_data(ctx, shape)
