"""One options value per run: the keyword API is a thin layer over it, and it cannot change under a run."""
from __future__ import annotations

import dataclasses

import pytest
from onnx import TensorProto, helper

import opspec
from opspec.runtime.inference.api import InferenceError, InferenceOptions, infer_in_place
from opspec.runtime.ir import load_model


def _model():
    node = helper.make_node("Reshape", ["x", "s"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [helper.make_tensor("s", TensorProto.INT64, [2], [3, 2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_options_are_one_frozen_value():
    options = InferenceOptions(data_prop=True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.data_prop = False  # type: ignore[misc]
    assert dataclasses.replace(options, strict_mode=True) == InferenceOptions(data_prop=True, strict_mode=True)


def test_the_keyword_api_and_the_options_give_the_same_run():
    by_keywords = opspec.infer(_model(), check_type=True, data_prop=True)
    in_place = infer_in_place(load_model(_model()).model, None, InferenceOptions(check_type=True, data_prop=True))
    assert by_keywords.values["y"][0] == in_place.values["y"][0] and str(in_place.values["y"][0]).endswith("(3, 2))")


def test_each_option_reaches_the_run():
    model = load_model(_model()).model
    untouched = infer_in_place(model, None, InferenceOptions(report=False, write_back=False))
    assert not model.graph.value_info and not model.graph.output[0].type.tensor_type.HasField("shape")
    assert untouched.node_count == 1 and not untouched.is_produced("y")  # no report: producers not kept
    broken = load_model(_model()).model
    broken.graph.initializer[0].int64_data[:] = [4, 2]  # 8 elements where x has 6
    assert infer_in_place(broken, None, InferenceOptions(data_prop=True)).errors
    with pytest.raises(InferenceError):
        infer_in_place(broken, None, InferenceOptions(check_type=True, strict_mode=True))
