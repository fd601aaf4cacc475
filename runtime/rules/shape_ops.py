"""Rules for operators that rearrange a tensor without computing on its elements.

Reshape, Flatten, Transpose, Concat, Split, Slice, Squeeze, Unsqueeze, Gather, Expand,
Shape and Size. Besides output shapes, the rules carry known contents of small integer
tensors through (``Shape`` → ``Gather``/``Slice`` → ``Concat`` → ``Reshape``), so shapes
computed inside a graph still resolve to concrete or symbolic dims.
"""
from __future__ import annotations

from typing import Mapping, Sequence

from opspec.runtime.inference.context import InferenceContext
from opspec.runtime.inference.values import INT64, Data
from opspec.runtime.rules import implements
from opspec.runtime.rules.arguments import ABSENT, IntList, element, read_ints
from opspec.runtime.shape import (
    ShapeError,
    Sym,
    add_dim,
    broadcast_shapes,
    ceil_div_dim,
    div_dim,
    format_dim,
    format_shape,
    merge_dim,
    min_dim,
    mul_dim,
    num_elements,
)

#: Slice bounds at or beyond these mean "through the end" / "through the start".
_BIG = 2**31 - 1


# ---------------------------------------------------------------------------------- helpers

def _all_ints(values: Sequence | None) -> tuple | None:
    """``values`` when every element is a known int, else None."""
    if values is None or any(type(v) is not int for v in values):
        return None
    return tuple(values)


def _refuse_negative(ctx: InferenceContext, args: Mapping[str, object], axis: int, what: str) -> None:
    """Fail for a negative axis when the op version says they are not allowed yet."""
    if axis < 0 and not args.get("negative_axes", True):
        ctx.fail(f"{what} {axis} is negative, which {ctx.op_type}-{ctx.schema.since_version} does not allow")


def _axis(ctx: InferenceContext, args: Mapping[str, object], axis: int, rank: int, what: str = "axis") -> int:
    """Normalise ``axis`` for ``rank``, refusing negative values where the version does."""
    _refuse_negative(ctx, args, axis, what)
    return ctx.normalize_axis(axis, rank, what)


def _axes(ctx: InferenceContext, args: Mapping[str, object], axes: Sequence[int], rank: int,
          what: str = "axes") -> list[int]:
    """Normalise a list of distinct axes."""
    normalized = [_axis(ctx, args, a, rank, what) for a in axes]
    if len(set(normalized)) != len(normalized):
        ctx.fail(f"{what} {list(axes)} repeat an axis")
    return normalized


def _shape_of(ctx: InferenceContext, index: int):
    """The input's shape, or the shape of its known data when the type has none."""
    shape = ctx.input_shape(index)
    if shape is None:
        data = ctx.input_data(index)
        if data is not None:
            return tuple(data.shape)
    return shape


def _pass_data(ctx: InferenceContext, shape) -> None:
    """Carry input 0's known data to output 0 unchanged, under the new ``shape``."""
    data = ctx.input_data(0)
    if data is None or shape is None or any(type(d) is not int for d in shape):
        return
    if num_elements(shape) == len(data.values):
        ctx.set_output_data(0, Data(tuple(shape), tuple(data.values)))


# ---------------------------------------------------------------------------------- reshape

