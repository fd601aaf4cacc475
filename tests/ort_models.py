"""Models as onnxruntime's own tools write them, built from graphs made with onnx.helper.

Each catalogue entry gives a builder returning an ``onnx.ModelProto`` with symbolic input dims,
the concrete symbol values to run it at, and how to make its inputs. The tools are
onnxruntime's (``ort_models_tools``): the transformer optimizer, ``quantize_dynamic``,
``quantize_static`` in QOperator and QDQ form, the 4-bit ``MatMulNBitsQuantizer`` and a session
that saves its optimized graph (extended and all levels). The source graphs are written as
torch.onnx exports them, so that the tools' fusions match: BERT and GPT-2 in
``ort_models_transformers``, LLaMA in ``ort_models_llama``, a CNN, a ViT and an LSTM in
``ort_models_vision``. Where a tool needs a model source it cannot be given here (the
generative-AI model builder reads Hugging Face weights), the graph is written as that tool
writes it, op for op (``ort_models_llm``).
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Callable

import numpy as np
import onnx

import models
import ort_models_llama as llama
import ort_models_llm as llm
import ort_models_transformers as transformers
import ort_models_vision as vision
from ort_models_tools import (
    Feed,
    dynamic_quantized,
    nbits_quantized,
    quiet,
    session_optimized,
    static_quantized,
    transformer_optimized,
)

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


def optimized_encoder(saved: bool = False) -> onnx.ModelProto:
    """The transformer optimizer at opt_level 0: SkipLayerNormalization.

    Its model object uses com.microsoft without importing it (onnxruntime runs it so);
    ``saved`` gives the model as ``save_model_to_file`` writes it, with the import added.
    """
    from onnxruntime.transformers.optimizer import optimize_model

    quiet()
    with tempfile.TemporaryDirectory() as folder:
        path, target = Path(folder, "encoder.onnx"), Path(folder, "optimized.onnx")
        onnx.save(encoder(), path)
        optimized = optimize_model(str(path), model_type="bert", num_heads=4, hidden_size=64, opt_level=0)
        if not saved:
            return optimized.model
        optimized.save_model_to_file(str(target))
        return onnx.load(target)


def _cnn_images() -> list[Feed]:
    rng = np.random.default_rng(0)
    return [{"image": rng.random((1, 3, 32, 32), dtype=np.float32)} for _ in range(2)]


def static_quantized_cnn(qdq: bool) -> onnx.ModelProto:
    """``quantize_static`` on the CNN, in QOperator form (QLinearConv, ...) or QDQ form."""
    return static_quantized(cnn, _cnn_images, qdq)


def nbits_encoder() -> onnx.ModelProto:
    """The 4-bit weight quantizer: MatMulNBits for every MatMul with a constant weight."""
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    quiet()
    quantizer = MatMulNBitsQuantizer(encoder(), block_size=32, is_symmetric=True)
    quantizer.process()
    return quantizer.model.model


def _token_feeds(setting: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"tokens": rng.integers(0, 1000, (setting["B"], setting["S"])).astype(np.int64)}


def _image_feeds(setting: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"image": rng.random((setting["N"], 3, 32, 32), dtype=np.float32)}


Feeds = Callable[[dict[str, int], np.random.Generator], dict[str, np.ndarray]]


def bert_optimized(**options: object) -> onnx.ModelProto:
    return transformer_optimized(transformers.bert(), "bert", options=options)


def gpt2_optimized() -> onnx.ModelProto:
    return transformer_optimized(transformers.gpt2(), "gpt2")


def llama_optimized() -> onnx.ModelProto:
    return transformer_optimized(llama.llama(), "gpt2")


def vit_optimized() -> onnx.ModelProto:
    return transformer_optimized(vision.vit(), "vit")


def _bert_calibration() -> list[Feed]:
    return [transformers.bert_feeds({"B": 1, "S": 8}, np.random.default_rng(seed)) for seed in range(2)]


Entry = tuple[Callable[[], onnx.ModelProto], Settings, Feeds]


def _transformer_models() -> dict[str, Entry]:
    """BERT and GPT-2 through the transformer optimizer, the quantizers and sessions."""
    from onnxruntime.transformers.fusion_options import AttentionMaskFormat

    berts = (transformers.BERT_SETTINGS, transformers.bert_feeds)
    gpts = (transformers.GPT2_SETTINGS, transformers.gpt2_feeds)
    tokens = (transformers.GPT2_NO_PAST_SETTINGS, transformers.gpt2_tokens)
    return {
        "BERT export": (transformers.bert, *berts),
        "BERT export, session extended (BiasGelu, FusedGemm, FusedMatMul)": (
            lambda: session_optimized(transformers.bert, "extended"), *berts),
        "BERT export, quantize_dynamic, session extended (MatMulIntegerToFloat, DynamicQuantizeMatMul)": (
            lambda: session_optimized(lambda: dynamic_quantized(transformers.bert), "extended"), *berts),
        "BERT optimized (EmbedLayerNormalization, Attention with mask index, BiasGelu)": (bert_optimized, *berts),
        "BERT optimized (Attention with a raw 2-D mask)": (
            lambda: bert_optimized(attention_mask_format=AttentionMaskFormat.AttentionMask), *berts),
        "BERT optimized (MultiHeadAttention, raw mask)": (
            lambda: bert_optimized(use_multi_head_attention=True,
                                   attention_mask_format=AttentionMaskFormat.AttentionMask), *berts),
        "BERT optimized, quantize_dynamic (QAttention, QEmbedLayerNormalization)": (
            lambda: dynamic_quantized(bert_optimized), *berts),
        "BERT optimized, quantize_dynamic, session all (DynamicQuantizeMatMul)": (
            lambda: session_optimized(lambda: dynamic_quantized(bert_optimized), "all"), *berts),
        "BERT quantize_static QOperator (QLinearMatMul, QLinearSoftmax, QGemm)": (
            lambda: static_quantized(transformers.bert, _bert_calibration), *berts),
        "BERT quantize_static QDQ, session extended (QLinearMatMul, QLinearAdd, QLinearSoftmax, QGemm)": (
            lambda: session_optimized(lambda: static_quantized(transformers.bert, _bert_calibration, qdq=True),
                                      "extended"), *berts),
        "GPT-2 export with past (causal mask sliced from its buffer)": (transformers.gpt2, *gpts),
        "GPT-2 optimized (Attention with past, FastGelu, EmbedLayerNormalization)": (gpt2_optimized, *gpts),
        "GPT-2 export without past": (transformers.gpt2_no_past, *tokens),
        "GPT-2 without past optimized (unidirectional Attention without mask)": (
            lambda: transformer_optimized(transformers.gpt2_no_past(), "gpt2"), *tokens),
        "GPT-2 optimized, quantize_dynamic (QAttention with past)": (
            lambda: dynamic_quantized(gpt2_optimized), *gpts),
        "GPT-2 optimized, quantize_dynamic, session all": (
            lambda: session_optimized(lambda: dynamic_quantized(gpt2_optimized), "all"), *gpts),
    }


def _llm_models() -> dict[str, Entry]:
    """LLaMA through the optimizer and the 4-bit quantizer; decoders as the generative-AI builder writes them."""
    llamas = (llama.LLAMA_SETTINGS, llama.llama_feeds)
    return {
        "LLaMA export with past": (llama.llama, *llamas),
        "LLaMA export, quantize_dynamic, session extended (MatMulIntegerToFloat, QuickGelu)": (
            lambda: session_optimized(lambda: dynamic_quantized(llama.llama), "extended"), *llamas),
        "LLaMA optimized (RotaryEmbedding, MultiHeadAttention with past, SkipSimplifiedLayerNormalization)": (
            llama_optimized, *llamas),
        "LLaMA optimized, 4-bit (MatMulNBits, GatherBlockQuantized)": (
            lambda: nbits_quantized(llama_optimized), *llamas),
        "LLaMA optimized, 4-bit, session all": (
            lambda: session_optimized(lambda: nbits_quantized(llama_optimized), "all"), *llamas),
        "LLaMA optimized, 4-bit QDQ (blockwise int4 DequantizeLinear)": (
            lambda: nbits_quantized(llama_optimized, qdq=True), *llamas),
        "LLaMA optimized, 4-bit QDQ, session extended (DequantizeLinear and MatMul to MatMulNBits)": (
            lambda: session_optimized(lambda: nbits_quantized(llama_optimized, qdq=True), "extended"), *llamas),
        "LLM decoder step (GroupQueryAttention, MatMulNBits)": (llm.llm_decoder_step, llm.DECODER_SETTINGS,
                                                                llm.decoder_feeds),
        "GenAI decoder (GatherBlockQuantized, GroupQueryAttention over a shared KV buffer)": (
            llm.gqa_decoder, llm.GQA_SETTINGS, llm.gqa_feeds),
        "GenAI decoder (GroupQueryAttention), session all (QuickGelu)": (
            lambda: session_optimized(llm.gqa_decoder, "all"), llm.GQA_SETTINGS, llm.gqa_feeds),
        "GenAI decoder (RotaryEmbedding, MultiHeadAttention with past)": (
            llm.mha_decoder, llm.MHA_SETTINGS, llm.mha_feeds),
    }


def _vision_and_recurrent_models() -> dict[str, Entry]:
    """The branching CNN through quantize_static and sessions, ViT through the transformer optimizer, the LSTM
    tagger through quantize_dynamic."""
    cnns = (vision.CNN_SETTINGS, vision.image_feeds)
    lstms = (vision.LSTM_SETTINGS, vision.token_feeds)

    def qoperator() -> onnx.ModelProto:
        return static_quantized(vision.branching_cnn, vision.calibration_images)

    def qdq() -> onnx.ModelProto:
        return static_quantized(vision.branching_cnn, vision.calibration_images, qdq=True)

    return {
        "branching CNN, quantize_static QOperator (QLinearConcat, QLinearSigmoid, QLinearLeakyRelu)": (
            qoperator, *cnns),
        "branching CNN, quantize_static QDQ": (qdq, *cnns),
        "branching CNN, session extended (FusedConv, QuickGelu)": (
            lambda: session_optimized(vision.branching_cnn, "extended"), *cnns),
        "branching CNN, session all (NCHWc Conv with fused Sum, ReorderOutput)": (
            lambda: session_optimized(vision.branching_cnn, "all"), *cnns),
        "branching CNN, QOperator, session all (NHWC QLinearConv, NhwcMaxPool)": (
            lambda: session_optimized(qoperator, "all"), *cnns),
        "branching CNN, QDQ, session all (QDQ groups to QLinearConcat, QLinearLeakyRelu, QGemm)": (
            lambda: session_optimized(qdq, "all"), *cnns),
        "ViT optimized (Attention without mask, pre-norm SkipLayerNormalization, BiasGelu)": (vit_optimized, *cnns),
        "ViT optimized, quantize_dynamic (QAttention without mask)": (lambda: dynamic_quantized(vit_optimized), *cnns),
        "LSTM tagger, quantize_dynamic (DynamicQuantizeLSTM)": (lambda: dynamic_quantized(vision.lstm_tagger), *lstms),
        "LSTM tagger, quantize_dynamic, session all (DynamicQuantizeMatMul)": (
            lambda: session_optimized(lambda: dynamic_quantized(vision.lstm_tagger), "all"), *lstms),
    }


def catalogue() -> dict[str, Entry]:
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
        **_transformer_models(),
        **_vision_and_recurrent_models(),
        **_llm_models(),
    }
