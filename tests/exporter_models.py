"""Graphs written the way exporters (torch.onnx, tf2onnx, onnxruntime's quantizer) write them.

Each builder returns a model with symbolic batch, sequence or spatial dims whose shapes are
computed inside the graph (Shape/Slice/Gather/Concat feeding Resize, TopK, Reshape,
ConstantOfShape), as exported models do. Value names are ``<op>_<n>`` from ``GraphBuilder``.
"""
from __future__ import annotations

import numpy as np
from models import GraphBuilder
from onnx import TensorProto, helper, numpy_helper

FLOAT, INT64, UINT8, INT8 = TensorProto.FLOAT, TensorProto.INT64, TensorProto.UINT8, TensorProto.INT8


def _scalar(b: GraphBuilder, hint: str, value, dtype=np.int64) -> str:
    """A 0-D initializer."""
    name = b.name(hint)
    b.initializers.append(numpy_helper.from_array(np.array(value, dtype=dtype), name))
    return name


def _tensor(name: str, elem: int, shape) -> object:
    return helper.make_tensor_value_info(name, elem, shape)


def _conv_relu(b: GraphBuilder, x: str, out_channels: int, in_channels: int) -> str:
    conv = b.one("Conv", [x, b.weight("w", (out_channels, in_channels, 3, 3)), b.weight("b", (out_channels,))],
                 pads=[1, 1, 1, 1], kernel_shape=[3, 3])
    return b.one("Relu", [conv])


def _pad_to(b: GraphBuilder, up: str, skip: str) -> str:
    """torch's ``F.pad(up, [dx // 2, dx - dx // 2, dy // 2, dy - dy // 2])`` with ``dy, dx`` the skip's extra
    height and width, lowered as torch lowers it: pads padded with zeros to twice the rank, reshaped to
    (begin, end) rows, the rows reversed, transposed and flattened into onnx's order."""
    def extra(axis: int) -> str:
        size = [b.one("Gather", [b.one("Shape", [t]), _scalar(b, "axis", axis)], axis=0) for t in (skip, up)]
        return b.one("Sub", size)

    def unsqueezed(value: str) -> str:
        return b.one("Unsqueeze", [value, b.ints("axes", [0])])

    amounts = []
    for axis in (3, 2):  # torch lists the last axis first
        total = extra(axis)
        half = b.one("Div", [total, _scalar(b, "two", 2)])
        amounts += [unsqueezed(half), unsqueezed(b.one("Sub", [total, half]))]
    pads = b.one("Concat", amounts, axis=0)
    missing = b.one("Sub", [b.ints("twice_rank", [8]), b.one("Shape", [pads])])
    zeros = b.one("ConstantOfShape", [missing], value=helper.make_tensor("zero", INT64, [1], [0]))
    rows = b.one("Reshape", [b.one("Concat", [pads, zeros], axis=0), b.ints("rows", [-1, 2])])
    reversed_rows = b.one("Slice", [rows, b.ints("start", [-1]), b.ints("end", [-(2**63)]), b.ints("axes", [0]),
                                    b.ints("step", [-1])])
    flat = b.one("Reshape", [b.one("Transpose", [reversed_rows], perm=[1, 0]), b.ints("flat", [-1])])
    return b.one("Pad", [up, flat], mode="constant")


def _upsample_to(b: GraphBuilder, x: str, skip: str, in_channels: int, out_channels: int, gather: bool,
                 align: str) -> str:
    """torch's ``interpolate(conv_transpose(x), size=skip.shape[2:])`` (or ``F.pad`` of it to the skip's size
    with ``align="pad"``) then ``cat([up, skip], 1)``."""
    up = b.one("ConvTranspose", [x, b.weight("wt", (in_channels, out_channels, 2, 2)), b.weight("bt", (out_channels,))],
               kernel_shape=[2, 2], strides=[2, 2])
    if align == "pad":
        return b.one("Concat", [_pad_to(b, up, skip), skip], axis=1)
    if gather:
        spatial = b.one("Gather", [b.one("Shape", [skip]), b.ints("hw", [2, 3])], axis=0)
    else:
        spatial = b.one("Slice", [b.one("Shape", [skip]), b.ints("start", [2]), b.ints("end", [4]),
                                  b.ints("axes", [0])])
    leading = b.one("Slice", [b.one("Shape", [up]), b.ints("start", [0]), b.ints("end", [2]), b.ints("axes", [0])])
    sizes = b.one("Concat", [leading, spatial], axis=0)
    resized = b.one("Resize", [up, "", "", sizes], mode="nearest", coordinate_transformation_mode="asymmetric",
                    nearest_mode="floor")
    return b.one("Concat", [resized, skip], axis=1)