@implements("reshape")
def reshape(ctx: InferenceContext, args: Mapping[str, object]) -> None:
    """Target shape from the ``shape`` input (v5+) or attribute (v1); 0 copies, one -1 infers."""
    source = _shape_of(ctx, 0)
    target = read_ints(ctx, args["shape"])
    if target.values is None:
        ctx.set_output_shape(0, (None,) * target.length if target.length is not None else None)
        return
    allowzero = args["allowzero"] in ctx.schema.attributes and bool(ctx.attribute(args["allowzero"], 0))
    requested = target.values
    text = "(" + ", ".join(format_dim(v) for v in requested) + ")"
    if requested.count(-1) > 1:
        ctx.fail(f"shape {text} has more than one -1")
    if allowzero and -1 in requested and 0 in requested:
        ctx.fail(f"shape {text} has both 0 and -1, which allowzero=1 forbids")
    out: list = []
    inferred = None
    for i, value in enumerate(requested):
        if type(value) is int and value < -1:
            ctx.fail(f"shape {text} has the invalid entry {value}")
        if value == -1:
            inferred = i
            out.append(None)
        elif value == 0 and not allowzero:
            if source is not None and i >= len(source):
                ctx.fail(f"shape {text} copies dim {i} (0) but the input {format_shape(source)} "
                         f"has rank {len(source)}")
            out.append(source[i] if source is not None else None)
        else:
            out.append(value)
    total = num_elements(source)
    if inferred is not None:
        rest = num_elements(tuple(out[:inferred] + out[inferred + 1:]))
        if rest == 0:
            if type(total) is int and total != 0:
                ctx.fail(f"cannot reshape {format_shape(source)} ({total} elements) into {text}")
        elif total is not None and rest is not None:
            try:
                out[inferred] = div_dim(total, rest)
            except ShapeError:
                ctx.fail(f"cannot reshape {format_shape(source)} ({format_dim(total)} elements) into "
                         f"{text}: {format_dim(total)} is not a multiple of {format_dim(rest)}")
    else:
        wanted = num_elements(tuple(out))
        if total is not None and wanted is not None:
            difference = total - wanted
            if type(difference) is int and difference != 0:
                ctx.fail(f"cannot reshape {format_shape(source)} ({format_dim(total)} elements) into "
                         f"{text} ({format_dim(wanted)} elements)")
    shape = tuple(out)
    ctx.set_output_shape(0, shape)
    _pass_data(ctx, shape)


@implements("flatten")
def flatten(ctx: InferenceContext, args: Mapping[str, object]) -> None:
    """``(prod(dims[:axis]), prod(dims[axis:]))``; ``axis`` lies in ``[-r, r]``."""
    source = _shape_of(ctx, 0)
    axis = ctx.attribute(args["axis"], 1)
    if source is None:
        ctx.set_output_shape(0, (1 if axis == 0 else None, None))
        return
    rank = len(source)
    _refuse_negative(ctx, args, axis, "axis")
    if not -rank <= axis <= rank:
        ctx.fail(f"axis {axis} is out of range for rank {rank}")
    if axis < 0:
        axis += rank
    shape = (num_elements(source[:axis]), num_elements(source[axis:]))
    ctx.set_output_shape(0, shape)
    _pass_data(ctx, shape)


@implements("transpose")
def transpose(ctx: InferenceContext, args: Mapping[str, object]) -> None:
    """Output axis ``i`` is input axis ``perm[i]``; the axes reverse when ``perm`` is absent."""
    source = _shape_of(ctx, 0)
    perm = ctx.attribute(args["perm"])
    if perm is None:
        if source is None:
            ctx.set_output_shape(0, None)
            return
        perm = tuple(range(len(source) - 1, -1, -1))
    perm = tuple(perm)
    if sorted(perm) != list(range(len(perm))):
        ctx.fail(f"perm {list(perm)} is not a permutation of 0..{len(perm) - 1}")
    if source is None:
        ctx.set_output_shape(0, (None,) * len(perm))
        return
    if len(perm) != len(source):
        ctx.fail(f"perm {list(perm)} has {len(perm)} entries but the input {format_shape(source)} "
                 f"has rank {len(source)}")
    shape = tuple(source[p] for p in perm)
    ctx.set_output_shape(0, shape)
    data = ctx.input_data(0)
    if data is not None and all(type(d) is int for d in source) and len(data.values) == num_elements(source):
        ctx.set_output_data(0, Data(shape, _transpose_values(data.values, source, perm)))


def _transpose_values(values: Sequence, shape: tuple, perm: tuple) -> tuple:
    """Row-major ``values`` of ``shape`` rearranged as the transpose by ``perm``."""
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    out_shape = [shape[p] for p in perm]
    out_strides = [strides[p] for p in perm]
    offsets = [0]
    for size, stride in zip(out_shape, out_strides):
        offsets = [o + k * stride for o in offsets for k in range(size)]
    return tuple(values[o] for o in offsets)


# ---------------------------------------------------------------------------------- concat / split

