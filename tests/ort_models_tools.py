"""onnxruntime's tools, called as their users call them, on models built by the ``ort_models_*`` modules.

Each takes a builder (or a model) and returns the model the tool writes: the transformer
optimizer's Python fusions, ``quantize_dynamic``, ``quantize_static`` (QOperator or QDQ), the
4-bit ``MatMulNBitsQuantizer``, and the graph a session saves after optimizing it.
"""
from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Callable

import numpy as np
import onnx
from onnx import TensorProto

Feed = dict[str, np.ndarray]


def quiet() -> None:
    for name in ("onnxruntime", "root"):
        logging.getLogger(name).setLevel(logging.ERROR)


def transformer_optimized(source: onnx.ModelProto, model_type: str, heads: int = 4, hidden: int = 64,
                          options: dict[str, object] | None = None) -> onnx.ModelProto:
    """``source`` through onnxruntime's transformer optimizer (its Python fusions, opt_level 0), as saved.

    ``options`` set attributes of the optimizer's ``FusionOptions`` (e.g. ``use_multi_head_attention``).
    """
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model

    quiet()
    fusion_options = FusionOptions(model_type)
    for key, value in (options or {}).items():
        setattr(fusion_options, key, value)
    with tempfile.TemporaryDirectory() as folder:
        path, target = Path(folder, "model.onnx"), Path(folder, "optimized.onnx")
        onnx.save(source, path)
        optimized = optimize_model(str(path), model_type=model_type, num_heads=heads, hidden_size=hidden,
                                   optimization_options=fusion_options, opt_level=0)
        optimized.save_model_to_file(str(target))
        return onnx.load(target)


def dynamic_quantized(source: Callable[[], onnx.ModelProto]) -> onnx.ModelProto:
    """``quantize_dynamic``: DynamicQuantizeLinear and MatMulInteger around every weight MatMul."""
    from onnxruntime.quantization import quantize_dynamic

    quiet()
    with tempfile.TemporaryDirectory() as folder:
        source_path, target = Path(folder, "in.onnx"), Path(folder, "out.onnx")
        onnx.save(source(), source_path)
        quantize_dynamic(source_path, target, extra_options={"DefaultTensorType": TensorProto.FLOAT})
        return onnx.load(target)


def static_quantized(source: Callable[[], onnx.ModelProto], calibration: Callable[[], list[Feed]],
                     qdq: bool = False) -> onnx.ModelProto:
    """``quantize_static`` calibrated on ``calibration()``, in QOperator form (QLinearConv, ...) or QDQ form."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_static

    class Batches(CalibrationDataReader):
        def __init__(self) -> None:
            self.batches = iter(calibration())

        def get_next(self):  # noqa: ANN201 - onnxruntime's interface
            return next(self.batches, None)

    quiet()
    with tempfile.TemporaryDirectory() as folder:
        source_path, target = Path(folder, "in.onnx"), Path(folder, "out.onnx")
        onnx.save(source(), source_path)
        quantize_static(source_path, target, Batches(),
                        quant_format=QuantFormat.QDQ if qdq else QuantFormat.QOperator)
        return onnx.load(target)


def nbits_quantized(source: Callable[[], onnx.ModelProto], qdq: bool = False) -> onnx.ModelProto:
    """The 4-bit weight quantizer as for LLMs: blocks of 32, accuracy level 4.

    QOperator form: MatMulNBits, and GatherBlockQuantized for the embedding table (quantized
    along hidden, asymmetric). QDQ form (MatMul weights only, symmetric): blockwise int4
    DequantizeLinear feeding each MatMul.
    """
    from onnxruntime.quantization import QuantFormat
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    quiet()
    if qdq:
        quantizer = MatMulNBitsQuantizer(source(), block_size=32, is_symmetric=True, quant_format=QuantFormat.QDQ)
    else:
        quantizer = MatMulNBitsQuantizer(source(), block_size=32, is_symmetric=False, accuracy_level=4,
                                         op_types_to_quantize=("MatMul", "Gather"),
                                         quant_axes=(("MatMul", 0), ("Gather", 1)))
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
