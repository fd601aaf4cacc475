"""Resize and Upsample: every dim scaled by a factor, or set to a requested size.

Concrete dims follow onnx's float32 arithmetic exactly (``floor(float32(d) * scale)``);
symbolic dims are scaled exactly when the factor is a whole number (``2*H``) or a fraction with a
small power-of-two denominator (``H//2`` for 0.5, ``(3*W)//2`` for 1.5). Requested
sizes that data propagation computed (``Shape`` -> ``Mul`` -> ``Concat``) pass through,
symbols included. Dims outside ``axes`` are never changed.
"""
from __future__ import annotations

import math
import struct
from typing import NamedTuple

from opspec.runtime.contract import InferenceContext, attribute, input, input_or_attribute, rule
from opspec.runtime.shape import Sym, format_shape, mul_dim

_POLICIES = ("stretch", "not_larger", "not_smaller")
#: The largest power-of-two denominator of a factor that scales a symbolic dim: with at most
#: this many fraction bits, float32 holds ``d * scale`` exactly while it stays below 2**16 (as
#: with whole factors, dims too large for float32 to hold are not modelled).
_DYADIC_LIMIT = 256


def _f32(value: float) -> float:
    """``value`` rounded to float32, as onnx's inference computes."""
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


class _Factors(NamedTuple):
    """What a node says of ``scales`` or ``sizes``: ``given`` (supplied and possibly non-empty),
    ``values`` (known, non-empty) and ``length`` (element count, when known)."""

    given: bool
    values: tuple | None
    length: int | None


_NONE = _Factors(False, None, None)


def _read(ctx: InferenceContext, key: str) -> _Factors:
    """``scales`` or ``sizes`` from the input (or, in old versions, the attribute) it names.

    A supplied input whose data is known to be empty counts as not given, as the standard says;
    one whose data is unknown may be either.
    """
    index = ctx.input_arg(key)
    if index is not None:
        data = ctx.input_data(index)
        if data is not None:
            if len(data.shape) != 1:
                ctx.fail(f"'{ctx.named(key)}' must be 1-D, got {len(data.shape)}-D data")
            values = tuple(data.values)
            return _Factors(bool(values), values or None, len(values))
        shape = ctx.input_shape(index)
        if shape is not None and len(shape) != 1:
            ctx.fail(f"'{ctx.named(key)}' must be 1-D, got shape {format_shape(shape)}")
        length = shape[0] if shape is not None and type(shape[0]) is int else None
        return _Factors(length != 0, None, length)
    value = ctx.attr(key)
    if value is None:
        if key == "scales" and ctx.declares("height_scale"):  # the first Upsample: (N, C, H, W) scales
            return _Factors(True, (1.0, 1.0, ctx.attr("height_scale"), ctx.attr("width_scale")), 4)
        return _NONE
    values = tuple(value)
    return _Factors(bool(values), values or None, len(values))


def _axes(ctx: InferenceContext, rank: int) -> tuple[int, ...]:
    axes = ctx.ints_attr("axes")
    if axes is None:
        return tuple(range(rank))
    normalized = tuple(ctx.normalize_axis(a, rank, "axes value") for a in axes)
    if len(set(normalized)) != len(normalized):
        ctx.fail(f"axes {list(axes)} repeat an axis")
    return normalized


def _scaled(dim, scale):
    """``floor(dim * scale)``: float32 arithmetic for a concrete dim, exact for a symbol and a
    whole factor or one with a small power-of-two denominator, else unknown."""
    if type(scale) is not float and type(scale) is not int:
        return None
    if scale < 0 or not math.isfinite(scale):
        return None
    if type(dim) is int:
        return math.floor(_f32(_f32(float(dim)) * _f32(float(scale))))
    if type(dim) is Sym:
        numerator, denominator = float(scale).as_integer_ratio()
        if denominator == 1:
            return mul_dim(dim, numerator)
        if denominator <= _DYADIC_LIMIT:  # 0.5, 0.25, 1.5: float32 keeps d * p / 2**k exact
            return mul_dim(dim, numerator) // denominator
    return None


def _aspect_sizes(x: tuple, axes: tuple, sizes: tuple, policy: str) -> tuple:
    """Sizes under ``not_larger`` / ``not_smaller``: one scale for all axes, each dim rounded."""
    dims = [x[a] for a in axes]
    if any(type(d) is not int for d in dims) or any(type(s) is not int for s in sizes):
        return (None,) * len(axes)
    pick = min if policy == "not_larger" else max
    scale = _f32(pick(_f32(s / _f32(float(d))) if d else math.inf for s, d in zip(sizes, dims)))
    out = []
    for d in dims:
        product = _f32(scale * d)
        out.append(int(math.floor(product + 0.5)) if math.isfinite(product) else None)  # roundf: half away
    return tuple(out)


@rule("resize", "Each dim (of 'axes') scaled by 'scales' (floored) or set to 'sizes'.",
      scales=input_or_attribute(), sizes=input(), axes=attribute(), keep_aspect_ratio_policy=attribute(),
      height_scale=attribute(), width_scale=attribute())
def resize(ctx: InferenceContext) -> None:
    x = ctx.input_shape("X")
    scales, sizes = _read(ctx, "scales"), _read(ctx, "sizes")
    policy = ctx.attr("keep_aspect_ratio_policy", "stretch")
    if policy not in _POLICIES:
        ctx.fail(f"keep_aspect_ratio_policy {policy!r} is not one of {', '.join(_POLICIES)}")
    if scales.values is not None and sizes.values is not None:
        ctx.fail("'scales' and 'sizes' cannot both be given")
    if scales.values is not None and policy != "stretch":
        ctx.fail(f"'scales' cannot be combined with keep_aspect_ratio_policy {policy!r}")
    if ctx.declares("sizes") and not scales.given and not sizes.given:
        ctx.fail("one of 'scales' and 'sizes' must be given")
    if x is None:
        ctx.set_output_shape("Y", None)
        return
    axes = _axes(ctx, len(x))
    out = list(x)
    for axis in axes:
        out[axis] = None  # resized by factors that may not be known
    chosen, count = (sizes, "sizes") if sizes.values is not None else (scales, "scales")
    if chosen.values is not None:
        if len(chosen.values) != len(axes):
            ctx.fail(f"'{count}' has {len(chosen.values)} values for {len(axes)} axes")
        if chosen is sizes:
            for size in chosen.values:
                if type(size) is int and size < 0:
                    ctx.fail(f"sizes {list(chosen.values)} has a negative size")
            values = chosen.values if policy == "stretch" else _aspect_sizes(x, axes, chosen.values, policy)
            values = tuple(v if type(v) is int or type(v) is Sym else None for v in values)
        else:
            if any((type(scale) is float or type(scale) is int) and scale < 0 for scale in chosen.values):
                ctx.fail(f"scales {list(chosen.values)} has a negative scale")
            values = tuple(_scaled(x[axis], scale) for axis, scale in zip(axes, chosen.values))
        for axis, value in zip(axes, values):
            out[axis] = value
    ctx.set_output_shape("Y", tuple(out))