@implements("concat")
def concat(ctx: InferenceContext, args: Mapping[str, object]) -> None:
    """Equal ranks; dims off ``axis`` merge, the ``axis`` dim is the (symbolic) sum."""
    axis = ctx.attribute(args["axis"])
    if axis is None:
        if ctx.schema.attributes[args["axis"]].required:
            ctx.fail(f"attribute '{args['axis']}' is required")
        axis = 1  # the first version's documented default, which its schema does not record
    indices = ctx.input_range(ctx.schema.inputs[0].name)
    shapes = [_shape_of(ctx, i) for i in indices]
    known = [s for s in shapes if s is not None]
    if not known:
        ctx.set_output_shape(0, None)
        return
    rank = len(known[0])
    for i, s in zip(indices, shapes):
        if s is not None and len(s) != rank:
            ctx.fail(f"input {i} has shape {format_shape(s)} of rank {len(s)}, "
                     f"but input {indices[shapes.index(known[0])]} has rank {rank}")
    if rank == 0:
        ctx.fail("cannot concatenate scalars")
    axis = _axis(ctx, args, axis, rank)
    out: list = [None] * rank
    for i, s in zip(indices, shapes):
        if s is None:
            continue
        for j in range(rank):
            if j != axis:
                try:
                    out[j] = merge_dim(out[j], s[j])
                except ShapeError:
                    ctx.fail(f"input {i} has shape {format_shape(s)} with dim {format_dim(s[j])} at axis {j}, "
                             f"where other inputs have {format_dim(out[j])}")
    total = 0
    for s in shapes:
        total = add_dim(total, s[axis]) if s is not None else None
        if total is None:
            break
    out[axis] = total
    ctx.set_output_shape(0, tuple(out))
    if rank == 1:
        _concat_data(ctx, indices, shapes)


def _concat_data(ctx: InferenceContext, indices: range, shapes: list) -> None:
    """Join 1-D data; an input without data but of known length contributes unknown elements."""
    values: list = []
    any_known = False
    for i, s in zip(indices, shapes):
        data = ctx.input_data(i)
        if data is not None:
            values.extend(element(v) for v in data.values)
            any_known = True
        elif s is not None and type(s[0]) is int:
            values.extend([None] * s[0])
        else:
            return
    if any_known:
        ctx.set_output_data(0, Data((len(values),), tuple(values)))


@implements("split")
def split(ctx: InferenceContext, args: Mapping[str, object]) -> None:
    """Pieces from ``split`` (input or attribute), ``num_outputs`` (v18) or an even cut."""
    source = _shape_of(ctx, 0)
    count = ctx.output_count
    axis = ctx.attribute(args["axis"], 0)
    sizes_param = read_ints(ctx, args["split"])
    parts = ctx.attribute(args["num_outputs"]) if args["num_outputs"] in ctx.schema.attributes else None
    if parts is not None:
        if sizes_param.present:
            ctx.fail("'split' and 'num_outputs' cannot both be given")
        if parts < 1:
            ctx.fail(f"num_outputs {parts} must be positive")
        if parts != count:
            ctx.fail(f"num_outputs is {parts} but the node has {count} outputs")
    if source is None:
        for i in range(count):
            ctx.set_output_shape(i, None)
        return
    axis = _axis(ctx, args, axis, len(source))
    dim = source[axis]
    if sizes_param.present:
        if sizes_param.length is not None and sizes_param.length != count:
            ctx.fail(f"split has {sizes_param.length} entries but the node has {count} outputs")
        if sizes_param.values is not None:
            pieces = list(sizes_param.values)
            for size in pieces:
                if type(size) is int and size < 0:
                    ctx.fail(f"split {pieces} has a negative size")
            known = _all_ints(pieces)
            if known is not None and type(dim) is int and sum(known) != dim:
                ctx.fail(f"split {list(known)} adds up to {sum(known)}, but axis {axis} of "
                         f"{format_shape(source)} has {dim}")
        else:
            pieces = [None] * count
    elif parts is not None:  # equal pieces of ceil(dim / parts), the last one smaller
        chunk = ceil_div_dim(dim, count)
        last = None
        if chunk is not None:
            rest = mul_dim(chunk, count - 1)
            if type(dim) is int and type(rest) is int:
                if rest > dim:
                    ctx.fail(f"axis {axis} of {format_shape(source)} has {dim} elements, too few for "
                             f"{count} pieces of {chunk}")
                last = dim - rest
            elif dim is not None and rest is not None:
                last = dim - rest
        pieces = [chunk] * (count - 1) + [last]
    else:
        try:
            piece = div_dim(dim, count)
        except ShapeError:
            ctx.fail(f"axis {axis} of {format_shape(source)} has {format_dim(dim)} elements, "
                     f"which do not divide evenly into {count} outputs")
        pieces = [piece] * count
    for i, size in enumerate(pieces):
        ctx.set_output_shape(i, source[:axis] + (size,) + source[axis + 1:])
    data = ctx.input_data(0)
    known = _all_ints(pieces)
    if data is not None and len(source) == 1 and known is not None and sum(known) == len(data.values):
        start = 0
        for i, size in enumerate(known):
            ctx.set_output_data(i, Data((size,), tuple(data.values[start:start + size])))
            start += size


