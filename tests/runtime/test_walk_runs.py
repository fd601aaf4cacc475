"""Runs of nodes alike: an op's last result, reused by comparing input types, gives what
inferring every node gives, wherever a run is broken (other input types, a declared output,
input data, an omitted or unknown input)."""
from __future__ import annotations

from typing import Any, Sequence

import onnx
import pytest
from onnx import TensorProto, helper

import opspec
from opspec.runtime.inference import walk

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _values(model: onnx.ModelProto) -> dict[str, Any]:
    result = opspec.infer(model, data_prop=True)
    assert not result.errors, result.errors
    return {name: value for name, (value, _) in result.values.items()}


def _same_as_without_reuse(monkeypatch: pytest.MonkeyPatch, model: onnx.ModelProto) -> dict[str, Any]:
    """The values inferred with reuse, checked against those inferred node by node."""
    reused = _values(model)
    monkeypatch.setattr(walk, "MEMO_LIMIT", 0)
    assert _values(model) == reused
    return reused


def _model(nodes: list[Any], inputs: list[Any], outputs: list[Any],
           initializers: Sequence[Any] = ()) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_run_broken_by_other_input_types_takes_them(monkeypatch):
    """Relus over two inputs of different shapes, in turns and in runs."""
    order = ["a", "a", "b", "a", "b", "b", "a", "a", "a"]
    nodes = [helper.make_node("Relu", [source], [f"r{index}"]) for index, source in enumerate(order)]
    nodes.append(helper.make_node("Add", ["r0", "r1"], ["s0"]))
    nodes.append(helper.make_node("Add", ["r2", "r4"], ["s1"]))
    nodes.append(helper.make_node("Add", ["r0", "r2"], ["s2"]))  # (2, 3) + (1, 3)
    inputs = [helper.make_tensor_value_info("a", F, [2, 3]), helper.make_tensor_value_info("b", F, [1, 3])]
    model = _model(nodes, inputs, [helper.make_tensor_value_info("s2", F, None)])
    values = _same_as_without_reuse(monkeypatch, model)
    assert [values[f"r{index}"].shape for index in range(len(order))] == \
        [(2, 3) if source == "a" else (1, 3) for source in order]
    assert values["s1"].shape == (1, 3) and values["s2"].shape == (2, 3)


def test_a_declared_value_in_a_run_keeps_what_it_declares(monkeypatch):
    """The middle Relu of a run writes a value the graph declares with a name of its own."""
    nodes = [helper.make_node("Relu", ["x" if index == 0 else f"r{index - 1}"], [f"r{index}"]) for index in range(5)]
    model = _model(nodes, [helper.make_tensor_value_info("x", F, [None, 3])],
                   [helper.make_tensor_value_info("r4", F, None)])
    model.graph.value_info.append(helper.make_tensor_value_info("r2", F, ["N", 3]))
    values = _same_as_without_reuse(monkeypatch, model)
    assert str(values["r2"].shape[0]) == "N"


def test_input_data_breaks_a_run_of_adds_alike_in_type(monkeypatch):
    """A run of Adds of int64 pairs without data, then one of a shape and a constant, alike
    in type, whose data feeds a ConstantOfShape; and Adds of float tensors around it."""
    nodes = [
        helper.make_node("Add", ["x", "x"], ["f0"]),
        helper.make_node("Add", ["f0", "f0"], ["f1"]),
        helper.make_node("Add", ["p", "q"], ["pq"]),
        helper.make_node("Add", ["pq", "q"], ["pqq"]),
        helper.make_node("Shape", ["v"], ["shape"]),
        helper.make_node("Add", ["shape", "one"], ["bigger"]),
        helper.make_node("Add", ["f1", "f1"], ["f2"]),
        helper.make_node("ConstantOfShape", ["bigger"], ["filled"]),
    ]
    model = _model(nodes, [helper.make_tensor_value_info("x", F, [4]), helper.make_tensor_value_info("v", F, [2, 5]),
                           helper.make_tensor_value_info("p", I64, [2]), helper.make_tensor_value_info("q", I64, [2])],
                   [helper.make_tensor_value_info("filled", F, None)],
                   [helper.make_tensor("one", I64, [2], [1, 1])])
    values = _same_as_without_reuse(monkeypatch, model)
    assert values["filled"].shape == (3, 6)
    assert values["f2"].shape == (4,) and values["pqq"].shape == (2,)


def test_an_omitted_input_is_not_an_unknown_one_in_a_run(monkeypatch):
    """Clips alike but for their min: omitted, then given by an op without a schema."""
    nodes = [
        helper.make_node("Clip", ["x", "", "high"], ["c0"]),
        helper.make_node("Clip", ["x", "", "high"], ["c1"]),
        helper.make_node("Mystery", ["x"], ["low"], domain="com.unknown"),
        helper.make_node("Clip", ["x", "low", "high"], ["c2"]),
        helper.make_node("Clip", ["x", "", "high"], ["c3"]),
    ]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [2, 3]),
                                           helper.make_tensor_value_info("high", F, [])],
                              [helper.make_tensor_value_info("c3", F, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.unknown", 1)])
    result = opspec.infer(model, data_prop=True)
    values = {name: value for name, (value, _) in result.values.items()}
    monkeypatch.setattr(walk, "MEMO_LIMIT", 0)
    alone = opspec.infer(model, data_prop=True)
    assert {name: value for name, (value, _) in alone.values.items()} == values
    assert values["c1"].shape == (2, 3) and values["c3"].shape == (2, 3)
