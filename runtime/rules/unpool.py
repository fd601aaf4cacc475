"""The MaxUnpool rule: the size MaxPool came from, or the one ``output_shape`` asks for."""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext, attribute, input, rule
from opspec.runtime.rules._window import Window, transposed_length
from opspec.runtime.shape import format_shape


@rule("max_unpool", "output_shape's values when given; else each spatial dim (in - 1) * stride + kernel - pads.",
      kernel_shape=attribute(required=True), strides=attribute(), pads=attribute(),
      output_shape=input())
def max_unpool(ctx: InferenceContext) -> None:
    x = ctx.input_with_rank_at_least(0, 3)
    ctx.input_with_rank_at_least(1, 2)  # the indices: one per element of X, so of X's shape
    kernel = ctx.ints_attr("kernel_shape") or ()
    count = len(kernel)
    if x is not None and len(x) - 2 != count:
        ctx.fail(f"X {format_shape(x)} has {len(x) - 2} spatial axes but kernel_shape {list(kernel)} has {count}")
    window = Window(ctx, count, kernel)  # checks strides and pads against the kernel
    requested = ctx.ints_arg("output_shape")
    if requested.present:
        rank = requested.length
        if rank is not None and rank != count + 2:
            ctx.fail(f"output_shape has {rank} values for an input of rank {count + 2}")
        values = requested.values
        ctx.set_output_shape(0, tuple(values) if values is not None else ctx.unknown_dims(count + 2))
        return
    if x is None:
        ctx.set_output_shape(0, ctx.unknown_dims(count + 2))
        return
    spatial = []
    for i, size in enumerate(x[2:]):
        dim = transposed_length(size, window.strides[i], kernel[i], window.pads[i] + window.pads[i + count])
        if type(dim) is int and dim < 1:
            ctx.fail(f"spatial axis {i} of X {format_shape(x)} unpools to {dim} positions")
        spatial.append(dim)
    ctx.set_output_shape(0, x[:2] + tuple(spatial))
