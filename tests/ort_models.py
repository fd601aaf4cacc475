"""Models as onnxruntime's own tools write them, built from graphs made with onnx.helper.

Each builder returns ``(model, settings)``: an ``onnx.ModelProto`` with symbolic input dims
and the concrete symbol values to run it at. The tools used are onnxruntime's: the
transformer optimizer (``optimize_model``), the quantizers (``quantize_dynamic``,
``quantize_static`` in QOperator and QDQ form, the 4-bit ``MatMulNBitsQuantizer``) and a
session that saves its optimized graph (extended and all levels). Where a tool needs a model
source it cannot be given here (the generative-AI model builder reads Hugging Face weights),
the graph is written as that tool writes it, op for op.
"""
from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import models

#: onnxruntime 1.31 reads models up to this IR version.
IR_VERSION = 10
Settings = list[dict[str, int]]


def _ir(model: onnx.ModelProto) -> onnx.ModelProto:
    model.ir_version = IR_VERSION
    return model


def encoder() -> onnx.ModelProto:
    return _ir(models.transformer(layers=2))


def cnn() -> onnx.ModelProto:
    return _ir(models.small_cnn())


ENCODER_SETTINGS: Settings = [{"B": 2, "S": 7}, {"B": 1, "S": 12}]
CNN_SETTINGS: Settings = [{"N": 2}, {"N": 1}]


def _quiet() -> None:
    for name in ("onnxruntime", "root"):
        logging.getLogger(name).setLevel(logging.ERROR)


def optimized_encoder(saved: bool = False) -> onnx.ModelProto:
    """The transformer optimizer at opt_level 0: SkipLayerNormalization.

    Its model object uses com.microsoft without importing it (onnxruntime runs it so);
    ``saved`` gives the model as ``save_model_to_file`` writes it, with the import added.
    """
    from onnxruntime.transformers.optimizer import optimize_model

    _quiet()
    with tempfile.TemporaryDirectory() as folder:
        path, target = Path(folder, "encoder.onnx"), Path(folder, "optimized.onnx")
        onnx.save(encoder(), path)
        optimized = optimize_model(str(path), model_type="bert", num_heads=4, hidden_size=64, opt_level=0)
        if not saved:
            return optimized.model
        optimized.save_model_to_file(str(target))
        return onnx.load(target)


def dynamic_quantized(source: Callable[[], onnx.ModelProto]) -> onnx.ModelProto:
    """``quantize_dynamic``: DynamicQuantizeLinear and MatMulInteger around every weight MatMul."""
    from onnxruntime.quantization import quantize_dynamic

    _quiet()
    with tempfile.TemporaryDirectory() as folder:
        source_path, target = Path(folder, "in.onnx"), Path(folder, "out.onnx")
        onnx.save(source(), source_path)
        quantize_dynamic(source_path, target, extra_options={"DefaultTensorType": TensorProto.FLOAT})
        return onnx.load(target)


