"""onnxruntime's blocked channel layout (NCHWc): moving data in and out, and upsampling in it.

Inside the layout the channel axis is padded up to a multiple of the CPU kernels' block size,
which depends on the machine: 8 with AVX2 and older x86 vector units (and on LoongArch), 16
with AVX-512 and on ARM64, 1 where the kernels are missing. A padded channel count is stated
only when it is the same for all of them: when the channel count is a multiple of 16.
"""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext, attribute, rule
from opspec.runtime.shape import format_shape, mul_dim

#: Every block size onnxruntime's CPU kernels use divides this one.
LARGEST_BLOCK = 16


def blocked_channels(channels):
    """The padded channel count, when no block size changes it; else None."""
    if type(channels) is int and channels % LARGEST_BLOCK == 0:
        return channels
    return None


@rule("reorder_input", "(N, C rounded up to the machine's block size, spatial...) from NCHW, or from NHWC with "
      "channels_last.", channels_last=attribute())
def reorder_input(ctx: InferenceContext) -> None:
    """The channel count is kept when a multiple of 16 (every block size divides it), else unknown;
    the kernel takes a 4-D X whose channels are a multiple of 4."""
    x = ctx.input_with_rank_at_least("X", 2)
    if x is None:
        ctx.set_output_shape("Y", None)
        return
    if len(x) != 4:
        ctx.fail(f"X {format_shape(x)} must be 4-D (the kernel reorders images only)")
    if ctx.flag_attr("channels_last"):
        channels, spatial = x[-1], x[1:-1]
    else:
        channels, spatial = x[1], x[2:]
    if type(channels) is int and channels % 4:
        ctx.fail(f"X {format_shape(x)} has {channels} channels; the kernel needs a multiple of 4")
    ctx.set_output_shape("Y", (x[0], blocked_channels(channels)) + tuple(spatial))


@rule("reorder_output", "(N, channels, spatial...) or, with channels_last, (N, spatial..., channels) from the "
      "blocked layout.", channels=attribute(), channels_last=attribute())
def reorder_output(ctx: InferenceContext) -> None:
    """The 'channels' attribute gives the unpadded channel count."""
    x = ctx.input_with_rank_at_least("X", 2)
    if x is None:
        ctx.set_output_shape("Y", None)
        return
    channels = ctx.int_attr("channels", 0)
    if channels <= 0:
        ctx.fail(f"channels {channels} must be positive")
    spatial = tuple(x[2:])
    if ctx.flag_attr("channels_last"):
        ctx.set_output_shape("Y", (x[0],) + spatial + (channels,))
    else:
        ctx.set_output_shape("Y", (x[0], channels) + spatial)


@rule("scale_dims", "Each dim multiplied by its entry of the integer 'scales' attribute.", scales=attribute())
def scale_dims(ctx: InferenceContext) -> None:
    """Without 'scales' only the rank is known."""
    x = ctx.input_with_rank_at_least("X", 2)
    scales = ctx.ints_attr("scales")
    if x is None:
        ctx.set_output_shape("Y", None)
        return
    if scales is None:
        ctx.set_output_shape("Y", (None,) * len(x))
        return
    if len(scales) != len(x):
        ctx.fail(f"scales {list(scales)} must have one value per axis of X {format_shape(x)}")
    if any(scale <= 0 for scale in scales):
        ctx.fail(f"scales {list(scales)} must be positive")
    ctx.set_output_shape("Y", tuple(mul_dim(dim, scale) for dim, scale in zip(x, scales)))
