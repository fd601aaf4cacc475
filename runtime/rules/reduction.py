"""Reduction rules: collapse some axes of the input, keeping them as 1 or dropping them."""
from __future__ import annotations

from opspec.runtime.contract import (INT64, Data, InferenceContext, IntList, TensorType, attribute, input_or_attribute,
                                     option, rule)
from opspec.runtime.contract.elements import INT_WIDTHS
from opspec.runtime.rules._binarydata import BINARY
from opspec.runtime.rules._elementdata import cast_value

#: ``compute`` choices of ``reduce``: the binary element function folded over each reduced group.
REDUCE_COMPUTE = ("min", "max", "add", "mul")


def _reduce_axes(ctx: InferenceContext) -> tuple | IntList:
    """The axes to reduce: a tuple (empty when none are given), or the :class:`IntList`
    read from an axes input whose values are not known (its ``length`` may be)."""
    axes = ctx.ints_arg("axes")
    if not axes.present or axes.length == 0:
        return ()
    if axes.ints is not None:
        return axes.ints
    return axes


@rule("reduce", "Reduce the listed axes (all when none), keeping them as 1 if keepdims.",
      axes=input_or_attribute(), keepdims=attribute(), noop_with_empty_axes=attribute(),
      compute=option("string", choices=REDUCE_COMPUTE,
                     doc="how known input data folds into output data, for data propagation"),
      repeated_axes=option("bool", False, doc="an axis listed twice is reduced once (onnxruntime's quantized "
                           "reductions accept that), not a node error"))
def reduce(ctx: InferenceContext) -> None:
    """Reduce the given axes (all when none, or nothing with ``noop_with_empty_axes``)."""
    _reduce_shape(ctx)
    compute, data = ctx.option("compute"), ctx.input_data(0)
    if compute is not None and data is not None:
        result = _reduce_data(ctx, data, compute)
        if result is not None:
            ctx.set_output_data(0, result)


def _reduce_shape(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    keepdims = ctx.int_attr("keepdims", 1)
    noop = ctx.int_attr("noop_with_empty_axes", 0)
    axes = _reduce_axes(ctx)
    if type(axes) is IntList:
        ctx.set_output_shape(0, _unknown_axes_shape(ctx, shape, axes.length, keepdims, noop))
        return
    if not axes:
        if noop:
            ctx.set_output_shape(0, shape)
            return
        if not keepdims:
            ctx.set_output_shape(0, ())  # a scalar, whatever the input rank
        else:
            ctx.set_output_shape(0, None if shape is None else (1,) * len(shape))
        return
    if shape is None:
        ctx.set_output_shape(0, None)
        return
    rank = len(shape)
    reduced = set()
    for axis in axes:
        axis = ctx.normalize_axis(axis, rank, "axes value")
        if axis in reduced and not ctx.option("repeated_axes"):
            ctx.fail(f"axis {axis} is reduced twice in axes {list(axes)}")
        reduced.add(axis)
    if keepdims:
        out = tuple([1 if i in reduced else d for i, d in enumerate(shape)])
    else:
        out = tuple([d for i, d in enumerate(shape) if i not in reduced])
    ctx.set_output_shape(0, out)


def _reduce_data(ctx: InferenceContext, data: Data, compute: str) -> Data | None:
    """Known input data folded over the reduced axes; None when the axes or sizes are not all known,
    a reduced group is empty, or a sum or product is over floats (rounding is the runtime's)."""
    shape, values = tuple(data.shape), data.values
    if not all(type(d) is int for d in shape) or values is None:
        return None
    if compute in ("add", "mul") and ctx.output_elem(0) not in INT_WIDTHS:
        return None
    axes = _reduce_axes(ctx)
    if type(axes) is IntList:
        return None
    if not axes:
        if ctx.int_attr("noop_with_empty_axes", 0):
            return data
        axes = tuple(range(len(shape)))
    reduced = {axis + len(shape) if axis < 0 else axis for axis in axes}
    if not all(0 <= axis < len(shape) for axis in reduced) or any(shape[axis] == 0 for axis in reduced):
        return None
    keepdims = ctx.int_attr("keepdims", 1)
    kept = [axis for axis in range(len(shape)) if axis not in reduced]
    out_shape = tuple(1 if axis in reduced else d for axis, d in enumerate(shape)) if keepdims else \
        tuple(shape[axis] for axis in kept)
    groups: dict[tuple, object] = {}
    function = BINARY[compute]
    index = [0] * len(shape)
    for value in values:
        key = tuple(index[axis] for axis in kept)
        groups[key] = function(groups[key], value) if key in groups else value
        for axis in reversed(range(len(shape))):  # advance the row-major index
            index[axis] += 1
            if index[axis] < shape[axis]:
                break
            index[axis] = 0
    results = tuple(groups.values())
    if compute in ("add", "mul"):  # a sum or product past the type's range wraps: not known here
        elem = ctx.output_elem(0)
        results = tuple(None if type(v) is int and cast_value(v, elem) != v else v for v in results)
    return Data(out_shape, results)


def _unknown_axes_shape(ctx: InferenceContext, shape, count: int | None, keepdims: int, noop: int):
    """The output shape when an axes input is given but its values are not known (``count``
    of them, when that is known)."""
    if shape is None:
        return None
    if keepdims:  # the rank stays; a dim of 1 stays 1 whether reduced or not
        return tuple([d if d == 1 else None for d in shape])
    if count is None or noop:
        return None  # unknown count, or possibly empty axes meaning "no change"
    if count > len(shape):
        ctx.fail(f"cannot reduce {count} axes of a rank-{len(shape)} input")
    return (None,) * (len(shape) - count)


@rule("arg_reduce", "Reduce one axis to its arg-max or arg-min index.", axis=attribute(), keepdims=attribute())
def arg_reduce(ctx: InferenceContext) -> None:
    """Reduce one axis to the index of its extreme element; the output is int64."""
    shape = ctx.input_shape(0)
    axis = ctx.int_attr("axis", 0)
    keepdims = ctx.int_attr("keepdims", 1)
    if shape is None:
        ctx.set_output_shape(0, None, INT64)
        return
    axis = ctx.normalize_axis(axis, len(shape))
    if keepdims:
        out = shape[:axis] + (1,) + shape[axis + 1:]
    else:
        out = shape[:axis] + shape[axis + 1:]
    ctx.set_output(0, TensorType(INT64, out))
