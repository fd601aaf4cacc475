"""A LLaMA-2 decoder step with past written op for op as torch.onnx (TorchScript) exports Hugging Face's model.

The patterns are those onnxruntime's transformer optimizer matches for LLaMA: RMSNorm as Pow,
ReduceMean, Add, Sqrt, Reciprocal and two Muls; ``rotate_half`` as two Slices at half the head
size, Neg and Concat, with cos and sin tables sliced to the key length and gathered by
``position_ids``; reshapes whose shapes are built from ``Shape`` of the normalized input; the
4-D mask as the inverted padding mask plus a causal mask; keys and values concatenated to the
past and returned as the present. The optimizer (model type gpt2) turns them into
SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization, RotaryEmbedding and
MultiHeadAttention with past and an attention bias.

Symbols: batch ``B``, new tokens ``S``, past ``P``; the attention mask's length is the expression
``P + S``, as Hugging Face's exporters name it ("past_sequence_length + sequence_length").
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ort_models_transformers import RandomGraph

FLOAT, INT64 = TensorProto.FLOAT, TensorProto.INT64
HIDDEN, HEADS, VOCAB, MAX_POSITIONS = 64, 4, 256, 64
HEAD = HIDDEN // HEADS
LOWEST = float(np.finfo(np.float32).min)


def _rms_norm(b: RandomGraph, x: str) -> str:
    mean_square = b.one("ReduceMean", [b.one("Pow", [x, b.constant("two", 2.0)])], axes=[-1], keepdims=1)
    inverse = b.one("Reciprocal", [b.one("Sqrt", [b.one("Add", [mean_square, b.constant("eps", 1e-6)])])])
    weight = b.name("rms_w")
    b.initializers.append(numpy_helper.from_array((1 + b.rng.standard_normal(HIDDEN) * 0.05).astype(np.float32),
                                                  weight))
    return b.one("Mul", [weight, b.one("Mul", [x, inverse])])


def _rotary_tables(b: RandomGraph) -> tuple[str, str]:
    """cos and sin of every position times every frequency, (positions, head size), as Constant nodes."""
    angles = np.outer(np.arange(MAX_POSITIONS), 10000.0 ** (-np.arange(0, HEAD, 2) / HEAD))
    angles = np.concatenate([angles, angles], axis=-1).astype(np.float32)
    names = []
    for kind, values in (("cos_cached", np.cos(angles)), ("sin_cached", np.sin(angles))):
        names.append(b.name(kind))
        b.nodes.append(helper.make_node("Constant", [], [names[-1]], name=names[-1],
                                        value=numpy_helper.from_array(values, names[-1])))
    return names[0], names[1]


def _rotate(b: RandomGraph, x: str, cos: str, sin: str) -> str:
    """``x * cos + rotate_half(x) * sin`` on x of (B, heads, S, head size)."""
    half = b.one("Unsqueeze", [b.one("Div", [b.one("Gather", [b.one("Shape", [x]), b.constant("three", 3, np.int64)],
                                                   axis=0), b.constant("two", 2, np.int64)]), b.ints("axis", [0])])
    first = b.one("Slice", [x, b.ints("zero", [0]), half, b.ints("last", [3])])
    second = b.one("Slice", [x, half, b.ints("end", [2 ** 62]), b.ints("last", [3])])
    rotated = b.one("Concat", [b.one("Neg", [second]), first], axis=-1)
    return b.one("Add", [b.one("Mul", [x, cos]), b.one("Mul", [rotated, sin])])


def _split_heads(b: RandomGraph, x: str, sizes: tuple[str, str], rows: int, hint: str) -> str:
    projected = b.one("MatMul", [x, b.weight(hint, (rows, HIDDEN))])
    shape = b.one("Concat", [*sizes, b.ints("heads", [HEADS]), b.ints("head", [HEAD])], axis=0)
    return b.one("Transpose", [b.one("Reshape", [projected, shape])], perm=[0, 2, 1, 3])


def _attention(b: RandomGraph, x: str, mask: str, layer: int) -> str:
    shape = b.one("Shape", [x])
    batch, length = (b.one("Unsqueeze", [b.one("Gather", [shape, b.constant("i", i, np.int64)], axis=0),
                                         b.ints("axis", [0])]) for i in (0, 1))
    sizes = (batch, length)
    q, k, v = (_split_heads(b, x, sizes, HIDDEN, role) for role in ("q_proj", "k_proj", "v_proj"))
    past_key, past_value = f"past_key_values.{layer}.key", f"past_key_values.{layer}.value"
    key_length = b.one("Add", [b.one("Gather", [b.one("Shape", [k]), b.constant("i", -2, np.int64)], axis=0),
                               b.one("Gather", [b.one("Shape", [past_key]), b.constant("i", -2, np.int64)], axis=0)])
    end = b.one("Unsqueeze", [key_length, b.ints("axis", [0])])
    cos_cached, sin_cached = _rotary_tables(b)
    cos, sin = (b.one("Unsqueeze", [b.one("Gather", [b.one("Slice", [table, b.ints("zero", [0]), end,
                                                                        b.ints("axis", [0])]), "position_ids"],
                                          axis=0), b.ints("axis", [1])])
                for table in (cos_cached, sin_cached))
    keys = b.one("Concat", [past_key, _rotate(b, k, cos, sin)], axis=2)
    values = b.one("Concat", [past_value, v], axis=2)
    b.nodes.append(helper.make_node("Identity", [keys], [f"present.{layer}.key"], name=f"present_key_{layer}"))
    b.nodes.append(helper.make_node("Identity", [values], [f"present.{layer}.value"], name=f"present_value_{layer}"))
    scores = b.one("MatMul", [_rotate(b, q, cos, sin), b.one("Transpose", [keys], perm=[0, 1, 3, 2])])
    scores = b.one("Div", [scores, b.constant("sqrt_head", float(np.sqrt(HEAD)))])
    context = b.one("MatMul", [b.one("Softmax", [b.one("Add", [scores, mask])], axis=-1), values])
    merged_shape = b.one("Concat", [*sizes, b.ints("hidden", [HIDDEN])], axis=0)
    merged = b.one("Reshape", [b.one("Transpose", [context], perm=[0, 2, 1, 3]), merged_shape])
    return b.one("MatMul", [merged, b.weight("o_proj", (HIDDEN, HIDDEN))])


def _four_d_mask(b: RandomGraph) -> str:
    """(B, 1, S, T): the lowest float where a token is padding or in the future, else 0."""
    ids_shape = b.one("Shape", ["input_ids"])
    new = b.one("Gather", [ids_shape, b.constant("one", 1, np.int64)], axis=0)
    total = b.one("Gather", [b.one("Shape", ["attention_mask"]), b.constant("one", 1, np.int64)], axis=0)
    batch = b.one("Gather", [ids_shape, b.constant("zero", 0, np.int64)], axis=0)
    target = b.one("Concat", [b.one("Unsqueeze", [batch, b.ints("axis", [0])]), b.ints("one", [1]),
                              b.one("Unsqueeze", [new, b.ints("axis", [0])]),
                              b.one("Unsqueeze", [total, b.ints("axis", [0])])], axis=0)
    expanded = b.one("Expand", [b.one("Unsqueeze", [b.one("Unsqueeze", ["attention_mask", b.ints("axis", [1])]),
                                                    b.ints("axis", [2])]), target])
    inverted = b.one("Sub", [b.constant("one", 1.0), b.one("Cast", [expanded], to=FLOAT)])
    padding = b.one("Where", [b.one("Cast", [inverted], to=TensorProto.BOOL), b.constant("lowest", LOWEST), inverted])
    rows = b.one("Unsqueeze", [b.one("Range", [b.one("Sub", [total, new]), total, b.constant("step", 1, np.int64)]),
                               b.ints("axis", [1])])
    future = b.one("Greater", [b.one("Range", [b.constant("zero", 0, np.int64), total,
                                               b.constant("step", 1, np.int64)]), rows])
    causal = b.one("Where", [future, b.constant("lowest", LOWEST), b.constant("zero", 0.0)])
    return b.one("Add", [padding, b.one("Unsqueeze", [causal, b.ints("axes", [0, 1])])])


def llama(layers: int = 2) -> onnx.ModelProto:
    """``input_ids``, ``position_ids`` (B, S), ``attention_mask`` (B, P + S), ``past_key_values.<i>.key|value``
    (B, heads, P, head size) to ``logits`` (B, S, vocab) and ``present.<i>.key|value`` (B, heads, P + S, head size)."""
    b = RandomGraph(seed=7)
    x = b.one("Gather", [b.weight("embed_tokens", (VOCAB, HIDDEN)), "input_ids"], axis=0)
    mask = _four_d_mask(b)
    for layer in range(layers):
        x = b.one("Add", [x, _attention(b, _rms_norm(b, x), mask, layer)])
        normed = _rms_norm(b, x)
        gate = b.one("MatMul", [normed, b.weight("gate_proj", (HIDDEN, 2 * HIDDEN))])
        up = b.one("MatMul", [normed, b.weight("up_proj", (HIDDEN, 2 * HIDDEN))])
        silu = b.one("Mul", [gate, b.one("Sigmoid", [gate])])
        x = b.one("Add", [x, b.one("MatMul", [b.one("Mul", [silu, up]), b.weight("down_proj", (2 * HIDDEN, HIDDEN))])])
    b.nodes.append(helper.make_node("MatMul", [_rms_norm(b, x), b.weight("lm_head", (HIDDEN, VOCAB))], ["logits"],
                                    name="lm_head"))
    inputs = [helper.make_tensor_value_info("input_ids", INT64, ["B", "S"]),
              helper.make_tensor_value_info("attention_mask", INT64, ["B", "P + S"]),
              helper.make_tensor_value_info("position_ids", INT64, ["B", "S"])]
    outputs = [helper.make_tensor_value_info("logits", FLOAT, None)]
    for layer in range(layers):
        for kind in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_key_values.{layer}.{kind}", FLOAT,
                                                        ["B", HEADS, "P", HEAD]))
            outputs.append(helper.make_tensor_value_info(f"present.{layer}.{kind}", FLOAT, None))
    return b.finish(inputs, outputs, "llama")


def llama_feeds(setting: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    batch, new, past = setting["B"], setting["S"], setting["P"]
    feeds = {"input_ids": rng.integers(0, VOCAB, (batch, new)).astype(np.int64),
             "attention_mask": np.ones((batch, past + new), dtype=np.int64),
             "position_ids": np.arange(past, past + new, dtype=np.int64)[None, :].repeat(batch, 0)}
    for layer in range(2):
        for kind in ("key", "value"):
            feeds[f"past_key_values.{layer}.{kind}"] = rng.standard_normal((batch, HEADS, past, HEAD)).astype(
                np.float32)
    return feeds


LLAMA_SETTINGS = [{"B": 1, "S": 3, "P": 5}, {"B": 2, "S": 1, "P": 9}]
