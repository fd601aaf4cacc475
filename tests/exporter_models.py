"""Graphs written the way exporters write them (torch.onnx, tf2onnx, onnxruntime's quantizer).

Each builder returns a model with symbolic batch/spatial/sequence dims, sizes computed in the
graph from ``Shape`` (so only data propagation recovers them), and zero-filled initializers.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper
from models import GraphBuilder

FLOAT, INT64 = TensorProto.FLOAT, TensorProto.INT64


def _value(name: str, elem: int, shape) -> object:
    return helper.make_tensor_value_info(name, elem, shape)


def _conv_relu(b: GraphBuilder, x: str, channels_in: int, channels_out: int) -> str:
    conv = b.one("Conv", [x, b.weight("w", (channels_out, channels_in, 3, 3)), b.weight("b", (channels_out,))],
                 pads=[1, 1, 1, 1])
    return b.one("Relu", [conv])


def _up_to(b: GraphBuilder, x: str, skip: str, channels_in: int, channels_out: int) -> str:
    """ConvTranspose (stride 2), then Resize to the skip's H, W as torch exports ``interpolate(size=)``."""
    up = b.one("ConvTranspose", [x, b.weight("wt", (channels_in, channels_out, 2, 2))], strides=[2, 2])
    batch_channels = b.one("Slice", [b.one("Shape", [up]), b.ints("s0", [0]), b.ints("e2", [2])])
    spatial = b.one("Slice", [b.one("Shape", [skip]), b.ints("s2", [2]), b.ints("e4", [4])])
    sizes = b.one("Concat", [batch_channels, spatial], axis=0)
    resized = b.one("Resize", [up, "", "", sizes], mode="nearest")
    return b.one("Concat", [resized, skip], axis=1)


def unet(opset: int = 17):
    """Two-level U-Net on an (N, 3, H, W) image: Conv/Relu/MaxPool down, ConvTranspose/Resize up."""
    b = GraphBuilder()
    skip1 = _conv_relu(b, "image", 3, 8)
    skip2 = _conv_relu(b, b.one("MaxPool", [skip1], kernel_shape=[2, 2], strides=[2, 2]), 8, 16)
    bottom = _conv_relu(b, b.one("MaxPool", [skip2], kernel_shape=[2, 2], strides=[2, 2]), 16, 32)
    up2 = _conv_relu(b, _up_to(b, bottom, skip2, 32, 16), 32, 16)
    up1 = _conv_relu(b, _up_to(b, up2, skip1, 16, 8), 16, 8)
    b.nodes.append(helper.make_node("Conv", [up1, b.weight("head", (2, 8, 1, 1))], ["mask"], name="head"))
    return b.model([_value("image", FLOAT, ["N", 3, "H", "W"])], [_value("mask", FLOAT, None)], opset, "unet")
