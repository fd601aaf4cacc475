"""The MaxUnpool rule: the size MaxPool came from, or the one ``output_shape`` asks for."""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext, attribute, input, rule
from opspec.runtime.shape import add_dim, format_shape, mul_dim


@rule("max_unpool", "output_shape's values when given; else each spatial dim (in - 1) * stride + kernel - pads.",
      kernel_shape=attribute(required=True), strides=attribute(), pads=attribute(),
      output_shape=input())
def max_unpool(ctx: InferenceContext) -> None:
    x = ctx.input_with_rank_at_least(0, 3)
    kernel = ctx.ints_attr("kernel_shape") or ()
    count = len(kernel)
    if x is not None and len(x) - 2 != count:
        ctx.fail(f"X {format_shape(x)} has {len(x) - 2} spatial axes but kernel_shape {list(kernel)} has {count}")
    strides = ctx.ints_attr("strides") or (1,) * count
    pads = ctx.ints_attr("pads") or (0,) * (2 * count)
    if len(strides) != count or len(pads) != 2 * count:
        ctx.fail(f"strides {list(strides)} and pads {list(pads)} must cover {count} spatial axes")
    if any(k < 1 for k in kernel) or any(s < 1 for s in strides) or any(p < 0 for p in pads):
        ctx.fail("kernel_shape and strides must be positive, pads not negative")
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
        if size is None:
            spatial.append(None)
            continue
        dim = add_dim(mul_dim(add_dim(size, -1), strides[i]), kernel[i] - pads[i] - pads[i + count])
        if type(dim) is int and dim < 1:
            ctx.fail(f"spatial axis {i} of X {format_shape(x)} unpools to {dim} positions")
        spatial.append(dim)
    ctx.set_output_shape(0, x[:2] + tuple(spatial))
