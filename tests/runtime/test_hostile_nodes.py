"""Invalid nodes get node errors, never a Python exception: attributes of the wrong kind, huge
declared sizes, nodes without outputs, dim names that are not UTF-8."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import opspec

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _model(nodes, inputs, outputs=(), initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_value_info(o, helper.TypeProto()) for o in outputs],
                              list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def test_an_attribute_of_the_wrong_kind_is_a_node_error():
    node = helper.make_node("TopK", ["x", "k"], ["v", "i"], axis="last", name="topk")
    k = numpy_helper.from_array(np.array([2], dtype=np.int64), "k")
    result = opspec.infer(_model([node], [helper.make_tensor_value_info("x", F, [3, 4])], ["v", "i"], [k]))
    (error,) = result.errors
    assert "node 'topk'" in str(error) and "attribute 'axis' must be an int, got 'last'" in str(error)


def test_a_huge_declared_length_is_not_built_as_data():
    shape = numpy_helper.from_array(np.array([1, 2], dtype=np.int64), "known")
    nodes = [helper.make_node("Concat", ["known", "huge"], ["joined"], axis=0)]
    model = _model(nodes, [helper.make_tensor_value_info("huge", I64, [2**40])], ["joined"], [shape])
    result = opspec.infer(model, data_prop=True)
    assert result.errors == [] and result.values["joined"][0].shape == (2**40 + 2,)


def test_a_node_without_outputs_is_inferred_without_failing():
    node = helper.make_node("CastLike", ["x", "y"], [])
    result = opspec.infer(_model([node], [helper.make_tensor_value_info("x", F, [2]),
                                          helper.make_tensor_value_info("y", I64, [2])]))
    assert result.errors == []


def test_dim_names_that_are_not_utf8_do_not_stop_fresh_names():
    nodes = [helper.make_node("NonZero", ["x"], ["where"])]
    model = _model(nodes, [helper.make_tensor_value_info("x", F, ["QQQQ", 3])], ["where"])
    raw = model.SerializeToString().replace(b"QQQQ", b"\xff\xfe\xfd\xfc")
    inferred = opspec.infer(raw)
    assert inferred.errors == []
    assert inferred.values["where"][0].shape[0] == 2


def test_a_conv_transpose_of_too_low_rank_is_a_node_error():
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up")
    result = opspec.infer(_model([node], [helper.make_tensor_value_info("x", F, [2]),
                                          helper.make_tensor_value_info("w", F, [2])], ["y"]))
    (error,) = result.errors
    assert "need rank 3 or more" in str(error)


def test_a_tensor_attribute_of_another_kind_is_a_node_error():
    node = helper.make_node("LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml", values_tensor=5, keys_int64s=[1])
    model = helper.make_model(helper.make_graph([node], "g", [helper.make_tensor_value_info("x", I64, [3])],
                                                [helper.make_value_info("y", helper.TypeProto())]),
                              opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 4)])
    (error,) = opspec.infer(model).errors
    assert "attribute 'values_tensor' must be a tensor, got 5" in str(error)
