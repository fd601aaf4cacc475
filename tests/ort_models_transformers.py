"""BERT and GPT-2 blocks written op for op as torch.onnx exports Hugging Face's models.

The graphs follow the exporter's patterns closely enough that onnxruntime's transformer
optimizer recognizes them: BERT's embedding sum with a sliced position-id buffer, its extended
attention mask (Unsqueeze, Cast, 1 - mask, times -10000), post-norm blocks with biased
projections and erf GELU; GPT-2's Conv1D layers (Reshape, Gemm, Reshape), fused QKV split in
three, a past of shape (2, batch, heads, past, head size) per layer (or none), the causal mask
sliced from a lower-triangular buffer and the tanh GELU. Weights are random (seeded) so quantizers
calibrate real ranges.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from models import GraphBuilder

OPSET = 17
#: The IR version models are written with: onnx's helper writes a newer one than onnxruntime 1.31 reads.
IR_VERSION = 10
FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64


class RandomGraph(GraphBuilder):
    """A ``GraphBuilder`` whose weights are seeded random values, with scalar and int constants."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__()
        self.rng = np.random.default_rng(seed)

    def weight(self, hint: str, shape: tuple[int, ...], dtype=np.float32) -> str:
        name = self.name(hint)
        values = (self.rng.standard_normal(shape) * 0.05).astype(dtype)
        self.initializers.append(numpy_helper.from_array(values, name))
        return name

    def finish(self, inputs: list, outputs: list, name: str, opset: int = OPSET) -> onnx.ModelProto:
        model = self.model(inputs, outputs, opset, name)
        model.ir_version = IR_VERSION
        return model

    def constant(self, hint: str, value, dtype=np.float32) -> str:
        name = self.name(hint)
        self.initializers.append(numpy_helper.from_array(np.array(value, dtype=dtype), name))
        return name

    def linear(self, x: str, rows: int, columns: int, hint: str) -> str:
        """``x @ W + b`` as torch exports ``nn.Linear`` on a 3-D input."""
        return self.one("Add", [self.weight(hint + "_b", (columns,)),
                                self.one("MatMul", [x, self.weight(hint + "_w", (rows, columns))])])

    def layer_norm(self, x: str, hidden: int) -> str:
        gamma = self.name("ln_g")
        self.initializers.append(numpy_helper.from_array(
            (1 + self.rng.standard_normal(hidden) * 0.05).astype(np.float32), gamma))
        return self.one("LayerNormalization", [x, gamma, self.weight("ln_b", (hidden,))], axis=-1, epsilon=1e-12)

    def heads(self, x: str, heads: int, head: int, perm: list[int]) -> str:
        """(B, S, heads*head) to (B, heads, S, head) or, with perm 0231, (B, heads, head, S)."""
        return self.one("Transpose", [self.one("Reshape", [x, self.ints("split_heads", [0, 0, heads, head])])],
                        perm=perm)


# --- BERT -------------------------------------------------------------------------------


def _bert_embeddings(b: RandomGraph, hidden: int, vocab: int, positions: int) -> str:
    words = b.one("Gather", [b.weight("word_embeddings", (vocab, hidden)), "input_ids"], axis=0)
    types = b.one("Gather", [b.weight("token_type_embeddings", (2, hidden)), "token_type_ids"], axis=0)
    summed = b.one("Add", [words, types])
    length = b.one("Gather", [b.one("Shape", ["input_ids"]), b.constant("one", 1, np.int64)], axis=0)
    end = b.one("Unsqueeze", [length, b.ints("axes0", [0])])
    ids = b.name("position_ids")
    b.initializers.append(numpy_helper.from_array(np.arange(positions, dtype=np.int64)[None, :], ids))
    position_ids = b.one("Slice", [ids, b.ints("start", [0]), end, b.ints("axes1", [1]), b.ints("step", [1])])
    located = b.one("Gather", [b.weight("position_embeddings", (positions, hidden)), position_ids], axis=0)
    return b.layer_norm(b.one("Add", [summed, located]), hidden)


def _bert_extended_mask(b: RandomGraph) -> str:
    expanded = b.one("Unsqueeze", [b.one("Unsqueeze", ["attention_mask", b.ints("axes1", [1])]),
                                   b.ints("axes2", [2])])
    inverted = b.one("Sub", [b.constant("one", 1.0), b.one("Cast", [expanded], to=FLOAT)])
    return b.one("Mul", [inverted, b.constant("masked", -10000.0)])


