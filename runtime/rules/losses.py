"""Rules for losses and a few batched reductions of shape: NegativeLogLikelihoodLoss,
SoftmaxCrossEntropyLoss, Det and GridSample."""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext, attribute, rule
from opspec.runtime.shape import ShapeError, format_shape, merge_dim, merge_shapes

_REDUCTIONS = ("none", "sum", "mean")


@rule("loss", "Per element (N, d...) with reduction 'none', else a scalar; the optional log-probabilities "
      "take the scores' shape.", reduction=attribute())
def loss(ctx: InferenceContext) -> None:
    scores = ctx.input_with_rank_at_least(0, 2)
    reduction = ctx.attr("reduction", "mean")
    if reduction not in _REDUCTIONS:
        ctx.fail(f"reduction {reduction!r} is not one of {', '.join(_REDUCTIONS)}")
    target = ctx.input_shape(1)
    if scores is not None and target is not None and len(target) != len(scores) - 1:
        ctx.fail(f"target {format_shape(target)} must have one axis less than the input {format_shape(scores)}")
    if scores is not None and target is not None:
        try:
            merge_shapes(target, (scores[0], *scores[2:]))
        except ShapeError:
            ctx.fail(f"target {format_shape(target)} must be the input {format_shape(scores)} without its class axis")
    weight = ctx.input_shape(2) if ctx.has_input(2) else None  # one weight per class
    if weight is not None and len(weight) != 1:
        ctx.fail(f"{ctx.input_name(2)} {format_shape(weight)} must have rank 1 (one weight per class)")
    if weight is not None and scores is not None:
        try:
            merge_dim(weight[0], scores[1])
        except ShapeError:
            ctx.fail(f"{ctx.input_name(2)} {format_shape(weight)} must hold one weight per class of the input "
                     f"{format_shape(scores)}")
    if reduction == "none":
        per_element = (scores[0],) + tuple(scores[2:]) if scores is not None else target
        ctx.set_output_shape(0, per_element)
    else:
        ctx.set_output_shape(0, ())
    for index in range(1, ctx.output_count):
        ctx.set_output_shape(index, scores)


@rule("det", "The determinants of a batch of square matrices: the input's shape without its last two axes.")
def det(ctx: InferenceContext) -> None:
    x = ctx.input_with_rank_at_least("X", 2)
    if x is None:
        ctx.set_output_shape("Y", None)
        return
    if type(x[-1]) is int and type(x[-2]) is int and x[-1] != x[-2]:
        ctx.fail(f"input {format_shape(x)} is not a batch of square matrices")
    ctx.set_output_shape("Y", tuple(x[:-2]))


@rule("grid_sample", "(N, C, *grid's spatial dims): the input sampled at the grid's points.")
def grid_sample(ctx: InferenceContext) -> None:
    x, grid = ctx.input_with_rank_at_least(0, 3), ctx.input_with_rank_at_least(1, 3)
    if grid is None:
        ctx.set_output_shape(0, None if x is None else (x[0], x[1]) + (None,) * (len(x) - 2))
        return
    if x is not None and len(x) != len(grid):
        ctx.fail(f"input {format_shape(x)} and grid {format_shape(grid)} differ in rank")
    spatial = len(grid) - 2
    if type(grid[-1]) is int and grid[-1] != spatial:
        ctx.fail(f"grid {format_shape(grid)} must hold {spatial} coordinates per point")
    batch = x[0] if x is not None and x[0] is not None else grid[0]
    ctx.set_output_shape(0, (batch, x[1] if x is not None else None) + tuple(grid[1:-1]))
