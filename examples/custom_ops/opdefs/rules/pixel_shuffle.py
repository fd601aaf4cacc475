"""The inference rule of com.example's PixelShuffle: no built-in rule fits it.

A rule module of an opdefs tree lives in the tree's ``rules/`` folder. ``opspec generate``
reads the ``@rule`` declarations from the source, checks every reference to them, runs
the rule on the worked examples of the ops naming it, and copies the module into the
generated package; ``opspec.register`` (and ``--registry``) then registers the rule with
the op set.
"""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext, attribute, rule
from opspec.runtime.shape import ShapeError, div_dim, mul_dim


@rule("pixel_shuffle", "Move blocks of channels into space: (N, C*r*r, H, W) -> (N, C, H*r, W*r).",
      blocksize=attribute(required=True, doc="the attribute holding r"))
def pixel_shuffle(ctx: InferenceContext) -> None:
    """Channels shrink by r*r; height and width grow by r."""
    r = ctx.int_attr("blocksize", 0)
    if r < 1:
        ctx.fail(f"blocksize {r} must be positive")
    n, c, h, w = ctx.input_with_rank("X", 4)  # unknown rank: four unknown dims; another rank: a node error
    try:
        channels = div_dim(c, r * r)
    except ShapeError:
        ctx.fail(f"{c} channels do not divide into blocks of {r}x{r}")   # a node error, naming the node
    ctx.set_output_shape("Y", (n, channels, mul_dim(h, r), mul_dim(w, r)))
