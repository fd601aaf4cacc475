"""A graph input dim with neither a value nor a name (skl2onnx writes its batch dim so) gets a
fresh symbol of its own while inferring: every value along it shares that symbol, no other dim
equals it, and the input's own declaration is left as written."""
from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import opspec
from opspec.runtime.contract import TensorType
from opspec.runtime.contract.values import LONG_RANK
from opspec.runtime.inference import graph
from opspec.runtime.inference.write_types import TypeEncoder
from opspec.runtime.shape import Sym

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _classifier() -> onnx.ModelProto:
    """Shaped like skl2onnx's linear classifier: X [?, 4] anonymous -> scores, label and probabilities;
    a second input Z [?, ?] anonymous too, and one named dim N beside them."""
    anonymous = helper.make_tensor_value_info("X", F, [None, 4])
    other = helper.make_tensor_value_info("Z", F, [None, None])
    named = helper.make_tensor_value_info("Y", F, ["N", 3])
    nodes = [helper.make_node("MatMul", ["X", "coef"], ["scores"]),
             helper.make_node("Add", ["scores", "intercept"], ["raw"]),
             helper.make_node("ArgMax", ["raw"], ["label"], axis=1, keepdims=0),
             helper.make_node("Softmax", ["raw"], ["probabilities"], axis=1),
             helper.make_node("Relu", ["Z"], ["z_out"]),
             helper.make_node("Neg", ["Y"], ["y_out"])]
    rng = np.random.default_rng(0)
    graph = helper.make_graph(
        nodes, "linear_classifier", [anonymous, other, named],
        [helper.make_tensor_value_info("label", I64, [None]), helper.make_tensor_value_info("probabilities", F, [None, 3]),
         helper.make_tensor_value_info("z_out", F, None), helper.make_tensor_value_info("y_out", F, None)],
        [numpy_helper.from_array(rng.standard_normal((4, 3)).astype(np.float32), "coef"),
         numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "intercept")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_every_output_along_an_anonymous_input_dim_shares_one_fresh_symbol():
    model = _classifier()
    written = model.SerializeToString()
    result = opspec.infer(model)
    assert model.SerializeToString() == written and result.errors == []
    types = {name: value for name, (value, _) in result.values.items()}
    batch = types["X"].shape[0]
    assert type(batch) is Sym and types["X"] == TensorType(F, (batch, 4))
    assert types["label"] == TensorType(I64, (batch,))
    assert types["probabilities"] == TensorType(F, (batch, 3))
    rows, columns = types["z_out"].shape
    assert len({batch, rows, columns, Sym("N")}) == 4  # distinct from each other and from every named dim
    assert types["y_out"] == TensorType(F, (Sym("N"), 3))
    # onnxruntime agrees at any batch size: the outputs share the input's first dim
    session = ort.InferenceSession(written, providers=["CPUExecutionProvider"])
    for size in (1, 5):
        label, probabilities, _, _ = session.run(None, {"X": np.ones((size, 4), np.float32),
                                                       "Z": np.ones((2, 7), np.float32),
                                                       "Y": np.ones((3, 3), np.float32)})
        assert label.shape == (size,) and probabilities.shape == (size, 3)


def test_the_input_keeps_its_declaration_and_the_values_along_it_get_the_fresh_symbols_name():
    inferred = opspec.infer(_classifier()).model
    first = inferred.graph.input[0].type.tensor_type.shape.dim[0]
    assert not first.HasField("dim_value") and not first.HasField("dim_param")  # left as written
    written = {value.name: [d.dim_param or d.dim_value for d in value.type.tensor_type.shape.dim]
               for value in (*inferred.graph.output, *inferred.graph.value_info)}
    symbol = written["label"][0]
    assert symbol.startswith("unk__") and written["probabilities"] == [symbol, 3] and written["raw"] == [symbol, 3]
    onnx.checker.check_model(inferred, full_check=True)


def test_a_name_the_graph_declares_along_an_unnamed_input_dim_is_kept():
    model = _classifier()
    model.graph.value_info.append(helper.make_tensor_value_info("raw", F, ["batch", 3]))
    types = {name: value for name, (value, _) in opspec.infer(model).values.items()}
    assert types["raw"] == TensorType(F, (Sym("batch"), 3))


def _long_inputs_model(kinds: list[Any]) -> onnx.ModelProto:
    """Two inputs of one long type whose dims cycle through ``kinds``, each through a Relu (which
    hands the type on), and the first added to itself (which looks at its dims)."""
    dims = [kinds[axis % len(kinds)] for axis in range(LONG_RANK + 500)]
    inputs = [helper.make_tensor_value_info(name, F, dims) for name in ("x", "x2")]
    nodes = [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Relu", ["x2"], ["y2"]),
             helper.make_node("Add", ["x", "x"], ["s"])]
    outputs = [helper.make_tensor_value_info(name, F, None) for name in ("y", "y2", "s")]
    return helper.make_model(helper.make_graph(nodes, "long", inputs, outputs), opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("kinds", [
    [None, "unk__1", 5, "N", None, 300, "d"],  # every dim plain: the input stays unread, written from its bytes
    [None, "unk__1", 5, "y" * 40, None, 2**40],  # a long name and a big number: the input is read first
], ids=["kept-as-bytes", "read"])
def test_a_long_input_with_unnamed_dims_names_each_distinctly_and_writes_them_as_a_writer_does(
        kinds: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    model = _long_inputs_model(kinds)
    written = model.SerializeToString()
    inferred = opspec.infer_shapes(model)
    assert model.SerializeToString() == written
    assert inferred.graph.input[0].type == model.graph.input[0].type  # the declaration is left as written
    outputs = {value.name: value.type for value in inferred.graph.output}
    declared = [dim.dim_value or dim.dim_param or None for dim in model.graph.input[0].type.tensor_type.shape.dim]
    unnamed = [axis for axis, dim in enumerate(declared) if dim is None]
    # fresh names in input and axis order, skipping the one the model uses
    fresh = [f"unk__{number}" for number in range(2 * len(unnamed) + 1) if number != 1]
    for name, names in (("y", fresh[:len(unnamed)]), ("y2", fresh[len(unnamed):])):
        expected = list(declared)
        for axis, fresh_name in zip(unnamed, names):
            expected[axis] = fresh_name
        # what writing the dims one by one gives, byte for byte
        assert outputs[name].SerializeToString() == helper.make_tensor_type_proto(F, expected).SerializeToString(), name
    assert outputs["s"] == outputs["y"]  # the dims a node looked at are the same symbols
    report = opspec.infer(model).values
    shape = report["y"][0].shape
    assert len({shape[axis] for axis in unnamed} | {shape[axis] for axis in (1, 2, 3)}) == len(unnamed) + 3
    assert TypeEncoder()(TensorType(F, tuple(shape))) == outputs["y"].SerializeToString()
    # reading the inputs at once (no bytes kept) gives the same model
    monkeypatch.setattr(graph, "deferred_types", lambda reader, value_infos, keys: reader.value_infos(value_infos, keys))
    assert opspec.infer_shapes(model).SerializeToString() == inferred.SerializeToString()
