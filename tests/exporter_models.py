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


def _scalar(b: GraphBuilder, hint: str, value: int) -> str:
    name = b.name(hint)
    b.initializers.append(helper.make_tensor(name, INT64, [], [value]))
    return name


def detection_head(use_min: bool = False, opset: int = 18):
    """Top-10 boxes by score, then NonMaxSuppression, as torchvision exports it; N boxes, symbolic.

    ``k = min(N, 10)`` is computed in the graph: Shape -> Gather -> Unsqueeze -> Concat with [10]
    -> ReduceMin (or Min of the two one-element tensors).
    """
    b = GraphBuilder()
    count = b.one("Unsqueeze", [b.one("Gather", [b.one("Shape", ["scores"]), _scalar(b, "i0", 0)], axis=0),
                                b.ints("ax0", [0])])
    if use_min:
        k = b.one("Min", [count, b.ints("ten", [10])])
    else:
        k = b.one("ReduceMin", [b.one("Concat", [count, b.ints("ten", [10])], axis=0)], keepdims=1)
    top_scores, top_indices = b.node("TopK", ["scores", k], outputs=2, axis=0, largest=1, sorted=1)
    top_boxes = b.one("Gather", ["boxes", top_indices], axis=0)
    selected = b.one("NonMaxSuppression", [b.one("Unsqueeze", [top_boxes, b.ints("ax0", [0])]),
                                           b.one("Unsqueeze", [top_scores, b.ints("ax01", [0, 1])]),
                                           b.ints("max_out", [100]), b.weight("iou", ()), b.weight("thr", ())])
    kept = b.one("Gather", [selected, _scalar(b, "i2", 2)], axis=1)
    b.nodes.append(helper.make_node("Gather", [top_boxes, kept], ["detections"], name="pick", axis=0))
    return b.model([_value("boxes", FLOAT, ["N", 4]), _value("scores", FLOAT, ["N"])],
                   [_value("detections", FLOAT, None)], opset, "detection")


def detection_head_min(opset: int = 18):
    return detection_head(True, opset)



def dynamic_quantized_matmul(opset: int = 17):
    """A Linear layer as onnxruntime's dynamic quantizer rewrites it, on (B, S, 64) activations.

    DynamicQuantizeLinear -> MatMulInteger with a uint8 weight -> Cast to float -> Mul by the
    product of the two scales -> Add the bias.
    """
    b = GraphBuilder()
    x_q, x_scale, x_zero = b.node("DynamicQuantizeLinear", ["x"], outputs=3)
    product = b.one("MatMulInteger", [x_q, b.weight("w_q", (64, 32), np.uint8), x_zero,
                                      b.weight("w_zero", (), np.uint8)])
    scale = b.one("Mul", [x_scale, b.weight("w_scale", ())])
    scaled = b.one("Mul", [b.one("Cast", [product], to=FLOAT), scale])
    b.nodes.append(helper.make_node("Add", [scaled, b.weight("bias", (32,))], ["y"], name="bias"))
    return b.model([_value("x", FLOAT, ["B", "S", 64])], [_value("y", FLOAT, None)], opset, "dynamic_quant")


def qdq_matmul(opset: int = 21):
    """A MatMul between QuantizeLinear/DequantizeLinear pairs (static QDQ format), int8 weight."""
    b = GraphBuilder()
    x_scale, x_zero = b.weight("x_scale", ()), b.weight("x_zero", (), np.uint8)
    x = b.one("DequantizeLinear", [b.one("QuantizeLinear", ["x", x_scale, x_zero]), x_scale, x_zero])
    w = b.one("DequantizeLinear", [b.weight("w_q", (64, 32), np.int8), b.weight("w_scale", (32,)),
                                   b.weight("w_zero", (32,), np.int8)], axis=1)
    y_scale, y_zero = b.weight("y_scale", ()), b.weight("y_zero", (), np.uint8)
    y = b.one("QuantizeLinear", [b.one("MatMul", [x, w]), y_scale, y_zero])
    b.nodes.append(helper.make_node("DequantizeLinear", [y, y_scale, y_zero], ["y"], name="out"))
    return b.model([_value("x", FLOAT, ["B", "S", 64])], [_value("y", FLOAT, None)], opset, "qdq")


def _zero_state(b: GraphBuilder, batch: str, directions: int, hidden: int) -> str:
    """(directions, batch, hidden) zeros, as torch exports a missing h0/c0 for a dynamic batch."""
    shape = b.one("Concat", [b.ints("dirs", [directions]), batch, b.ints("hidden", [hidden])], axis=0)
    return b.one("ConstantOfShape", [shape], value=helper.make_tensor("zero", FLOAT, [1], [0.0]))