# ---------------------------------------------------------------------------------- slice

@implements("slice")
def slice_(ctx: InferenceContext, args: Mapping[str, object]) -> None:
    """Strided windows with numpy clamping; unknown bounds leave the affected dims unknown."""
    source = _shape_of(ctx, 0)
    starts = read_ints(ctx, args["starts"])
    ends = read_ints(ctx, args["ends"])
    axes = read_ints(ctx, args["axes"])
    steps = read_ints(ctx, args["steps"])
    if not starts.present or not ends.present:
        ctx.fail("'starts' and 'ends' are required")
    lengths = {p.length for p in (starts, ends, axes, steps) if p.present and p.length is not None}
    if len(lengths) > 1:
        ctx.fail(f"starts, ends, axes and steps must have one length, got {sorted(lengths)}")
    if source is None:
        ctx.set_output_shape(0, None)
        return
    rank = len(source)
    count = next(iter(lengths)) if lengths else None
    if axes.present:
        axis_list = _all_ints(axes.values)
        if axis_list is not None:
            axis_list = _axes(ctx, args, axis_list, rank)
    elif count is not None:
        if count > rank:
            ctx.fail(f"{count} starts for an input of rank {rank}")
        axis_list = list(range(count))
    else:
        axis_list = None
    if axis_list is None:  # which axes are sliced is unknown
        ctx.set_output_shape(0, (None,) * rank)
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
    ctx.set_output_shape(0, tuple(out))
    data = ctx.input_data(0)
    if (data is not None and rank == 1 and axis_list == [0] and type(source[0]) is int
            and len(data.values) == source[0] and type(out[0]) is int):
        start, end, step = starts.values[0], ends.values[0], step_values[0]
        if type(start) is int and type(end) is int and type(step) is int:
            values = tuple(data.values[slice(start, end, step)])
            ctx.set_output_data(0, Data((len(values),), values))


def _slice_length(dim, start, end, step):
    """Elements in ``range(dim)[start:end:step]``, symbolic when ``dim`` is.

    Symbolic results follow the shape module's convention that a dim expression stands for
    a non-negative value (``N-1`` for ``[1:]``).
    """
    if type(step) is not int:
        return None
    if type(dim) is int:
        if type(start) is int and type(end) is int:
            return len(range(*slice(start, end, step).indices(dim)))
        return None
    ints = type(start) is int and type(end) is int
    if ints and ((start >= 0) == (end >= 0)) and (end <= start if step > 0 else start <= end):
        return 0  # empty whatever the dim
    if type(dim) is not Sym or not all(type(v) in (int, Sym) for v in (start, end)):
        return None
    if step > 0:
        if type(start) is Sym or 0 <= start < _BIG:
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


# ---------------------------------------------------------------------------------- squeeze / unsqueeze

@implements("squeeze")
def squeeze(ctx: InferenceContext, args: Mapping[str, object]) -> None:
    """Drop the listed size-1 axes; without axes, every dim known to be 1 (unknown dims could be)."""
    source = _shape_of(ctx, 0)
    axes = read_ints(ctx, args["axes"])
    if source is None:
        ctx.set_output_shape(0, None)
        return
    rank = len(source)
    if not axes.present:
        if any(type(d) is not int for d in source):
            ctx.set_output_shape(0, None)  # an unknown or symbolic dim may be 1 or not
            return
        shape = tuple(d for d in source if d != 1)
    else:
        axis_list = _all_ints(axes.values)
        if axis_list is None:
            if axes.length is not None and axes.length <= rank:
                ctx.set_output_shape(0, (None,) * (rank - axes.length))
            else:
                ctx.set_output_shape(0, None)
            return
        axis_list = _axes(ctx, args, axis_list, rank)
        for axis in axis_list:
            if type(source[axis]) is int and source[axis] != 1:
                ctx.fail(f"cannot squeeze axis {axis} of {format_shape(source)}: its size is {source[axis]}, not 1")
        shape = tuple(d for i, d in enumerate(source) if i not in axis_list)
    ctx.set_output_shape(0, shape)
    _pass_data(ctx, shape)


