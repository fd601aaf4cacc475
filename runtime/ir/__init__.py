"""ONNX-compatible protobuf IR: message classes and model loading/saving.

The message classes live in ``opspec.generated.opspec_ir_pb2`` (compiled from
``opspec_ir.proto`` in this folder) and share ONNX's wire format, so models
move between them and ``onnx`` by plain serialization.
"""
from opspec.runtime.ir.model_io import (
    LoadedModel,
    ModelLoadError,
    ModelSource,
    SourceKind,
    is_onnx_model,
    load_model,
    save_model,
)

__all__ = ["LoadedModel", "ModelLoadError", "ModelSource", "SourceKind", "is_onnx_model", "load_model",
           "save_model"]
