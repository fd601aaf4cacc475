"""A branching CNN, a ViT and an LSTM tagger, as torch.onnx exports them, for onnxruntime's tools.

The CNN has what makes quantize_static and the NCHWc layout transformer write their less common
ops: two branches joined by Concat, a SiLU (Sigmoid times input), a LeakyReLU, a depthwise Conv,
a residual Add, global pooling and a Gemm classifier with Softmax. The ViT (patch Conv, class
token, pre-norm blocks without a mask) is what the transformer optimizer fuses for vision. The tagger
is an embedding, a bidirectional LSTM and a linear layer, the shape quantize_dynamic rewrites
into DynamicQuantizeLSTM.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from ort_models_transformers import RandomGraph

FLOAT = TensorProto.FLOAT


def _conv(b: RandomGraph, x: str, channels_in: int, channels_out: int, kernel: int, stride: int = 1,
          group: int = 1) -> str:
    pad = kernel // 2
    return b.one("Conv", [x, b.weight("conv_w", (channels_out, channels_in // group, kernel, kernel)),
                          b.weight("conv_b", (channels_out,))],
                 kernel_shape=[kernel, kernel], pads=[pad] * 4, strides=[stride, stride], group=group)


def branching_cnn() -> onnx.ModelProto:
    """Image (N, 3, 32, 32) to class probabilities (N, 10) through a two-branch, residual stack."""
    b = RandomGraph(seed=3)
    stem = b.one("Relu", [_conv(b, "image", 3, 16, 3)])
    narrow = b.one("LeakyRelu", [_conv(b, stem, 16, 16, 1)], alpha=0.1)
    wide = _conv(b, stem, 16, 16, 3)
    swish = b.one("Mul", [wide, b.one("Sigmoid", [wide])])
    joined = b.one("Concat", [narrow, swish], axis=1)
    depthwise = b.one("Relu", [_conv(b, joined, 32, 32, 3, stride=2, group=32)])
    residual = b.one("Relu", [b.one("Add", [_conv(b, depthwise, 32, 32, 1), depthwise])])
    pooled = b.one("MaxPool", [residual], kernel_shape=[2, 2], strides=[2, 2])
    features = b.one("Flatten", [b.one("GlobalAveragePool", [_conv(b, pooled, 32, 32, 3)])])
    logits = b.one("Gemm", [features, b.weight("fc_w", (10, 32)), b.weight("fc_b", (10,))], transB=1)
    b.nodes.append(helper.make_node("Softmax", [logits], ["probs"], name="probs", axis=-1))
    return b.finish([helper.make_tensor_value_info("image", FLOAT, ["N", 3, 32, 32])],
                    [helper.make_tensor_value_info("probs", FLOAT, None)], "branching_cnn")


def image_feeds(setting: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"image": rng.random((setting["N"], 3, 32, 32), dtype=np.float32)}


def calibration_images() -> list[dict[str, np.ndarray]]:
    return [image_feeds({"N": 1}, np.random.default_rng(seed)) for seed in range(2)]


CNN_SETTINGS = [{"N": 2}, {"N": 1}]


def lstm_tagger(vocab: int = 300, embed: int = 32, hidden: int = 24, tags: int = 9) -> onnx.ModelProto:
    """Tokens (S, B) to tag scores (S, B, tags): embedding, bidirectional LSTM, linear layer."""
    b = RandomGraph(seed=4)
    embedded = b.one("Gather", [b.weight("embedding", (vocab, embed)), "tokens"], axis=0)
    weights = [b.weight("lstm_w", (2, 4 * hidden, embed)), b.weight("lstm_r", (2, 4 * hidden, hidden)),
               b.weight("lstm_b", (2, 8 * hidden))]
    states, _, _ = b.node("LSTM", [embedded, *weights], "lstm", outputs=3, hidden_size=hidden,
                          direction="bidirectional")
    # (S, 2, B, hidden) to (S, B, 2*hidden), as torch's batch_first=False export writes it.
    features = b.one("Reshape", [b.one("Transpose", [states], perm=[0, 2, 1, 3]), b.ints("merge", [0, 0, -1])])
    scores = b.one("Add", [b.one("MatMul", [features, b.weight("tag_w", (2 * hidden, tags))]),
                           b.weight("tag_b", (tags,))])
    b.nodes.append(helper.make_node("Identity", [scores], ["tag_scores"], name="tag_scores"))
    return b.finish([helper.make_tensor_value_info("tokens", TensorProto.INT64, ["S", "B"])],
                    [helper.make_tensor_value_info("tag_scores", FLOAT, None)], "lstm_tagger")


def token_feeds(setting: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"tokens": rng.integers(0, 300, (setting["S"], setting["B"])).astype(np.int64)}


LSTM_SETTINGS = [{"S": 6, "B": 2}, {"S": 11, "B": 1}]


def _pre_norm_block(b: RandomGraph, x: str, hidden: int, heads: int) -> str:
    """x + attention(LN(x)), then + MLP(LN(.)), with erf GELU, as ViT's encoder layer."""
    head = hidden // heads
    normed = b.layer_norm(x, hidden)
    q = b.heads(b.linear(normed, hidden, hidden, "query"), heads, head, [0, 2, 1, 3])
    k = b.heads(b.linear(normed, hidden, hidden, "key"), heads, head, [0, 2, 3, 1])
    v = b.heads(b.linear(normed, hidden, hidden, "value"), heads, head, [0, 2, 1, 3])
    scores = b.one("Div", [b.one("MatMul", [q, k]), b.constant("sqrt_head", float(np.sqrt(head)))])
    context = b.one("Transpose", [b.one("MatMul", [b.one("Softmax", [scores], axis=-1), v])], perm=[0, 2, 1, 3])
    merged = b.one("Reshape", [context, b.ints("merge_heads", [0, 0, hidden])])
    x = b.one("Add", [b.linear(merged, hidden, hidden, "attn_out"), x])
    up = b.linear(b.layer_norm(x, hidden), hidden, 4 * hidden, "intermediate")
    erf = b.one("Erf", [b.one("Div", [up, b.constant("sqrt2", 1.4142135381698608)])])
    gelu = b.one("Mul", [b.one("Mul", [up, b.one("Add", [erf, b.constant("one", 1.0)])]), b.constant("half", 0.5)])
    return b.one("Add", [b.linear(gelu, 4 * hidden, hidden, "output"), x])