@implements("unsqueeze")
def unsqueeze(ctx: InferenceContext, args: Mapping[str, object]) -> None:
    """Insert 1s at the listed positions of the output (rank + len(axes))."""
    source = _shape_of(ctx, 0)
    axes = read_ints(ctx, args["axes"])
    if not axes.present:
        ctx.fail("'axes' is required")
    if source is None:
        ctx.set_output_shape(0, None)
        return
    axis_list = _all_ints(axes.values)
    if axis_list is None:
        ctx.set_output_shape(0, (None,) * (len(source) + axes.length) if axes.length is not None else None)
        return
    rank = len(source) + len(axis_list)
    axis_list = set(_axes(ctx, args, axis_list, rank))
    rest = iter(source)
    shape = tuple(1 if i in axis_list else next(rest) for i in range(rank))
    ctx.set_output_shape(0, shape)
    _pass_data(ctx, shape)


# ---------------------------------------------------------------------------------- gather / expand

@implements("gather")
def gather(ctx: InferenceContext, args: Mapping[str, object]) -> None:
    """``data.shape[:axis] + indices.shape + data.shape[axis+1:]``."""
    source = _shape_of(ctx, 0)
    indices = _shape_of(ctx, 1)
    axis = ctx.attribute(args["axis"], 0)
    if source is not None:
        if len(source) == 0:
            ctx.fail("cannot gather from a scalar")
        axis = ctx.normalize_axis(axis, len(source))
    if source is None or indices is None:
        ctx.set_output_shape(0, None)
        return
    shape = source[:axis] + tuple(indices) + source[axis + 1:]
    ctx.set_output_shape(0, shape)
    data, picks = ctx.input_data(0), ctx.input_data(1)
    if data is None or picks is None or len(source) != 1 or len(data.values) != source[0]:
        return
    size = len(data.values)
    values = []
    for index in picks.values:
        index = element(index)
        if type(index) is not int:
            values.append(None)
            continue
        if not -size <= index < size:
            ctx.fail(f"index {index} is out of range for an axis of size {size}")
        values.append(element(data.values[index]))
    ctx.set_output_data(0, Data(tuple(picks.shape), tuple(values)))


@implements("expand")
def expand(ctx: InferenceContext, args: Mapping[str, object]) -> None:
    """Bidirectional broadcast of the input shape with the requested shape."""
    source = _shape_of(ctx, 0)
    target = read_ints(ctx, args["shape"])
    if target.values is not None:
        for value in target.values:
            if type(value) is int and value < 0:
                ctx.fail(f"shape {list(target.values)} has the negative entry {value}")
        requested = tuple(target.values)
    elif target.length is not None:
        requested = (None,) * target.length
    else:
        ctx.set_output_shape(0, None)
        return
    ctx.set_output_shape(0, broadcast_shapes(source, requested))


# ---------------------------------------------------------------------------------- shape / size

@implements("shape")
def shape(ctx: InferenceContext, args: Mapping[str, object]) -> None:
    """1-D int64 of the input's dims (``start``/``end`` clamped to the rank); data = the dims."""
    source = _shape_of(ctx, 0)
    start = ctx.attribute(args["start"], 0) if args["start"] in ctx.schema.attributes else 0
    end = ctx.attribute(args["end"]) if args["end"] in ctx.schema.attributes else None
    if source is None:
        empty = end is not None and (start >= 0) == (end >= 0) and end <= start
        ctx.set_output_shape(0, (0 if empty else None,), elem=INT64)
        return
    dims = source[slice(start, end)]
    ctx.set_output_shape(0, (len(dims),), elem=INT64)
    ctx.set_output_data(0, Data((len(dims),), tuple(dims)))


@implements("size")
def size(ctx: InferenceContext, args: Mapping[str, object]) -> None:
    """A scalar int64 holding the element count (symbolic when the dims are)."""
    source = _shape_of(ctx, 0)
    ctx.set_output_shape(0, (), elem=INT64)
    if source is not None:
        ctx.set_output_data(0, Data((), (num_elements(source),)))