def _bert_layer(b: RandomGraph, x: str, mask: str, hidden: int, heads: int) -> str:
    head = hidden // heads
    q = b.heads(b.linear(x, hidden, hidden, "query"), heads, head, [0, 2, 1, 3])
    k = b.heads(b.linear(x, hidden, hidden, "key"), heads, head, [0, 2, 3, 1])
    v = b.heads(b.linear(x, hidden, hidden, "value"), heads, head, [0, 2, 1, 3])
    scores = b.one("Div", [b.one("MatMul", [q, k]), b.constant("sqrt_head", float(np.sqrt(head)))])
    probs = b.one("Softmax", [b.one("Add", [scores, mask])], axis=-1)
    context = b.one("Transpose", [b.one("MatMul", [probs, v])], perm=[0, 2, 1, 3])
    merged = b.one("Reshape", [context, b.ints("merge_heads", [0, 0, hidden])])
    x = b.layer_norm(b.one("Add", [b.linear(merged, hidden, hidden, "attn_out"), x]), hidden)
    up = b.linear(x, hidden, 4 * hidden, "intermediate")
    erf = b.one("Erf", [b.one("Div", [up, b.constant("sqrt2", 1.4142135381698608)])])
    gelu = b.one("Mul", [b.one("Mul", [up, b.one("Add", [erf, b.constant("one", 1.0)])]), b.constant("half", 0.5)])
    return b.layer_norm(b.one("Add", [b.linear(gelu, 4 * hidden, hidden, "output"), x]), hidden)


def bert(layers: int = 2, hidden: int = 64, heads: int = 4, vocab: int = 1000, positions: int = 64) -> onnx.ModelProto:
    """A BERT encoder with its pooler; inputs ``input_ids``, ``token_type_ids``, ``attention_mask`` of (B, S)."""
    b = RandomGraph(seed=1)
    x = _bert_embeddings(b, hidden, vocab, positions)
    mask = _bert_extended_mask(b)
    for _ in range(layers):
        x = _bert_layer(b, x, mask, hidden, heads)
    first = b.one("Gather", [x, b.constant("zero", 0, np.int64)], axis=1)
    pooled = b.one("Tanh", [b.one("Gemm", [first, b.weight("pooler_w", (hidden, hidden)),
                                           b.weight("pooler_b", (hidden,))], transB=1)])
    b.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="last_hidden_state"))
    b.nodes.append(helper.make_node("Identity", [pooled], ["pooler_output"], name="pooler_output"))
    inputs = [helper.make_tensor_value_info(name, INT64, ["B", "S"])
              for name in ("input_ids", "token_type_ids", "attention_mask")]
    outputs = [helper.make_tensor_value_info(name, FLOAT, None) for name in ("last_hidden_state", "pooler_output")]
    return b.finish(inputs, outputs, "bert")


