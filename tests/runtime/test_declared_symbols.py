"""Declared dims named by symbols no graph input carries yield to what inference knows."""
from __future__ import annotations

from onnx import TensorProto, helper

import opspec


def _dims(model, name):
    for value in (*model.graph.value_info, *model.graph.output):
        if value.name == name:
            return [d.dim_param or d.dim_value for d in value.type.tensor_type.shape.dim]
    raise KeyError(name)


def _model(value_info_dims, output_dims):
    """x (B, S) -> Relu -> y -> Neg -> z, with y and z declared as given."""
    nodes = [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Neg", ["y"], ["z"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "S"])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, output_dims)],
        value_info=[helper.make_tensor_value_info("y", TensorProto.FLOAT, value_info_dims)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def test_symbols_an_earlier_run_left_behind_yield_to_the_inputs_symbols():
    # onnx's inference, run by a quantizer before, wrote fresh symbols into value_info and outputs
    result = opspec.infer_shapes(_model(["unk__1", "unk__2"], ["unk__1", "unk__2"]))
    assert _dims(result, "y") == ["B", "S"]
    assert _dims(result, "z") == ["B", "S"]


def test_a_declared_symbol_of_the_inputs_is_kept():
    # S also names the input's second dim: the declaration says y's first dim equals it
    result = opspec.infer_shapes(_model(["S", "S"], [None, None]))
    assert _dims(result, "y") == ["S", "S"]


def test_a_loose_symbol_stays_where_inference_knows_nothing():
    nodes = [helper.make_node("NonZero", ["x"], ["y"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "S"])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [2, "nonzero_count"])])
    result = opspec.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]))
    assert _dims(result, "y") == [2, "nonzero_count"]
