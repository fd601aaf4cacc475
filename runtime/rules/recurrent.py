"""The recurrent rule (RNN, GRU, LSTM): sequence, direction, batch and hidden sizes."""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext, attribute, option, rule
from opspec.runtime.shape import Dim, ShapeError, div_dim, merge_dim


@rule("recurrent", "Y (seq, directions, batch, hidden) and final states (directions, batch, hidden); batch "
      "first with layout 1.", hidden_size=attribute(), direction=attribute(), layout=attribute(),
      gates=option("int", 1, doc="weight blocks per direction: 1 for RNN, 3 for GRU, 4 for LSTM"))
def recurrent(ctx: InferenceContext) -> None:
    x, w = ctx.input_with_rank(0, 3), ctx.input_with_rank(1, 3)
    directions = 2 if ctx.attr("direction", "forward") == "bidirectional" else 1
    if ctx.attr("direction", "forward") not in ("forward", "reverse", "bidirectional"):
        ctx.fail(f"direction {ctx.attr('direction')!r} is not forward, reverse or bidirectional")
    batch_first = ctx.int_attr("layout", 0) == 1
    sequence, batch = (x[1], x[0]) if batch_first else (x[0], x[1])
    try:
        merge_dim(w[0], directions)
    except ShapeError:
        ctx.fail(f"W has {w[0]} directions but direction {ctx.attr('direction')!r} needs {directions}")
    hidden = ctx.attr("hidden_size")
    if hidden is None and w[1] is not None:
        try:
            hidden = div_dim(w[1], ctx.option("gates"))
        except ShapeError:
            ctx.fail(f"W's {w[1]} rows do not divide into {ctx.option('gates')} gates")
    y: tuple[Dim, ...]
    state: tuple[Dim, ...]
    if batch_first:
        y, state = (batch, sequence, directions, hidden), (batch, directions, hidden)
    else:
        y, state = (sequence, directions, batch, hidden), (directions, batch, hidden)
    ctx.set_output_shape(0, y)
    for index in range(1, ctx.output_count):
        ctx.set_output_shape(index, state)