def bert_feeds(setting: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    batch, length = setting["B"], setting["S"]
    mask = np.ones((batch, length), dtype=np.int64)
    mask[0, length - 2:] = 0
    return {"input_ids": rng.integers(0, 1000, (batch, length)).astype(np.int64),
            "token_type_ids": (np.arange(length)[None, :] >= length // 2).astype(np.int64).repeat(batch, 0),
            "attention_mask": mask}


BERT_SETTINGS = [{"B": 2, "S": 7}, {"B": 1, "S": 12}]


# --- GPT-2 ------------------------------------------------------------------------------


def _conv1d(b: RandomGraph, x: str, rows: int, columns: int, hint: str) -> str:
    """GPT-2's Conv1D: flatten to (B*S, rows), Gemm with bias, back to (B, S, columns)."""
    flat = b.one("Reshape", [x, b.ints("flatten", [-1, rows])])
    product = b.one("Gemm", [flat, b.weight(hint + "_w", (rows, columns)), b.weight(hint + "_b", (columns,))])
    leading = b.one("Slice", [b.one("Shape", [x]), b.ints("zero", [0]), b.ints("two", [2]), b.ints("axis", [0])])
    return b.one("Reshape", [product, b.one("Concat", [leading, b.ints("columns", [columns])], axis=0)])


def _gpt2_causal_scores(b: RandomGraph, scores: str, context: int) -> str:
    """Keep the scores a lower-triangular buffer allows (sliced to the past and new tokens), else -10000."""
    shape = b.one("Shape", [scores])
    new = b.one("Squeeze", [b.one("Slice", [shape, b.ints("minus2", [-2]), b.ints("minus1", [-1]),
                                            b.ints("axis", [0])]), b.ints("axis", [0])])
    total = b.one("Squeeze", [b.one("Slice", [shape, b.ints("minus1", [-1]), b.ints("end", [2 ** 62]),
                                              b.ints("axis", [0])]), b.ints("axis", [0])])
    total_1d = b.one("Unsqueeze", [total, b.ints("axis", [0])])
    buffer = b.name("causal_bias")
    b.initializers.append(numpy_helper.from_array(np.tril(np.ones((context, context), np.uint8))[None, None], buffer))
    rows = b.one("Slice", [buffer, b.one("Unsqueeze", [b.one("Sub", [total, new]), b.ints("axis", [0])]), total_1d,
                           b.ints("axis2", [2])])
    allowed = b.one("Slice", [rows, b.ints("zero", [0]), total_1d, b.ints("axis3", [3])])
    return b.one("Where", [b.one("Cast", [allowed], to=TensorProto.BOOL), scores, b.constant("masked", -10000.0)])


def _gpt2_input_mask(b: RandomGraph) -> str:
    flat = b.one("Reshape", ["attention_mask", b.ints("batch_rows", [0, -1])])
    expanded = b.one("Unsqueeze", [b.one("Unsqueeze", [flat, b.ints("axes1", [1])]), b.ints("axes2", [2])])
    inverted = b.one("Sub", [b.constant("one", 1.0), b.one("Cast", [expanded], to=FLOAT)])
    return b.one("Mul", [inverted, b.constant("masked", -10000.0)])


def _gpt2_attention(b: RandomGraph, normed: str, mask: str | None, layer: int | None, hidden: int, heads: int,
                    context: int) -> str:
    """Causal self-attention on the fused QKV projection; with a past when ``layer`` is given, writing its present."""
    head = hidden // heads
    qkv = _conv1d(b, normed, hidden, 3 * hidden, "c_attn")
    q, k, v = b.node("Split", [qkv, b.ints("thirds", [hidden] * 3)], "qkv", outputs=3, axis=2)
    q = b.heads(q, heads, head, [0, 2, 1, 3])
    if layer is None:
        keys_t, values = b.heads(k, heads, head, [0, 2, 3, 1]), b.heads(v, heads, head, [0, 2, 1, 3])
    else:
        past_k, past_v = b.node("Split", [f"past_{layer}", b.ints("halves", [1, 1])], "past", outputs=2, axis=0)
        past_k, past_v = (b.one("Squeeze", [part, b.ints("axis", [0])]) for part in (past_k, past_v))
        keys = b.one("Concat", [past_k, b.heads(k, heads, head, [0, 2, 1, 3])], axis=-2)
        values = b.one("Concat", [past_v, b.heads(v, heads, head, [0, 2, 1, 3])], axis=-2)
        stacked = [b.one("Unsqueeze", [part, b.ints("axis", [0])]) for part in (keys, values)]
        b.nodes.append(helper.make_node("Concat", stacked, [f"present_{layer}"], name=f"present_{layer}", axis=0))
        keys_t = b.one("Transpose", [keys], perm=[0, 1, 3, 2])
    scores = b.one("Div", [b.one("MatMul", [q, keys_t]), b.constant("sqrt_head", float(np.sqrt(head)))])
    scores = _gpt2_causal_scores(b, scores, context)
    probs = b.one("Softmax", [b.one("Add", [scores, mask]) if mask else scores], axis=-1)
    context_heads = b.one("Transpose", [b.one("MatMul", [probs, values])], perm=[0, 2, 1, 3])
    return b.one("Reshape", [context_heads, b.ints("merge_heads", [0, 0, hidden])])


def _gpt2_block(b: RandomGraph, x: str, mask: str | None, layer: int | None, hidden: int, heads: int,
                context: int) -> str:
    merged = _gpt2_attention(b, b.layer_norm(x, hidden), mask, layer, hidden, heads, context)
    x = b.one("Add", [x, _conv1d(b, merged, hidden, hidden, "c_proj")])
    up = _conv1d(b, b.layer_norm(x, hidden), hidden, 4 * hidden, "c_fc")
    cubic = b.one("Mul", [b.one("Pow", [up, b.constant("three", 3.0)]), b.constant("c", 0.044715)])
    inner = b.one("Mul", [b.one("Add", [up, cubic]), b.constant("sqrt_2_over_pi", 0.7978845608028654)])
    gelu = b.one("Mul", [b.one("Mul", [up, b.constant("half", 0.5)]),
                         b.one("Add", [b.one("Tanh", [inner]), b.constant("one", 1.0)])])
    return b.one("Add", [x, _conv1d(b, gelu, 4 * hidden, hidden, "mlp_proj")])


def gpt2(layers: int = 2, hidden: int = 64, heads: int = 4, vocab: int = 500, context: int = 64) -> onnx.ModelProto:
    """A GPT-2 decoder step with past: ``input_ids``, ``position_ids`` (B, S), ``attention_mask`` (B, P+S),
    ``past_<i>`` (2, B, heads, P, head size); outputs ``logits`` and ``present_<i>``."""
    b = RandomGraph(seed=2)
    words = b.weight("wte", (vocab, hidden))
    x = b.one("Add", [b.one("Gather", [words, "input_ids"], axis=0),
                      b.one("Gather", [b.weight("wpe", (context, hidden)), "position_ids"], axis=0)])
    mask = _gpt2_input_mask(b)
    for layer in range(layers):
        x = _gpt2_block(b, x, mask, layer, hidden, heads, context)
    b.nodes.append(helper.make_node("MatMul", [b.layer_norm(x, hidden), b.one("Transpose", [words], perm=[1, 0])],
                                    ["logits"], name="lm_head"))
    head = hidden // heads
    inputs = [helper.make_tensor_value_info("input_ids", INT64, ["B", "S"]),
              helper.make_tensor_value_info("position_ids", INT64, ["B", "S"]),
              helper.make_tensor_value_info("attention_mask", FLOAT, ["B", "T"]),
              *(helper.make_tensor_value_info(f"past_{i}", FLOAT, [2, "B", heads, "P", head]) for i in range(layers))]
    outputs = [helper.make_tensor_value_info("logits", FLOAT, None),
               *(helper.make_tensor_value_info(f"present_{i}", FLOAT, None) for i in range(layers))]
    return b.finish(inputs, outputs, "gpt2")


def gpt2_no_past(layers: int = 2, hidden: int = 64, heads: int = 4, vocab: int = 500,
                 context: int = 64) -> onnx.ModelProto:
    """GPT-2 on ``input_ids`` (B, S) alone, positions counted in the graph; output ``logits``."""
    b = RandomGraph(seed=2)
    words = b.weight("wte", (vocab, hidden))
    length = b.one("Gather", [b.one("Shape", ["input_ids"]), b.constant("one", 1, np.int64)], axis=0)
    positions = b.one("Unsqueeze", [b.one("Range", [b.constant("zero", 0, np.int64), length,
                                                    b.constant("step", 1, np.int64)]), b.ints("axis", [0])])
    x = b.one("Add", [b.one("Gather", [words, "input_ids"], axis=0),
                      b.one("Gather", [b.weight("wpe", (context, hidden)), positions], axis=0)])
    for _ in range(layers):
        x = _gpt2_block(b, x, None, None, hidden, heads, context)
    b.nodes.append(helper.make_node("MatMul", [b.layer_norm(x, hidden), b.one("Transpose", [words], perm=[1, 0])],
                                    ["logits"], name="lm_head"))
    return b.finish([helper.make_tensor_value_info("input_ids", INT64, ["B", "S"])],
                    [helper.make_tensor_value_info("logits", FLOAT, None)], "gpt2_no_past")


GPT2_NO_PAST_SETTINGS = [{"B": 2, "S": 7}, {"B": 1, "S": 12}]


def gpt2_tokens(setting: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"input_ids": rng.integers(0, 500, (setting["B"], setting["S"])).astype(np.int64)}


def gpt2_feeds(setting: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    batch, new, past = setting["B"], setting["S"], setting["P"]
    feeds: dict[str, np.ndarray] = {"input_ids": rng.integers(0, 500, (batch, new)).astype(np.int64),
             "position_ids": np.arange(past, past + new, dtype=np.int64)[None, :].repeat(batch, 0),
             "attention_mask": np.ones((batch, past + new), dtype=np.float32)}
    for layer in range(2):
        feeds[f"past_{layer}"] = rng.standard_normal((2, batch, 4, past, 16)).astype(np.float32)
    return feeds


GPT2_SETTINGS = [{"B": 1, "S": 3, "P": 5, "T": 8}, {"B": 2, "S": 1, "P": 9, "T": 10}]
