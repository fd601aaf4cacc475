"""The other shape-inference engines opspec is scored beside, each called as its users call it.

onnxruntime's symbolic shape inference saves a temporary model (with external data) into the
working directory when it gives up on a node; it runs here in a temporary directory, so a
test or benchmark run leaves nothing behind in the checkout.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from typing import Callable, Iterator

import onnx


@contextlib.contextmanager
def _scratch_directory() -> Iterator[None]:
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        try:
            yield
        finally:
            os.chdir(here)


def onnx_inference(model: onnx.ModelProto) -> onnx.ModelProto:
    return onnx.shape_inference.infer_shapes(model, data_prop=True)


def onnxruntime_symbolic(model: onnx.ModelProto) -> onnx.ModelProto:
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

    with _scratch_directory():
        return SymbolicShapeInference.infer_shapes(model, auto_merge=True)


def onnx_shape_inference(model: onnx.ModelProto) -> onnx.ModelProto:
    import onnx_ir as ir
    from onnx_shape_inference import infer_symbolic_shapes

    return ir.to_proto(infer_symbolic_shapes(ir.from_proto(model), warn_on_missing=False))


#: The peers every environment of the test suite has (onnx-shape-inference is a bench dependency).
TEST_PEERS: dict[str, Callable[[onnx.ModelProto], onnx.ModelProto]] = {
    "onnx": onnx_inference, "onnxruntime symbolic": onnxruntime_symbolic,
}