def vit(layers: int = 2, hidden: int = 64, heads: int = 4, patch: int = 8) -> onnx.ModelProto:
    """Image (N, 3, 32, 32) to the class token's logits (N, 10): patch Conv, class token, pre-norm blocks."""
    b = RandomGraph(seed=8)
    patches = (32 // patch) ** 2
    grid = b.one("Conv", ["image", b.weight("patch_w", (hidden, 3, patch, patch)), b.weight("patch_b", (hidden,))],
                 kernel_shape=[patch, patch], strides=[patch, patch])
    tokens = b.one("Transpose", [b.one("Reshape", [grid, b.ints("flatten", [0, hidden, -1])])], perm=[0, 2, 1])
    batch = b.one("Gather", [b.one("Shape", ["image"]), b.ints("zero", [0])], axis=0)
    cls = b.one("Expand", [b.weight("cls_token", (1, 1, hidden)),
                           b.one("Concat", [batch, b.ints("one_hidden", [1, hidden])], axis=0)])
    x = b.one("Add", [b.one("Concat", [cls, tokens], axis=1), b.weight("position", (1, patches + 1, hidden))])
    for _ in range(layers):
        x = _pre_norm_block(b, x, hidden, heads)
    first = b.one("Gather", [b.layer_norm(x, hidden), b.constant("zero", 0, np.int64)], axis=1)
    b.nodes.append(helper.make_node("Gemm", [first, b.weight("head_w", (10, hidden)), b.weight("head_b", (10,))],
                                    ["logits"], name="logits", transB=1))
    return b.finish([helper.make_tensor_value_info("image", FLOAT, ["N", 3, 32, 32])],
                    [helper.make_tensor_value_info("logits", FLOAT, None)], "vit")