def _lstm(b: GraphBuilder, x: str, batch: str, size: int, hidden: int, directions: int) -> list[str]:
    weights = [b.weight("W", (directions, 4 * hidden, size)), b.weight("R", (directions, 4 * hidden, hidden)),
               b.weight("B", (directions, 8 * hidden)), ""]
    states = [_zero_state(b, batch, directions, hidden), _zero_state(b, batch, directions, hidden)]
    direction = "bidirectional" if directions == 2 else "forward"
    return b.node("LSTM", [x] + weights + states, outputs=3, hidden_size=hidden, direction=direction)


def bidirectional_lstm(opset: int = 17):
    """``nn.LSTM(16, 32, num_layers=2, bidirectional=True, batch_first=True)``'s export shape:
    a bidirectional layer then, to cover torch's Squeeze path, a forward one; batch B, time T."""
    b = GraphBuilder()
    batch = b.one("Unsqueeze", [b.one("Gather", [b.one("Shape", ["x"]), _scalar(b, "i0", 0)], axis=0),
                                b.ints("ax0", [0])])
    y, _, _ = _lstm(b, b.one("Transpose", ["x"], perm=[1, 0, 2]), batch, 16, 32, 2)
    merged = b.one("Reshape", [b.one("Transpose", [y], perm=[0, 2, 1, 3]), b.ints("flat", [0, 0, -1])])
    y, last_h, last_c = _lstm(b, merged, batch, 64, 32, 1)
    squeezed = b.one("Squeeze", [y, b.ints("ax1", [1])])
    b.nodes.append(helper.make_node("Transpose", [squeezed], ["y"], name="batch_first", perm=[1, 0, 2]))
    return b.model([_value("x", FLOAT, ["B", "T", 16])], [_value("y", FLOAT, None)], opset, "lstm")


def _batch_and_sequence(b: GraphBuilder, x: str) -> tuple[str, str]:
    """x's dims 0 and 1 as one-element int64 tensors: Shape -> Gather -> Unsqueeze."""
    shape = b.one("Shape", [x])
    return tuple(b.one("Unsqueeze", [b.one("Gather", [shape, _scalar(b, f"i{axis}", axis)], axis=0),
                                     b.ints("ax0", [0])]) for axis in (0, 1))