def unet(opset: int = 17, align: str = "resize"):
    """Two-level U-Net on (N, 3, H, W): Conv/Relu/MaxPool down, ConvTranspose then Resize (or Pad, with
    ``align="pad"``) to the skip's size up."""
    b = GraphBuilder()
    d1 = _conv_relu(b, "image", 8, 3)
    d2 = _conv_relu(b, b.one("MaxPool", [d1], kernel_shape=[2, 2], strides=[2, 2]), 16, 8)
    bottom = _conv_relu(b, b.one("MaxPool", [d2], kernel_shape=[2, 2], strides=[2, 2]), 32, 16)
    u2 = _conv_relu(b, _upsample_to(b, bottom, d2, 32, 16, False, align), 16, 32)
    u1 = _conv_relu(b, _upsample_to(b, u2, d1, 16, 8, True, align), 8, 16)
    logits = b.one("Conv", [u1, b.weight("head", (2, 8, 1, 1))], kernel_shape=[1, 1])
    b.nodes.append(helper.make_node("Sigmoid", [logits], ["mask"], name="sigmoid"))
    return b.model([_tensor("image", FLOAT, ["N", 3, "H", "W"])], [_tensor("mask", FLOAT, None)], opset, "unet")


def detection_head(reduce: str = "ReduceMin", opset: int = 17):
    """Top-k of at most 10 boxes (k = min(N, 10) computed from Shape), then NonMaxSuppression."""
    b = GraphBuilder()
    count = b.one("Gather", [b.one("Shape", ["scores"]), _scalar(b, "zero", 0)], axis=0)
    count = b.one("Unsqueeze", [count, b.ints("axes", [0])])
    if reduce == "ReduceMin":
        k = b.one("ReduceMin", [b.one("Concat", [count, b.ints("ten", [10])], axis=0)], keepdims=1)
    else:
        k = b.one("Min", [count, b.ints("ten", [10])])
    k = b.one("Cast", [k], to=INT64)
    values, indices = b.node("TopK", ["scores", k], axis=0, largest=1, sorted=1, outputs=2)
    top_boxes = b.one("Gather", ["boxes", indices], axis=0)
    selected = b.one("NonMaxSuppression", [
        b.one("Unsqueeze", [top_boxes, b.ints("axes", [0])]),
        b.one("Unsqueeze", [values, b.ints("axes", [0, 1])]),
        b.ints("max_out", [10]), b.weight("iou", (1,)), b.weight("score", (1,))])
    keep = b.one("Gather", [selected, _scalar(b, "two", 2)], axis=1)
    b.nodes.append(helper.make_node("Gather", [top_boxes, keep], ["kept_boxes"], name="kept_boxes", axis=0))
    b.nodes.append(helper.make_node("Gather", [values, keep], ["kept_scores"], name="kept_scores", axis=0))
    return b.model([_tensor("boxes", FLOAT, ["N", 4]), _tensor("scores", FLOAT, ["N"])],
                   [_tensor("kept_boxes", FLOAT, None), _tensor("kept_scores", FLOAT, None)], opset, "detect")


def quantized_matmul(opset: int = 21):
    """onnxruntime's dynamic quantization of x @ W + b, then a QDQ MatMul with a per-channel int8 weight."""
    b = GraphBuilder()
    xq, x_scale, x_zero = b.node("DynamicQuantizeLinear", ["x"], outputs=3)
    product = b.one("MatMulInteger", [xq, b.weight("wq", (64, 32), np.uint8), x_zero,
                                      _scalar(b, "wzp", 128, np.uint8)])
    scale = b.one("Mul", [x_scale, _scalar(b, "w_scale", 0.02, np.float32)])
    dense = b.one("Add", [b.one("Mul", [b.one("Cast", [product], to=FLOAT), scale]), b.weight("bias", (32,))])
    act_scale, act_zero = _scalar(b, "a_scale", 0.1, np.float32), _scalar(b, "a_zero", 128, np.uint8)
    quantized = b.one("QuantizeLinear", [dense, act_scale, act_zero])
    activation = b.one("DequantizeLinear", [quantized, act_scale, act_zero])
    weight = b.one("DequantizeLinear", [b.weight("w8", (32, 16), np.int8), b.weight("w8_scale", (16,)),
                                        b.weight("w8_zero", (16,), np.int8)], axis=1)
    b.nodes.append(helper.make_node("MatMul", [activation, weight], ["y"], name="out"))
    return b.model([_tensor("x", FLOAT, ["B", "S", 64])], [_tensor("y", FLOAT, None)], opset, "quantized")


