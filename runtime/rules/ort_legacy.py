"""Rules for the default-domain operators only onnxruntime keeps: operators ONNX has since
removed (Crop, GivenTensorFill) and TensorRT plugin operators (EfficientNMS_TRT,
MultilevelCropAndResize_TRT, PyramidROIAlign_TRT).

The removed elementwise operators (Affine, ScaledTanh, ImageScaler...) use ``elementwise``
and DynamicSlice uses ``slice``.
"""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext, attribute, element, rule
from opspec.runtime.shape import ShapeError, sub_dim

# ---------------------------------------------------------------------------------- Crop


def _crop_length(ctx: InferenceContext, axis: str, size, start: int, end: int, window: int | None):
    """The kept length of one spatial axis: ``window`` after ``start``, else the size less both borders."""
    if window is not None:  # the far border does not count then
        if type(size) is int and size < start + window:
            ctx.fail(f"the input's {axis} {size} is smaller than the border {start} plus the window {window}")
        return window
    try:
        return sub_dim(size, start + end)
    except ShapeError:
        ctx.fail(f"the input's {axis} {size} is smaller than its two borders {start} + {end}")


@rule("crop", "(N, C, H', W'): H and W lose their borders, or keep a 'scale'-sized window after the top-left border.",
      border=attribute(), scale=attribute())
def crop(ctx: InferenceContext) -> None:
    """input is (N, C, H, W); border is (left, top, right, bottom), none negative; scale, when set,
    is the (height, width) of the window kept from the top-left border on."""
    n, c, h, w = ctx.input_with_rank("input", 4)
    border = ctx.ints_attr("border")
    if border is None or len(border) != 4:
        ctx.fail(f"'border' must hold 4 values (left, top, right, bottom), got {list(border or ())}")
        return
    if any(value < 0 for value in border):
        ctx.fail(f"'border' {list(border)} must not be negative")
    scale = ctx.ints_attr("scale")
    if scale is not None and len(scale) != 2:
        ctx.fail(f"'scale' must hold 2 values (height, width), got {list(scale)}")
    if scale is not None and any(value < 0 for value in scale):
        ctx.fail(f"'scale' {list(scale)} must not be negative")
    left, top, right, bottom = border
    height = _crop_length(ctx, "height", h, top, bottom, scale[0] if scale else None)
    width = _crop_length(ctx, "width", w, left, right, scale[1] if scale else None)
    ctx.set_output_shape("output", (n, c, height, width))


# ---------------------------------------------------------------------------------- GivenTensorFill

@rule("given_tensor_fill", "The 'shape' attribute's dims; else the input's shape, or with 'input_as_shape' its "
      "values, followed by 'extra_shape'.",
      shape=attribute(), input_as_shape=attribute(), extra_shape=attribute())
def given_tensor_fill(ctx: InferenceContext) -> None:
    """A tensor of the 'shape' attribute; else of the shape input's dims (or contents) plus 'extra_shape'."""
    dims = ctx.ints_attr("shape")
    if dims is not None:
        _no_negative(ctx, "shape", dims)
        ctx.set_output_shape("X", dims)
        return
    if not ctx.has_input("shape"):
        ctx.set_output_shape("X", None)
        return
    extra = ctx.ints_attr("extra_shape") or ()
    _no_negative(ctx, "extra_shape", extra)
    if ctx.flag_attr("input_as_shape"):
        lead = _shape_from_values(ctx)
    else:
        lead = ctx.input_shape("shape")
    ctx.set_output_shape("X", lead + extra if lead is not None else None)


def _no_negative(ctx: InferenceContext, name: str, dims: tuple) -> None:
    if any(d < 0 for d in dims):
        ctx.fail(f"'{name}' {list(dims)} must not hold negative dims")


def _shape_from_values(ctx: InferenceContext) -> tuple | None:
    """The dims the 1-D shape input holds: its values when known, else as many unknown dims as it has."""
    data = ctx.input_data("shape")
    if data is not None and len(data.shape) == 1:
        return tuple(d if d is None or type(d) is not int or d >= 0 else None
                     for d in (element(v) for v in data.values))
    shape = ctx.input_shape("shape")
    if shape is not None and len(shape) == 1 and type(shape[0]) is int:
        return ctx.unknown_dims(shape[0])
    return None


# ---------------------------------------------------------------------------------- TensorRT plugins

@rule("efficient_nms_trt", "num_detections (B, 1); detection_boxes (B, max_output_boxes, 4); detection_scores and "
      "detection_classes (B, max_output_boxes).",
      max_output_boxes=attribute())
def efficient_nms_trt(ctx: InferenceContext) -> None:
    """Fixed-size detections per image: B is the boxes input's first dim."""
    boxes = ctx.input_with_rank_at_least("boxes", 1)
    limit = ctx.int_attr("max_output_boxes", 1)
    if limit < 1:
        ctx.fail(f"'max_output_boxes' is {limit}; it must be at least 1")
    batch = boxes[0] if boxes is not None else None
    ctx.set_output_shape("num_detections", (batch, 1))
    ctx.set_output_shape("detection_boxes", (batch, limit, 4))
    ctx.set_output_shape("detection_scores", (batch, limit))
    ctx.set_output_shape("detection_classes", (batch, limit))


@rule("trt_roi_patches", "(batch, boxes, channels, pooled_size, pooled_size): one square patch per box, with "
      "feature_map_0's channels.",
      pooled_size=attribute())
def trt_roi_patches(ctx: InferenceContext) -> None:
    """boxes is (batch, boxes, ...); feature_map_0 is (batch, channels, ...)."""
    boxes = ctx.input_with_rank_at_least("boxes", 2)
    features = ctx.input_with_rank_at_least("feature_map_0", 2)
    size = ctx.int_attr("pooled_size", 1)
    if size < 1:
        ctx.fail(f"'pooled_size' is {size}; it must be at least 1")
    batch, count = (boxes[0], boxes[1]) if boxes is not None else (None, None)
    channels = features[1] if features is not None else None
    ctx.set_output_shape("patches", (batch, count, channels, size, size))


