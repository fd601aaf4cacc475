"""Rules for Fourier transforms: DFT along one axis, STFT over frames of a signal.

Signals keep their samples' real and imaginary parts in a last axis of size 1 (real) or 2
(complex); the spectra always hold both, except an inverse one-sided transform, which gives a
real signal back. Lengths read from inputs may be symbols (a length taken from ``Shape``), so
the sizes below are exact symbolic formulas whenever the lengths are known that way.
"""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext, attribute, input, input_or_attribute, rule
from opspec.runtime.rules._sizes import single_size, within_limits
from opspec.runtime.shape import Dim, ShapeError, Sym, add_dim, div_dim, format_shape, mul_dim, relax_dim, sub_dim

#: The axis a DFT runs along when the node gives none (from version 20 on; before it, the
#: attribute's default applies).
DEFAULT_DFT_AXIS = -2


def _half_spectrum(length):
    """The bins a one-sided spectrum of ``length`` samples keeps: ``floor(length / 2) + 1``."""
    return add_dim(div_dim(length, 2, evenly=False), 1)


def _scalar_size(ctx: InferenceContext, key: str):
    """The value of a one-element length input (an int >= 1 or a ``Sym``), None when unknown or absent."""
    size = single_size(ctx, key, 1)
    return size if type(size) is int or type(size) is Sym else None


def _check_parts(ctx: InferenceContext, last, expected: tuple, why: str) -> None:
    """Fail when the known size of the last axis (real/imaginary parts) is not one of ``expected``."""
    if type(last) is int and last not in expected:
        wanted = " or ".join(str(e) for e in expected)
        ctx.fail(f"the last axis of {ctx.input_name(0)} holds {last} parts; {why} needs {wanted}")


def _dft_axis(ctx: InferenceContext, rank: int):
    """The non-negative axis the DFT runs along, or None when the node's axis input is unknown."""
    axis = ctx.ints_arg("axis")
    value: Dim
    if not axis.present:
        value = DEFAULT_DFT_AXIS
    else:
        if axis.length is not None and axis.length != 1:
            ctx.fail(f"axis must be a scalar, got {axis.length} values")
        value = axis.values[0] if axis.values else None
        if type(value) is not int:
            return None
    if not -rank <= value < rank - 1 or value == -1:
        ctx.fail(f"axis {value} is not a signal axis of a rank-{rank} input (the last axis holds the parts)")
    return value + rank if value < 0 else value


@rule("dft", "The input's shape with the transformed axis resized (dft_length, one-sided half) and 2 parts last.",
      axis=input_or_attribute(doc="the axis input (or attribute, in early versions)"),
      dft_length=input(), onesided=attribute(), inverse=attribute())
def dft(ctx: InferenceContext) -> None:
    shape = ctx.input_shape("input")
    onesided, inverse = ctx.flag_attr("onesided"), ctx.flag_attr("inverse")
    length_given = ctx.input_arg("dft_length") is not None
    length = _scalar_size(ctx, "dft_length")
    if shape is None:
        ctx.set_output_shape("output", None)
        return
    if len(shape) < 2:
        ctx.fail(f"input {format_shape(shape)} needs a signal axis and a last axis of parts")
    if not onesided:
        _check_parts(ctx, shape[-1], (1, 2), "a DFT")
    elif inverse:
        _check_parts(ctx, shape[-1], (2,), "an inverse one-sided DFT (complex in)")
    else:
        _check_parts(ctx, shape[-1], (1,), "a one-sided DFT (real in)")
    axis = _dft_axis(ctx, len(shape))

    def resized(n):
        """The transformed axis' size from its input size ``n``."""
        if length_given:
            return _half_spectrum(length) if onesided and not inverse and length is not None else length
        if not onesided:
            return n
        try:
            return mul_dim(sub_dim(n, 1), 2) if inverse else _half_spectrum(n)
        except ShapeError:
            ctx.fail(f"an inverse one-sided DFT over {n} bins has no signal length")

    rank = len(shape)
    candidates = [axis] if axis is not None else range(rank - 1)  # an unknown axis: any signal axis
    out: list[Dim] | None = None
    for candidate in candidates:
        option = list(shape)
        option[candidate] = resized(shape[candidate])
        out = option if out is None else [relax_dim(a, b) for a, b in zip(out, option)]
    assert out is not None  # a rank of at least 2 offers a candidate axis
    out[-1] = 1 if onesided and inverse else 2
    ctx.set_output_shape("output", within_limits(ctx, tuple(out)))


@rule("stft", "(batch, frames, bins, 2): frames of frame_length every frame_step samples, bins per spectrum.",
      frame_step=input(required=True), window=input(), frame_length=input(), onesided=attribute())
def stft(ctx: InferenceContext) -> None:
    batch, samples, parts = ctx.input_with_rank("signal", 3)
    _check_parts(ctx, parts, (1, 2), "an STFT")
    step = _scalar_size(ctx, "frame_step")
    window_index = ctx.input_arg("window")
    window = ctx.input_with_rank(window_index, 1)[0] if window_index is not None else None
    length_given = ctx.input_arg("frame_length") is not None
    if window_index is None and not length_given:
        ctx.fail("needs a window or a frame_length to know the frame length")
    length = _scalar_size(ctx, "frame_length")
    if type(length) is int and type(window) is int and length != window:
        ctx.fail(f"frame_length {length} differs from the window's length {window}")
    if length is None:
        length = window  # when both are given they agree
    frames = None
    if samples is not None and length is not None and step is not None:
        try:
            frames = add_dim(div_dim(sub_dim(samples, length), step, evenly=False), 1)
        except ShapeError:
            ctx.fail(f"a signal of {samples} samples is shorter than a frame of {length}")
    bins = _half_spectrum(length) if ctx.flag_attr("onesided") and length is not None else length
    ctx.set_output_shape("output", (batch, frames, bins, 2))