def bidirectional_lstm(with_lengths: bool = False, opset: int = 14):
    """torch's batch-first bidirectional LSTM: zero initial states sized from Shape, output (B, S, 2*hidden)."""
    b, hidden = GraphBuilder(), 20
    x = b.one("Transpose", ["x"], perm=[1, 0, 2])
    batch = b.one("Unsqueeze", [b.one("Gather", [b.one("Shape", ["x"]), _scalar(b, "zero", 0)], axis=0),
                                b.ints("axes", [0])])
    state_shape = b.one("Concat", [b.ints("dirs", [2]), batch, b.ints("hidden", [hidden])], axis=0)
    zeros = helper.make_tensor("zero", FLOAT, [1], [0.0])
    h0 = b.one("ConstantOfShape", [state_shape], value=zeros)
    c0 = b.one("ConstantOfShape", [state_shape], value=zeros)
    lengths = "lengths" if with_lengths else ""
    y, y_h, y_c = b.node("LSTM", [x, b.weight("W", (2, 4 * hidden, 10)), b.weight("R", (2, 4 * hidden, hidden)),
                                  b.weight("B", (2, 8 * hidden)), lengths, h0, c0],
                         direction="bidirectional", hidden_size=hidden, outputs=3)
    merged = b.one("Reshape", [b.one("Transpose", [y], perm=[0, 2, 1, 3]), b.ints("shape", [0, 0, -1])])
    b.nodes.append(helper.make_node("Transpose", [merged], ["features"], name="batch_first", perm=[1, 0, 2]))
    inputs = [_tensor("x", FLOAT, ["B", "S", 10])]
    if with_lengths:
        inputs.append(_tensor("lengths", TensorProto.INT32, ["B"]))
    outputs = [_tensor("features", FLOAT, None), _tensor(y_h, FLOAT, None), _tensor(y_c, FLOAT, None)]
    return b.model(inputs, outputs, opset, "lstm")


def rotary_attention(hidden: int = 64, heads: int = 4, opset: int = 23):
    """Self-attention over (B, S, hidden) with RotaryEmbedding on Q and K; caches gathered by position ids."""
    b, head = GraphBuilder(), hidden // heads
    shape = b.one("Shape", ["x"])
    batch = b.one("Gather", [shape, b.ints("i0", [0])], axis=0)
    seq = b.one("Gather", [shape, b.ints("i1", [1])], axis=0)
    split = b.one("Concat", [batch, seq, b.ints("hd", [heads, head])], axis=0)
    cos = b.one("Gather", [b.weight("cos_cache", (128, head // 2)), "position_ids"], axis=0)
    sin = b.one("Gather", [b.weight("sin_cache", (128, head // 2)), "position_ids"], axis=0)
    projected = {}
    for role in ("q", "k", "v"):
        heads_first = b.one("Transpose", [b.one("Reshape", [b.one("MatMul", ["x", b.weight(role, (hidden, hidden))]),
                                                            split])], perm=[0, 2, 1, 3])
        projected[role] = heads_first if role == "v" else b.one("RotaryEmbedding", [heads_first, cos, sin])
    scores = b.one("MatMul", [projected["q"], b.one("Transpose", [projected["k"]], perm=[0, 1, 3, 2])])
    scores = b.one("Div", [scores, _scalar(b, "sqrt_d", float(np.sqrt(head)), np.float32)])
    context = b.one("MatMul", [b.one("Softmax", [scores], axis=-1), projected["v"]])
    merged = b.one("Reshape", [b.one("Transpose", [context], perm=[0, 2, 1, 3]),
                               b.one("Concat", [batch, seq, b.ints("h", [hidden])], axis=0)])
    b.nodes.append(helper.make_node("MatMul", [merged, b.weight("o", (hidden, hidden))], ["attended"], name="out"))
    return b.model([_tensor("x", FLOAT, ["B", "S", hidden]), _tensor("position_ids", INT64, ["B", "S"])],
                   [_tensor("attended", FLOAT, None)], opset, "rotary_attention")


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
    inputs = [_tensor("x", FLOAT, ["B", "S", hidden]), _tensor("past_key", FLOAT, past),
              _tensor("past_value", FLOAT, past)]
    outputs = [_tensor(name, FLOAT, None) for name in ("context", "present_key", "present_value")]
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
    return b.model([_tensor("image", FLOAT, ["N", 3, "H", "W"])], [_tensor("embedded", FLOAT, None)], opset, "vit")


def fused_attention_4d(q_heads: int = 4, kv_heads: int = 2, head: int = 16, opset: int = 23):
    """The fused ``Attention`` op on 4-D (B, heads, S, head) inputs with a past cache of length P,
    an additive padding mask over all P+S keys, and the QK product as a fourth output."""
    b = GraphBuilder()
    b.nodes.append(helper.make_node("Attention", ["q", "k", "v", "mask", "past_key", "past_value"],
                                    ["context", "present_key", "present_value", "qk"], name="attention"))
    inputs = [_tensor("q", FLOAT, ["B", q_heads, "S", head]), _tensor("k", FLOAT, ["B", kv_heads, "S", head]),
              _tensor("v", FLOAT, ["B", kv_heads, "S", head]), _tensor("mask", FLOAT, ["B", 1, 1, "T"]),
              _tensor("past_key", FLOAT, ["B", kv_heads, "P", head]),
              _tensor("past_value", FLOAT, ["B", kv_heads, "P", head])]
    outputs = [_tensor(name, FLOAT, None) for name in ("context", "present_key", "present_value", "qk")]
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
    return b.model([_tensor("features", FLOAT, ["N", 8, "H", "W"])], [_tensor("y", FLOAT, None)], opset, "pyramid")
