"""Window arithmetic shared by convolution, pooling and unpooling rules.

``Window`` validates kernel, pads, strides, dilations, ``auto_pad`` and ``ceil_mode`` and gives
each spatial axis's output length, on known, unknown and symbolic dims alike;
``transposed_length`` runs the arithmetic backwards (ConvTranspose, MaxUnpool).
"""
from __future__ import annotations

from typing import Sequence

from opspec.runtime.contract import InferenceContext
from opspec.runtime.shape import Sym, add_dim, ceil_div_dim, div_dim, format_dim, format_shape, mul_dim

_AUTO_PADS = ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER")


class Window:
    """Validated window attributes for ``count`` spatial axes."""

    def __init__(self, ctx: InferenceContext, count: int, kernel: Sequence,
                 given: tuple[Sequence[int] | None, Sequence[int] | None, Sequence[int] | None] | None = None) -> None:
        """``given``: the node's ``(strides, dilations, pads)`` as ``ctx.ints_attr`` reads them (None
        where unset), when the rule has read them already; else they are read here."""
        self.count = count
        self.kernel = tuple(kernel)
        strides, dilations, pads = given if given is not None else (
            ctx.ints_attr("strides"), ctx.ints_attr("dilations"), ctx.ints_attr("pads"))
        self.strides = strides or (1,) * count
        self.dilations = dilations or (1,) * count
        self.pads = pads or (0,) * (2 * count)
        self.auto_pad = ctx.attr("auto_pad", "NOTSET") or "NOTSET"
        self.ceil_mode = ctx.flag_attr("ceil_mode")
        for name, values, length in (("strides", self.strides, count), ("dilations", self.dilations, count),
                                     ("pads", self.pads, 2 * count)):
            if len(values) != length:
                ctx.fail(f"{name} {list(values)} must have {length} values for {count} spatial axes")
        if any(s < 1 for s in self.strides):
            ctx.fail(f"strides {list(self.strides)} must be positive")
        if any(d < 1 for d in self.dilations):
            ctx.fail(f"dilations {list(self.dilations)} must be positive")
        if any(p < 0 for p in self.pads):
            ctx.fail(f"pads {list(self.pads)} must not be negative")
        if any(type(k) is int and k < 1 for k in self.kernel):
            ctx.fail(f"kernel shape {format_shape(self.kernel)} must be positive")
        if self.auto_pad not in _AUTO_PADS:
            ctx.fail(f"auto_pad {self.auto_pad!r} is not one of {', '.join(_AUTO_PADS)}")
        if self.auto_pad != "NOTSET" and any(self.pads):
            ctx.fail(f"pads {list(self.pads)} cannot be combined with auto_pad {self.auto_pad}")

    def output_dims(self, ctx: InferenceContext, spatial: Sequence) -> tuple:
        """Output length of every spatial axis."""
        return tuple(self._output_dim(ctx, i, d) for i, d in enumerate(spatial))

    def _output_dim(self, ctx: InferenceContext, i: int, size):
        stride = self.strides[i]
        if self.auto_pad.startswith("SAME"):
            return ceil_div_dim(size, stride)
        begin, end = (0, 0) if self.auto_pad == "VALID" else (self.pads[i], self.pads[i + self.count])
        k = self.kernel[i]
        if size is None or k is None:
            return None
        extent = (k - 1) * self.dilations[i] + 1  # input positions one window covers
        span = size + (begin + end) - extent
        out = self._count(span, size, begin, end, extent, stride)
        if type(out) is int and out < 1:
            ctx.fail(f"the window covers {format_dim(extent)} positions but spatial axis {i} has only "
                     f"{format_dim(size)} (+{begin + end} padding)")
        return out

    def _count(self, span, size, begin: int, end: int, extent, stride: int):
        """Window positions along one axis, ``span`` being the padded size minus the window."""
        if not self.ceil_mode:
            return add_dim(div_dim(span, stride, evenly=False), 1)
        out = add_dim(ceil_div_dim(span, stride), 1)
        # The last window must start inside the input or its leading padding.
        if type(out) is int and type(size) is int:
            return out - 1 if (out - 1) * stride >= size + begin else out
        if type(extent) is int and extent - end >= stride:
            return out
        remainder = span.remainder(stride) if type(span) is Sym and type(extent) is int else None
        if remainder is None or out is None:
            return None
        return out - 1 if (-remainder) % stride >= extent - end else out


def transposed_length(size, stride: int, extent: int, trim: int):
    """``stride * (size - 1) + extent - trim``: the length a window of ``extent`` positions
    covers when it is placed ``size`` times ``stride`` apart, less ``trim`` padding; None
    when ``size`` is unknown."""
    if type(size) is not int and type(size) is not Sym:
        return None
    return add_dim(mul_dim(add_dim(size, -1), stride), extent - trim)