def rotary_attention(hidden: int = 64, heads: int = 4, opset: int = 23):
    """Self-attention with rotary position embedding on Q and K, batch B and sequence S symbolic;
    the cos/sin caches are gathered by ``position_ids`` as exporters write it."""
    head = hidden // heads
    b = GraphBuilder()
    batch, seq = _batch_and_sequence(b, "x")
    split = b.one("Concat", [batch, seq, b.ints("heads", [heads, head])], axis=0)
    cos = b.one("Gather", [b.weight("cos_cache", (128, head // 2)), "position_ids"], axis=0)
    sin = b.one("Gather", [b.weight("sin_cache", (128, head // 2)), "position_ids"], axis=0)
    projected = {}
    for role in ("q", "k", "v"):
        states = b.one("Reshape", [b.one("MatMul", ["x", b.weight(role, (hidden, hidden))]), split])
        states = b.one("Transpose", [states], perm=[0, 2, 1, 3])
        if role != "v":
            states = b.one("RotaryEmbedding", [states, cos, sin])
        projected[role] = states
    scores = b.one("MatMul", [projected["q"], b.one("Transpose", [projected["k"]], perm=[0, 1, 3, 2])])
    scores = b.one("Div", [scores, b.weight("sqrt_d", ())])
    context = b.one("MatMul", [b.one("Softmax", [scores], axis=-1), projected["v"]])
    merged = b.one("Reshape", [b.one("Transpose", [context], perm=[0, 2, 1, 3]),
                               b.one("Concat", [batch, seq, b.ints("hidden", [hidden])], axis=0)])
    b.nodes.append(helper.make_node("MatMul", [merged, b.weight("o", (hidden, hidden))], ["y"], name="out"))
    inputs = [_value("x", FLOAT, ["B", "S", hidden]), _value("position_ids", INT64, ["B", "S"])]
    return b.model(inputs, [_value("y", FLOAT, None)], opset, "rotary_attention")


def fused_attention(hidden: int = 64, q_heads: int = 4, kv_heads: int = 2, opset: int = 23):
    """The fused ``Attention`` op on 3-D projections, grouped kv heads and a past cache of length P."""
    head = hidden // q_heads
    b = GraphBuilder()
    q = b.one("MatMul", ["x", b.weight("q", (hidden, hidden))])
    k = b.one("MatMul", ["x", b.weight("k", (hidden, kv_heads * head))])
    v = b.one("MatMul", ["x", b.weight("v", (hidden, kv_heads * head))])
    b.nodes.append(helper.make_node("Attention", [q, k, v, "", "past_key", "past_value"],
                                    ["context", "present_key", "present_value"], name="attention",
                                    q_num_heads=q_heads, kv_num_heads=kv_heads))
    past = ["B", kv_heads, "P", head]
    inputs = [_value("x", FLOAT, ["B", "S", hidden]), _value("past_key", FLOAT, past),
              _value("past_value", FLOAT, past)]
    outputs = [_value(name, FLOAT, None) for name in ("context", "present_key", "present_value")]
    return b.model(inputs, outputs, opset, "fused_attention")


def vit_embedding(dim: int = 64, patch: int = 16, max_tokens: int = 197, opset: int = 17):
    """A vision transformer's embedding as torch exports it for any image size: patchify Conv,
    flatten by a shape built with ReduceProd, a class token put in front by ``expand(N, -1, -1)``
    (Where(Equal(shape, -1), 1, shape) -> Expand), and position embeddings sliced to the token
    count read from Shape."""
    b = GraphBuilder()
    patches = b.one("Conv", ["image", b.weight("patch", (dim, 3, patch, patch))], strides=[patch, patch])
    shape = b.one("Shape", [patches])
    grid = b.one("ReduceProd", [b.one("Slice", [shape, b.ints("s2", [2]), b.ints("e4", [4])])], keepdims=1)
    flat = b.one("Concat", [b.one("Slice", [shape, b.ints("s0", [0]), b.ints("e2", [2])]), grid], axis=0)
    tokens = b.one("Transpose", [b.one("Reshape", [patches, flat])], perm=[0, 2, 1])
    batch = b.one("Slice", [shape, b.ints("s0", [0]), b.ints("e1", [1])])
    target = b.one("Concat", [batch, b.ints("keep", [-1, -1])], axis=0)
    target = b.one("Where", [b.one("Equal", [target, b.ints("minus1", [-1])]), b.ints("ones", [1, 1, 1]), target])
    cls = b.one("Expand", [b.weight("cls", (1, 1, dim)), target])
    tokens = b.one("Concat", [cls, tokens], axis=1)
    count = b.one("Unsqueeze", [b.one("Gather", [b.one("Shape", [tokens]), _scalar(b, "i1", 1)], axis=0),
                                b.ints("ax0", [0])])
    positions = b.one("Slice", [b.weight("pos", (1, max_tokens, dim)), b.ints("z", [0]), count, b.ints("ax1", [1])])
    b.nodes.append(helper.make_node("Add", [tokens, positions], ["embedded"], name="add_positions"))
    return b.model([_value("image", FLOAT, ["N", 3, "H", "W"])], [_value("embedded", FLOAT, None)], opset, "vit")


def fused_attention_4d(q_heads: int = 4, kv_heads: int = 2, head: int = 16, opset: int = 23):
    """The fused ``Attention`` op on 4-D (B, heads, S, head) inputs with a past cache of length P,
    a boolean padding mask over all P+S keys, and the QK product as a fourth output."""
    b = GraphBuilder()
    b.nodes.append(helper.make_node("Attention", ["q", "k", "v", "mask", "past_key", "past_value"],
                                    ["context", "present_key", "present_value", "qk"], name="attention"))
    inputs = [_value("q", FLOAT, ["B", q_heads, "S", head]), _value("k", FLOAT, ["B", kv_heads, "S", head]),
              _value("v", FLOAT, ["B", kv_heads, "S", head]), _value("mask", TensorProto.BOOL, ["B", 1, 1, "T"]),
              _value("past_key", FLOAT, ["B", kv_heads, "P", head]),
              _value("past_value", FLOAT, ["B", kv_heads, "P", head])]
    outputs = [_value(name, FLOAT, None) for name in ("context", "present_key", "present_value", "qk")]
    return b.model(inputs, outputs, opset, "fused_attention_4d")


def interpolate_pyramid(opset: int = 17):
    """``F.interpolate(x, scale_factor=s)`` at 0.5, 2 and 1.5 as torch exports it (constant
    float scales), on an (N, 8, H, W) feature map."""
    b = GraphBuilder()
    x = "features"
    for scale, mode in ((0.5, "linear"), (2.0, "nearest"), (1.5, "linear")):
        factors = b.name("scales")
        b.initializers.append(helper.make_tensor(factors, FLOAT, [4], [1.0, 1.0, scale, scale]))
        x = b.one("Resize", [x, "", factors], mode=mode)
    b.nodes.append(helper.make_node("Conv", [x, b.weight("w", (4, 8, 1, 1))], ["y"], name="head"))
    return b.model([_value("features", FLOAT, ["N", 8, "H", "W"])], [_value("y", FLOAT, None)], opset, "pyramid")