def static_quantized_cnn(qdq: bool) -> onnx.ModelProto:
    """``quantize_static`` on the CNN, in QOperator form (QLinearConv, ...) or QDQ form."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_static

    class Images(CalibrationDataReader):
        def __init__(self) -> None:
            rng = np.random.default_rng(0)
            self.batches = iter([{"image": rng.random((1, 3, 32, 32), dtype=np.float32)} for _ in range(2)])

        def get_next(self):  # noqa: ANN201 - onnxruntime's interface
            return next(self.batches, None)

    _quiet()
    with tempfile.TemporaryDirectory() as folder:
        source_path, target = Path(folder, "in.onnx"), Path(folder, "out.onnx")
        onnx.save(cnn(), source_path)
        quantize_static(source_path, target, Images(),
                        quant_format=QuantFormat.QDQ if qdq else QuantFormat.QOperator)
        return onnx.load(target)


def nbits_encoder() -> onnx.ModelProto:
    """The 4-bit weight quantizer: MatMulNBits for every MatMul with a constant weight."""
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    _quiet()
    quantizer = MatMulNBitsQuantizer(encoder(), block_size=32, is_symmetric=True)
    quantizer.process()
    return quantizer.model.model


def session_optimized(source: Callable[[], onnx.ModelProto], level: str) -> onnx.ModelProto:
    """The graph an onnxruntime session saves after optimizing at ``level`` ("extended" or "all")."""
    import onnxruntime

    levels = {"extended": onnxruntime.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
              "all": onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL}
    with tempfile.TemporaryDirectory() as folder:
        source_path, target = Path(folder, "in.onnx"), Path(folder, "out.onnx")
        onnx.save(source(), source_path)
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = levels[level]
        options.optimized_model_filepath = str(target)
        options.log_severity_level = 3
        onnxruntime.InferenceSession(str(source_path), options, providers=["CPUExecutionProvider"])
        return onnx.load(target)


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


def _decoder_feeds(setting: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    batch, new, past = setting["B"], setting["S"], setting["P"]
    return {
        "input_ids": rng.integers(0, 128, (batch, new)).astype(np.int64),
        "past_key": rng.standard_normal((batch, 2, past, 16)).astype(np.float32),
        "past_value": rng.standard_normal((batch, 2, past, 16)).astype(np.float32),
        "seqlens_k": np.full((batch,), past + new - 1, dtype=np.int32),
        "total_sequence_length": np.array(past + new, dtype=np.int32),
    }


DECODER_SETTINGS: Settings = [{"B": 1, "S": 3, "P": 5}, {"B": 2, "S": 1, "P": 9}]


def _token_feeds(setting: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"tokens": rng.integers(0, 1000, (setting["B"], setting["S"])).astype(np.int64)}


def _image_feeds(setting: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"image": rng.random((setting["N"], 3, 32, 32), dtype=np.float32)}


Feeds = Callable[[dict[str, int], np.random.Generator], dict[str, np.ndarray]]


def catalogue() -> dict[str, tuple[Callable[[], onnx.ModelProto], Settings, Feeds]]:
    """Every model: its builder, the symbol settings to run it at, and how to make its inputs."""
    encoders = (ENCODER_SETTINGS, _token_feeds)
    cnns = (CNN_SETTINGS, _image_feeds)
    return {
        "transformer optimizer (SkipLayerNormalization)": (optimized_encoder, *encoders),
        "quantize_dynamic encoder": (lambda: dynamic_quantized(encoder), *encoders),
        "quantize_dynamic after the optimizer": (lambda: dynamic_quantized(lambda: optimized_encoder(saved=True)),
                                                 *encoders),
        "MatMulNBits 4-bit encoder": (nbits_encoder, *encoders),
        "quantize_static QOperator CNN": (lambda: static_quantized_cnn(qdq=False), *cnns),
        "quantize_static QDQ CNN": (lambda: static_quantized_cnn(qdq=True), *cnns),
        "session extended: CNN": (lambda: session_optimized(cnn, "extended"), *cnns),
        "session all: CNN (NCHWc)": (lambda: session_optimized(cnn, "all"), *cnns),
        "session extended: encoder": (lambda: session_optimized(encoder, "extended"), *encoders),
        "session all: encoder": (lambda: session_optimized(encoder, "all"), *encoders),
        "session all: QOperator CNN": (lambda: session_optimized(lambda: static_quantized_cnn(qdq=False), "all"),
                                       *cnns),
        "session all: quantize_dynamic encoder": (lambda: session_optimized(lambda: dynamic_quantized(encoder), "all"),
                                                  *encoders),
        "session all: MatMulNBits encoder": (lambda: session_optimized(nbits_encoder, "all"), *encoders),
        "LLM decoder step (GroupQueryAttention, MatMulNBits)": (llm_decoder_step, DECODER_SETTINGS, _decoder_feeds),
    }
