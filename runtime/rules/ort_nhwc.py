"""Channels-last operators: a standard rule run on the channels-first view of the data.

onnxruntime's channels-last versions of convolutions, pools, normalizations and the like
(domain ``com.ms.internal.nhwc``, and NhwcConv, NhwcMaxPool) take their data, input 0, as
``(N, D1, ..., Dn, C)`` and give their main result, output 0, in the same layout. Every other
operand (weights, bias, statistics, sampling grids) keeps the standard layout.
``channels_last`` moves the channel axis of input 0 to position 1, runs the standard rule,
and moves the channel axis of output 0 back to the end, so one rule serves every such
operator. Ops that choose their layout with an attribute (QLinearConv's ``channels_last``)
name it with the ``switch`` option: unset, the standard rule runs on the node as it is.
"""
from __future__ import annotations

from typing import Callable

from opspec.runtime.contract import InferenceContext, InferenceError, TensorType, input, option, rule
from opspec.runtime.rules import elementwise, losses, nn, padding, unpool
from opspec.runtime.rules._operand_view import OperandView, rule_defaults
from opspec.runtime.shape import ShapeError, format_shape

#: The standard rules a channels-last operator may borrow, by rule name. They read their operands by
#: position or through their arguments, never by formal name: a view holds the operands in the order
#: the 'operands' option gives, which need not be the schema's.

STANDARD: dict[str, Callable[[InferenceContext], None]] = {
    "conv": nn.conv, "conv_transpose": nn.conv_transpose, "pool": nn.pool, "global_pool": nn.global_pool,
    "batch_norm": nn.batch_norm, "elementwise": elementwise.elementwise, "depth_to_space": padding.depth_to_space,
    "space_to_depth": padding.space_to_depth, "grid_sample": losses.grid_sample, "max_unpool": unpool.max_unpool,
}
_STANDARD_NAMES = ("conv", "conv_transpose", "pool", "global_pool", "batch_norm", "elementwise", "depth_to_space",
                   "space_to_depth", "grid_sample", "max_unpool")


def channels_first(ctx: InferenceContext, shape: tuple | None, least: int = 3) -> tuple | None:
    """``(N, D..., C)`` as ``(N, C, D...)``; a data operand needs rank ``least`` or more."""
    if shape is None:
        return None
    if len(shape) < least:
        ctx.fail(f"X {format_shape(shape)} needs rank {least} or more to hold (N, spatial..., C)")
    return (shape[0], shape[-1]) + tuple(shape[1:-1])


def channels_last_shape(ctx: InferenceContext, shape: tuple | None, least: int = 3) -> tuple | None:
    """``(N, C, D...)`` as ``(N, D..., C)``."""
    if shape is None:
        return None
    if len(shape) < least:
        ctx.fail(f"the result {format_shape(shape)} needs rank {least} or more to hold (N, spatial..., C)")
    return (shape[0],) + tuple(shape[2:]) + (shape[1],)


def _positions(ctx: InferenceContext) -> list[int]:
    """The node inputs the standard rule sees, in order: those named by 'operands', else all."""
    names = ctx.option("operands")
    if not names:
        return list(range(ctx.input_count))
    found = []
    for name in names.split(","):
        index = ctx.input_index(name.strip())
        found.append(index if index is not None else ctx.input_count)  # an absent optional stays absent
    return found


def _attribute_set(ctx: InferenceContext, key: str) -> bool:
    """Whether the node sets the attribute that option ``key`` names."""
    name = ctx.option(key)
    return bool(name) and bool(ctx.attribute(name, 0))


def _least_rank(ctx: InferenceContext) -> int:
    """The rank the data needs: 3 in onnxruntime's channels-last domain, whose inference refuses
    less; 2 for an op's own layout attribute, whose (N, C) data has no spatial axis to move."""
    return 2 if ctx.option("switch") else 3


@rule("channels_last", "The standard rule on the channels-first view of input 0; output 0 given back channels-last.",
      standard=option("string", choices=_STANDARD_NAMES, doc="the rule of the channels-first operator"),
      operands=option("string", doc="comma-separated inputs the standard rule sees, in order (default: all)"),
      switch=option("string", doc="an attribute that selects the channels-last layout when set; when it is unset "
                                  "the node is channels-first and the standard rule reads it as it is"),
      layout_flag=option("string", doc="an attribute that, when set, leaves the layout in doubt"),
      x=input(None, doc="the data operand, for standard rules that name it"),
      w=input(None, doc="the weights, for standard rules that name them"),
      bias=input(None, doc="the bias, for standard rules that name it"))
def channels_last(ctx: InferenceContext) -> None:
    """Output 0 from the standard rule with its channel axis moved last; further outputs as ``_write_back`` says."""
    x = ctx.input_shape(0)
    if _layout_in_doubt(ctx, x):
        return
    moved = not ctx.option("switch") or _attribute_set(ctx, "switch")
    view_x = channels_first(ctx, x, _least_rank(ctx)) if moved else x
    standard = STANDARD[ctx.option("standard")]
    positions = _positions(ctx)
    inputs = [ctx.input_type(index) for index in positions]
    first = ctx.input_type(0)
    inputs[0] = TensorType(first.elem, view_x) if type(first) is TensorType else first
    view = OperandView(ctx, positions, inputs, rule_defaults(standard, x=ctx.named("x"), w=ctx.named("w"),
                                                             bias=ctx.named("bias")))
    try:
        standard(view)
    except (InferenceError, ShapeError) as error:
        if not moved or x is None:
            ctx.fail(str(error))
        ctx.fail(f"{error} (channels_last: X {format_shape(x)} read as {format_shape(view_x)})")
    if moved:
        _write_back(ctx, view)
    else:
        for index in range(ctx.output_count):
            ctx.set_output(index, view.output_type(index))


def _layout_in_doubt(ctx: InferenceContext, x: tuple | None) -> bool:
    """With the op's own channels-last flag (named by 'layout_flag') set on a node of a channels-last
    op, onnxruntime reads the data as channels-last twice over: only rank and batch are sure, and
    output 0 says so."""
    if not _attribute_set(ctx, "layout_flag"):
        return False
    channels_first(ctx, x)
    ctx.set_output_shape(0, None if x is None else (x[0],) + (None,) * (len(x) - 1))
    return True


def _write_back(ctx: InferenceContext, view: InferenceContext) -> None:
    """Output 0 channels-last; a further output of rank 2 or more (MaxPool's indices) keeps only its
    rank, since its layout is not stated anywhere; lower ranks (per-channel statistics) as given."""
    for index in range(ctx.output_count):
        value = view.output_type(index)
        if type(value) is not TensorType or value.shape is None:
            ctx.set_output(index, value)
        elif index == 0:
            ctx.set_output(0, TensorType(value.elem, channels_last_shape(ctx, value.shape, _least_rank(ctx))))
        elif len(value.shape) >= 2:
            ctx.set_output(index, TensorType(value.elem, (None,) * len(value.shape)))
        else:
            ctx.set_output(index, value)
