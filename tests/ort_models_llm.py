"""Decoder-only LLM steps written op for op as the generative-AI model builder writes int4 CPU models.

The builder needs Hugging Face weights, so the graphs are written here the way it writes them:
a 4-bit block-quantized embedding table read by GatherBlockQuantized, SimplifiedLayerNormalization
then SkipSimplifiedLayerNormalization carrying the residual from layer to layer, MatMulNBits for
every projection (accuracy level 4, block 32), a SiLU-gated MLP, and one of two attentions:

- GroupQueryAttention on packed QKV with rotary embedding inside, the attention mask reduced to
  ``seqlens_k`` and ``total_sequence_length``, and past and present sharing one KV buffer of a
  fixed length (symbol ``M``), as the builder writes with past_present_share_buffer;
- RotaryEmbedding on query and key, then MultiHeadAttention with a key padding mask and a past
  that grows (present of length P + S), the layout of models the builder writes for
  MultiHeadAttention.

Symbols: batch ``B``, new tokens ``S``, total tokens ``T`` (attention mask), past ``P`` or buffer ``M``.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ort_models_transformers import IR_VERSION, RandomGraph

FLOAT = TensorProto.FLOAT
HIDDEN, HEADS, KV_HEADS, VOCAB, BLOCK, MAX_POSITIONS = 64, 4, 2, 128, 32, 64
HEAD = HIDDEN // HEADS


class DecoderGraph(RandomGraph):
    """Adds the int4 weight layouts the builder writes."""

    def nbits(self, x: str, rows: int, columns: int, hint: str, zero_points: bool = False) -> str:
        """``x @ W`` with W (rows, columns) stored as MatMulNBits' 4-bit blocks along ``rows``."""
        blocks = (rows + BLOCK - 1) // BLOCK
        packed = self.name(hint + "_q")
        self.initializers.append(numpy_helper.from_array(
            self.rng.integers(0, 256, (columns, blocks, BLOCK // 2)).astype(np.uint8), packed))
        scales = self.name(hint + "_scales")
        self.initializers.append(numpy_helper.from_array(
            (self.rng.random(columns * blocks) * 0.02).astype(np.float32), scales))
        inputs = [x, packed, scales]
        if zero_points:
            inputs.append(self.name(hint + "_zp"))
            self.initializers.append(numpy_helper.from_array(
                self.rng.integers(0, 256, columns * ((blocks + 1) // 2)).astype(np.uint8), inputs[-1]))
        return self.one("MatMulNBits", inputs, hint, K=rows, N=columns, bits=4, block_size=BLOCK,
                        accuracy_level=4, domain="com.microsoft")

    def quantized_embedding(self, ids: str, zero_points: bool = False) -> str:
        """Rows of a (vocab, hidden) table stored as 4-bit blocks along hidden, two per byte."""
        packed = self.name("embed_q")
        self.initializers.append(numpy_helper.from_array(
            self.rng.integers(0, 256, (VOCAB, HIDDEN // 2)).astype(np.uint8), packed))
        scales = self.name("embed_scales")
        self.initializers.append(numpy_helper.from_array(
            (self.rng.random((VOCAB, HIDDEN // BLOCK)) * 0.02).astype(np.float32), scales))
        inputs = [packed, ids, scales]
        if zero_points:
            inputs.append(self.name("embed_zp"))
            self.initializers.append(numpy_helper.from_array(
                self.rng.integers(0, 256, (VOCAB, (HIDDEN // BLOCK + 1) // 2)).astype(np.uint8), inputs[-1]))
        return self.one("GatherBlockQuantized", inputs, "embedded", gather_axis=0, quantize_axis=1,
                        block_size=BLOCK, bits=4, domain="com.microsoft")

    def norm_weight(self) -> str:
        name = self.name("norm_w")
        self.initializers.append(numpy_helper.from_array(
            (1 + self.rng.standard_normal(HIDDEN) * 0.05).astype(np.float32), name))
        return name

    def rotary_caches(self) -> tuple[str, str]:
        angles = np.outer(np.arange(MAX_POSITIONS), 10000.0 ** (-np.arange(0, HEAD, 2) / HEAD))
        names = self.name("cos_cache"), self.name("sin_cache")
        for name, values in zip(names, (np.cos(angles), np.sin(angles))):
            self.initializers.append(numpy_helper.from_array(values.astype(np.float32), name))
        return names

    def mlp(self, x: str, zero_points: bool = False) -> str:
        gate = self.nbits(x, HIDDEN, 2 * HIDDEN, "gate_proj", zero_points)
        up = self.nbits(x, HIDDEN, 2 * HIDDEN, "up_proj", zero_points)
        silu = self.one("Mul", [gate, self.one("Sigmoid", [gate])])
        return self.nbits(self.one("Mul", [silu, up]), 2 * HIDDEN, HIDDEN, "down_proj", zero_points)

    def skip_norm(self, x: str, residual: str) -> tuple[str, str]:
        """SkipSimplifiedLayerNormalization: (normalized x + residual, the sum itself)."""
        normed, _, _, summed = self.node("SkipSimplifiedLayerNormalization", [x, residual, self.norm_weight()],
                                         "skip_norm", outputs=4, epsilon=1e-5, domain="com.microsoft")
        self.nodes[-1].output[1] = self.nodes[-1].output[2] = ""
        return normed, summed


def _decoder(b: DecoderGraph, embedded: str, layers: int, attention) -> None:
    """Layers of pre-norm attention and MLP with the residual carried by the skip norms; writes ``logits``."""
    x = b.one("SimplifiedLayerNormalization", [embedded, b.norm_weight()], axis=-1, epsilon=1e-5)
    residual = embedded
    for layer in range(layers):
        attended = attention(b, x, layer)
        x, residual = b.skip_norm(attended, residual)
        mlp = b.mlp(x, zero_points=attention is _mha_attention)
        if layer < layers - 1:
            x, residual = b.skip_norm(mlp, residual)
    final, _ = b.skip_norm(mlp, residual)
    b.nodes.append(helper.make_node("Identity", [b.nbits(final, HIDDEN, VOCAB, "lm_head")], ["logits"],
                                    name="logits"))


def _model(b: DecoderGraph, inputs: list, outputs: list, name: str) -> onnx.ModelProto:
    graph = helper.make_graph(b.nodes, name, inputs, outputs, b.initializers)
    return helper.make_model(graph, ir_version=IR_VERSION, opset_imports=[
        helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])


# --- GroupQueryAttention over a shared KV buffer -----------------------------------------


def _gqa_attention(b: DecoderGraph, x: str, layer: int) -> str:
    qkv = b.nbits(x, HIDDEN, (HEADS + 2 * KV_HEADS) * HEAD, "qkv_proj")
    cos, sin = b.rotary_caches()
    b.nodes.append(helper.make_node(
        "GroupQueryAttention", [qkv, "", "", f"past_key_values.{layer}.key", f"past_key_values.{layer}.value",
                                "seqlens_k", "total_sequence_length", cos, sin],
        [f"attn_{layer}", f"present.{layer}.key", f"present.{layer}.value"], name=f"gqa_{layer}",
        domain="com.microsoft", num_heads=HEADS, kv_num_heads=KV_HEADS, do_rotary=1, rotary_interleaved=0,
        local_window_size=-1, softcap=0.0))
    return b.nbits(f"attn_{layer}", HIDDEN, HIDDEN, "o_proj")


def _mask_to_lengths(b: DecoderGraph) -> None:
    """seqlens_k = tokens attended minus one, total_sequence_length = mask length, both int32."""
    attended = b.one("ReduceSum", ["attention_mask", b.ints("axis1", [1])], keepdims=0)
    b.nodes.append(helper.make_node("Cast", [b.one("Sub", [attended, b.constant("one", 1, np.int64)])],
                                    ["seqlens_k"], name="seqlens_k", to=TensorProto.INT32))
    length = b.one("Gather", [b.one("Shape", ["attention_mask"]), b.constant("one", 1, np.int64)], axis=0)
    b.nodes.append(helper.make_node("Cast", [length], ["total_sequence_length"], name="total_sequence_length",
                                    to=TensorProto.INT32))


def gqa_decoder(layers: int = 2) -> onnx.ModelProto:
    """GatherBlockQuantized, MatMulNBits, GroupQueryAttention with packed QKV over a KV buffer of length M."""
    b = DecoderGraph(seed=5)
    _mask_to_lengths(b)
    _decoder(b, b.quantized_embedding("input_ids"), layers, _gqa_attention)
    cache: list[str | int] = ["B", KV_HEADS, "M", HEAD]
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["B", "S"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["B", "T"])]
    outputs = [helper.make_tensor_value_info("logits", FLOAT, ["B", "S", VOCAB])]
    for layer in range(layers):
        for kind in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_key_values.{layer}.{kind}", FLOAT, cache))
            outputs.append(helper.make_tensor_value_info(f"present.{layer}.{kind}", FLOAT, None))
    return _model(b, inputs, outputs, "gqa_decoder")


def _with_caches(feeds: dict[str, np.ndarray], shape: tuple[int, ...], rng: np.random.Generator) -> dict[str, np.ndarray]:
    """``feeds`` with every layer's past key and value cache, random, of ``shape``."""
    for layer in range(2):
        for kind in ("key", "value"):
            feeds[f"past_key_values.{layer}.{kind}"] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def gqa_feeds(setting: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    batch, new, total, buffer = setting["B"], setting["S"], setting["T"], setting["M"]
    feeds = {"input_ids": rng.integers(0, VOCAB, (batch, new)).astype(np.int64),
             "attention_mask": np.ones((batch, total), dtype=np.int64)}
    return _with_caches(feeds, (batch, KV_HEADS, buffer, HEAD), rng)


GQA_SETTINGS = [{"B": 1, "S": 3, "T": 8, "M": 16}, {"B": 2, "S": 1, "T": 10, "M": 12}]


# --- RotaryEmbedding and MultiHeadAttention with a growing past --------------------------


def _mha_attention(b: DecoderGraph, x: str, layer: int) -> str:
    cos, sin = b.rotary_caches()
    q, k = (b.one("RotaryEmbedding", [b.nbits(x, HIDDEN, HIDDEN, role, zero_points=True), "position_ids", cos, sin],
                  role + "_rotated", num_heads=HEADS, interleaved=0, domain="com.microsoft")
            for role in ("q_proj", "k_proj"))
    v = b.nbits(x, HIDDEN, HIDDEN, "v_proj", zero_points=True)
    b.nodes.append(helper.make_node(
        "MultiHeadAttention", [q, k, v, "", "key_padding_mask", "", f"past_key_values.{layer}.key",
                               f"past_key_values.{layer}.value"],
        [f"attn_{layer}", f"present.{layer}.key", f"present.{layer}.value"], name=f"mha_{layer}",
        domain="com.microsoft", num_heads=HEADS, unidirectional=1))
    return b.nbits(f"attn_{layer}", HIDDEN, HIDDEN, "o_proj", zero_points=True)


def mha_decoder(layers: int = 2) -> onnx.ModelProto:
    """GatherBlockQuantized with zero points, RotaryEmbedding, MultiHeadAttention with past (B, heads, P, head)."""
    b = DecoderGraph(seed=6)
    b.nodes.append(helper.make_node("Cast", ["attention_mask"], ["key_padding_mask"], name="key_padding_mask",
                                    to=TensorProto.INT32))
    _decoder(b, b.quantized_embedding("input_ids", zero_points=True), layers, _mha_attention)
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["B", "S"]),
              helper.make_tensor_value_info("position_ids", TensorProto.INT64, ["B", "S"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["B", "T"])]
    outputs = [helper.make_tensor_value_info("logits", FLOAT, ["B", "S", VOCAB])]
    for layer in range(layers):
        for kind in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_key_values.{layer}.{kind}", FLOAT,
                                                        ["B", HEADS, "P", HEAD]))
            outputs.append(helper.make_tensor_value_info(f"present.{layer}.{kind}", FLOAT, None))
    return _model(b, inputs, outputs, "mha_decoder")


def mha_feeds(setting: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    batch, new, past = setting["B"], setting["S"], setting["P"]
    feeds = {"input_ids": rng.integers(0, VOCAB, (batch, new)).astype(np.int64),
             "position_ids": np.arange(past, past + new, dtype=np.int64)[None, :].repeat(batch, 0),
             "attention_mask": np.ones((batch, past + new), dtype=np.int64)}
    return _with_caches(feeds, (batch, HEADS, past, HEAD), rng)


MHA_SETTINGS = [{"B": 1, "S": 3, "P": 5, "T": 8}, {"B": 2, "S": 1, "P": 9, "T": 10}]


# --- GroupQueryAttention with a past separate from the new tokens ------------------------


def llm_decoder_step(hidden: int = 64, heads: int = 4, kv_heads: int = 2, vocab: int = 128) -> onnx.ModelProto:
    """One decoder layer as the generative-AI model builder writes it, with a KV cache.

    Embedding by GatherBlockQuantized-free Gather, SimplifiedLayerNormalization, MatMulNBits
    projections (4-bit, block 32), GroupQueryAttention with fused rotary embedding and
    past/present KV of a buffer separate from the new tokens, SkipSimplifiedLayerNormalization,
    a SiLU-gated MLP, and the logits. Symbols: batch B, new tokens S, past length P.
    """
    head = hidden // heads
    rng = np.random.default_rng(0)
    nodes, inits = [], []

    def weight(name: str, shape: tuple[int, ...], dtype=np.float32) -> str:
        inits.append(numpy_helper.from_array(rng.standard_normal(shape).astype(dtype) * 0.1, name))
        return name

    def nbits(name: str, x: str, k: int, n: int) -> str:
        blocks = (k + 31) // 32
        inits.append(numpy_helper.from_array(rng.integers(0, 255, (n, blocks, 16)).astype(np.uint8), name + "_q"))
        inits.append(numpy_helper.from_array((rng.random((n * blocks,)) * 0.01).astype(np.float32), name + "_s"))
        nodes.append(helper.make_node("MatMulNBits", [x, name + "_q", name + "_s"], [name], domain="com.microsoft",
                                      K=k, N=n, bits=4, block_size=32, name=name))
        return name

    nodes.append(helper.make_node("Gather", [weight("embed", (vocab, hidden)), "input_ids"], ["embedded"], axis=0))
    nodes.append(helper.make_node("SimplifiedLayerNormalization", ["embedded", weight("ln1", (hidden,))], ["normed"],
                                  axis=-1, epsilon=1e-6))
    qkv = nbits("qkv_proj", "normed", hidden, (heads + 2 * kv_heads) * head)
    cache = weight("cos_cache", (256, head // 2)), weight("sin_cache", (256, head // 2))
    inits.append(numpy_helper.from_array(np.array(256, dtype=np.int32), "max_length_unused"))
    nodes.append(helper.make_node(
        "GroupQueryAttention", [qkv, "", "", "past_key", "past_value", "seqlens_k", "total_sequence_length",
                                cache[0], cache[1]],
        ["attn", "present_key", "present_value"], domain="com.microsoft", num_heads=heads, kv_num_heads=kv_heads,
        do_rotary=1, name="gqa"))
    out = nbits("o_proj", "attn", heads * head, hidden)
    nodes.append(helper.make_node("SkipSimplifiedLayerNormalization", [out, "embedded", weight("ln2", (hidden,))],
                                  ["normed2", "", "", "residual"], domain="com.microsoft", epsilon=1e-6))
    gate = nbits("gate_proj", "normed2", hidden, 2 * hidden)
    up = nbits("up_proj", "normed2", hidden, 2 * hidden)
    nodes.append(helper.make_node("Sigmoid", [gate], ["gate_sig"]))
    nodes.append(helper.make_node("Mul", [gate, "gate_sig"], ["silu"]))
    nodes.append(helper.make_node("Mul", ["silu", up], ["mlp"]))
    down = nbits("down_proj", "mlp", 2 * hidden, hidden)
    nodes.append(helper.make_node("Add", [down, "residual"], ["block_out"]))
    nodes.append(helper.make_node("SimplifiedLayerNormalization", ["block_out", weight("ln_f", (hidden,))],
                                  ["final"], axis=-1, epsilon=1e-6))
    logits = nbits("lm_head", "final", hidden, vocab)
    nodes.append(helper.make_node("Identity", [logits], ["logits"]))
    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["B", "S"]),
        helper.make_tensor_value_info("past_key", TensorProto.FLOAT, ["B", kv_heads, "P", head]),
        helper.make_tensor_value_info("past_value", TensorProto.FLOAT, ["B", kv_heads, "P", head]),
        helper.make_tensor_value_info("seqlens_k", TensorProto.INT32, ["B"]),
        helper.make_tensor_value_info("total_sequence_length", TensorProto.INT32, []),
    ]
    outputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, None)
               for name in ("logits", "present_key", "present_value")]
    graph = helper.make_graph(nodes, "decoder_step", inputs, outputs, inits)
    return helper.make_model(graph, ir_version=IR_VERSION, opset_imports=[helper.make_opsetid("", 21),
                                                                           helper.make_opsetid("com.microsoft", 1)])


def decoder_feeds(setting: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    """A growing cache (total = past + new), or with "T" a past buffer that already holds the new
    tokens' places (total T at most the buffer's length), as a shared KV buffer is fed."""
    batch, new, past = setting["B"], setting["S"], setting["P"]
    total = setting.get("T", past + new)
    return {
        "input_ids": rng.integers(0, 128, (batch, new)).astype(np.int64),
        "past_key": rng.standard_normal((batch, 2, past, 16)).astype(np.float32),
        "past_value": rng.standard_normal((batch, 2, past, 16)).astype(np.float32),
        "seqlens_k": np.full((batch,), total - 1, dtype=np.int32),
        "total_sequence_length": np.array(total, dtype=np.int32),
    }


#: The model takes total_sequence_length as an input: the same graph serves a growing cache and
#: a shared buffer, so its present length (P+S in one, P in the other) is not a function of the
#: input shapes, and a rule that states P+S is contradicted by the third setting.
DECODER_SETTINGS = [{"B": 1, "S": 3, "P": 5}, {"B": 2, "S": 1, "P": 9}, {"B": 1, "S": 1, "P": 9, "T": 5}]
