"""Graphs whose node list is not in the data's order are inferred as their sorted copies are.

onnxruntime's float16 converter (``keep_io_types=True``) appends the Casts of the graph inputs at
the end of the node list; onnxruntime sorts such a graph before running it, and so does the walk.
``check`` still reports the order, the model written keeps its node order, and a cycle or a value
nothing produces stays a located problem."""
from __future__ import annotations

import time
from typing import Any

import onnx
import pytest
from onnx import TensorProto, helper

import opspec
from opspec.runtime.checker.whole import check_model
from opspec.runtime.contract import TensorType
from opspec.runtime.inference.node_order import walk_order
from opspec.runtime.ir import load_model
from ort_models_transformers import GPT2_SETTINGS, gpt2, gpt2_feeds
from value_oracle import real_values, score

F = TensorProto.FLOAT

pytest.importorskip("sympy")  # onnxruntime's transformer tools import it


def _float16(model: onnx.ModelProto) -> onnx.ModelProto:
    from onnxruntime.transformers.float16 import convert_float_to_float16

    # without the converter's own pass of onnx's inference,
    # so that only the graph's inputs and outputs say their types
    return convert_float_to_float16(model, keep_io_types=True, disable_shape_infer=True)


def _sorted_copy(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` with its nodes sorted by onnxruntime's own tool."""
    from onnxruntime.transformers.onnx_model import OnnxModel

    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    OnnxModel.graph_topological_sort(copy.graph, is_deterministic=True)
    return copy


def _reads_a_later_value(graph: onnx.GraphProto) -> bool:
    produced_at = {name: index for index, node in enumerate(graph.node) for name in node.output}
    return any(produced_at.get(name, -1) >= index for index, node in enumerate(graph.node) for name in node.input)


@pytest.fixture(scope="module")
def converted() -> onnx.ModelProto:
    source = gpt2(layers=2)
    del source.graph.value_info[:]
    model = _float16(source)
    # only the graph's inputs and outputs say their types (the converter declares its Casts' outputs,
    # which would hide the order from the walk)
    del model.graph.value_info[:]
    assert _reads_a_later_value(model.graph)  # the converter's input Casts come last
    return model


def test_a_float16_converted_model_infers_as_its_sorted_copy_does(converted):
    written = converted.SerializeToString()
    result = opspec.infer(converted, data_prop=True)
    assert converted.SerializeToString() == written  # the input is never changed
    in_order = opspec.infer(_sorted_copy(converted), data_prop=True)
    assert result.errors == [] == in_order.errors
    types = {name: value for name, (value, _) in result.values.items()}
    assert types == {name: value for name, (value, _) in in_order.values.items()}
    assert all(value is not None for value in types.values())
    assert types["logits"].elem == F and types["logits"].shape[-1] == 500
    # the model written keeps the node order it was given
    assert [node.output[0] for node in result.model.graph.node] == [node.output[0] for node in converted.graph.node]


def test_the_converted_models_inferred_types_hold_in_onnxruntimes_run(converted):
    real = real_values(converted, GPT2_SETTINGS, gpt2_feeds)
    inferred = opspec.infer(converted, data_prop=True).model
    symbols = {d.dim_param for value in converted.graph.input for d in value.type.tensor_type.shape.dim if d.dim_param}
    ours = score(inferred, real, symbols, GPT2_SETTINGS)
    assert ours.wrong_values == [] and ours.partial_values == [], ours
    assert ours == score(opspec.infer(_sorted_copy(converted), data_prop=True).model, real, symbols, GPT2_SETTINGS)


def test_check_still_reports_the_order(converted):
    problems = check_model(load_model(converted.SerializeToString()).model).problems
    assert problems and {problem.code for problem in problems} == {"topological-order"}


def _model(nodes: list, inputs: list, outputs: list) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info(name, F, None) for name in outputs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def test_a_branch_reading_a_value_a_later_node_produces_waits_for_it():
    then = helper.make_graph([helper.make_node("Neg", ["late"], ["t"])], "then", [],
                             [helper.make_tensor_value_info("t", F, None)])
    other = helper.make_graph([helper.make_node("Abs", ["late"], ["e"])], "else", [],
                              [helper.make_tensor_value_info("e", F, None)])
    model = _model([helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other),
                    helper.make_node("Relu", ["x"], ["late"])],
                   [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                    helper.make_tensor_value_info("x", F, [2, 3])], ["y"])
    assert walk_order(model.graph.node) == [1, 0]
    result = opspec.infer(model)
    assert result.errors == [] and result.values["y"][0] == TensorType(F, (2, 3))


def test_list_order_is_kept_where_it_is_valid():
    nodes = [helper.make_node("Relu", ["a"], ["b"]), helper.make_node("Neg", ["x"], ["a"]),
             helper.make_node("Abs", ["x"], ["c"]), helper.make_node("Neg", ["b"], ["d"])]
    assert walk_order(nodes) == [1, 0, 2, 3]
    assert walk_order([nodes[1], nodes[0], nodes[2], nodes[3]]) is None


def test_a_cycle_and_a_missing_producer_are_located_problems_never_a_hang():
    size = 20_000  # a long cycle: nothing recursive may run out of stack on it
    nodes = [helper.make_node("Relu", [f"v{(index + 1) % size}"], [f"v{index}"]) for index in range(size)]
    nodes.append(helper.make_node("Neg", ["nowhere"], ["w"]))
    model = _model(nodes, [], ["v0", "w"])
    start = time.perf_counter()
    result = opspec.infer(model)
    assert time.perf_counter() - start < 30
    assert result.errors == [] and result.values["v0"][0] == TensorType(F, None)  # as declared: nothing known
    codes = {problem.code for problem in check_model(load_model(model.SerializeToString()).model).problems}
    assert {"topological-order", "undefined-value"} <= codes


def test_walking_in_order_does_not_check_the_order_of_a_fully_typed_list(monkeypatch):
    from opspec.runtime.inference import walk

    calls: list[object] = []

    def counted(nodes: object) -> None:
        calls.append(nodes)

    monkeypatch.setattr(walk, "walk_order", counted)
    x = helper.make_tensor_value_info("x", F, [2, 3])
    opspec.infer(_model([helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Neg", ["y"], ["z"])], [x], ["z"]))
    assert calls == []


def test_a_branch_whose_own_nodes_are_out_of_order_is_walked_in_the_data_order():
    then = helper.make_graph([helper.make_node("Neg", ["inner"], ["t"]), helper.make_node("Relu", ["x"], ["inner"])],
                             "then", [], [helper.make_tensor_value_info("t", F, None)])
    other = helper.make_graph([helper.make_node("Abs", ["x"], ["e"])], "else", [],
                              [helper.make_tensor_value_info("e", F, None)])
    model = _model([helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)],
                   [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                    helper.make_tensor_value_info("x", F, [2, 3])], ["y"])
    result = opspec.infer(model)
    assert result.errors == [] and result.values["y"][0] == TensorType(F, (2, 3))


def test_a_branch_reading_only_typed_values_does_not_check_the_order(monkeypatch):
    from opspec.runtime.inference import walk

    calls: list[object] = []
    real = walk.walk_order

    def counted(nodes: Any) -> list[int] | None:
        calls.append(nodes)
        return real(nodes)

    monkeypatch.setattr(walk, "walk_order", counted)
    then = helper.make_graph([helper.make_node("Neg", ["x"], ["t"])], "then", [],
                             [helper.make_tensor_value_info("t", F, None)])
    other = helper.make_graph([helper.make_node("Abs", ["y"], ["e"])], "else", [],
                              [helper.make_tensor_value_info("e", F, None)])
    model = _model([helper.make_node("Relu", ["x"], ["y"]),
                    helper.make_node("If", ["c"], ["z"], then_branch=then, else_branch=other)],
                   [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                    helper.make_tensor_value_info("x", F, [2, 3])], ["z"])
    result = opspec.infer(model)
    assert result.errors == [] and result.values["z"][0] == TensorType(F, (2, 3))
    assert calls == []  # both branches read values typed before the If: the list order serves


def _if(cond: str, output: str, then: onnx.GraphProto, other: onnx.GraphProto) -> onnx.NodeProto:
    return helper.make_node("If", [cond], [output], then_branch=then, else_branch=other)


def _branch(name: str, nodes: list, output: str) -> onnx.GraphProto:
    return helper.make_graph(nodes, name, [], [helper.make_tensor_value_info(output, F, None)])


_INPUTS = [helper.make_tensor_value_info("c", TensorProto.BOOL, []), helper.make_tensor_value_info("x", F, [2, 3])]


def test_a_graph_nested_in_a_branch_reading_a_later_value_waits_for_it():
    inner = _if("c", "t", _branch("inner_then", [helper.make_node("Neg", ["late"], ["u"])], "u"),
                _branch("inner_else", [helper.make_node("Abs", ["x"], ["v"])], "v"))
    outer = _if("c", "y", _branch("then", [inner], "t"), _branch("else", [helper.make_node("Abs", ["x"], ["e"])], "e"))
    model = _model([outer, helper.make_node("Relu", ["x"], ["late"])], _INPUTS, ["y"])
    result = opspec.infer(model)
    assert result.errors == [] and result.values["y"][0] == TensorType(F, (2, 3))


def test_a_branch_whose_output_is_a_later_value_waits_for_it():
    then = _branch("then", [], "late")  # no node: the output is read from around the branch
    model = _model([_if("c", "y", then, _branch("else", [helper.make_node("Abs", ["x"], ["e"])], "e")),
                    helper.make_node("Relu", ["x"], ["late"])], _INPUTS, ["y"])
    result = opspec.infer(model)
    assert result.errors == [] and result.values["y"][0] == TensorType(F, (2, 3))


def test_a_loop_body_reading_a_later_value_waits_for_it():
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]), helper.make_node("Add", ["late", "late"], ["scan"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("cond_in", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), helper.make_tensor_value_info("scan", F, None)])
    trips = helper.make_tensor_value_info("n", TensorProto.INT64, [])
    model = _model([helper.make_node("Loop", ["n", "c"], ["y"], body=body), helper.make_node("Relu", ["x"], ["late"])],
                   [trips, *_INPUTS], ["y"])
    result = opspec.infer(model)
    assert result.errors == [] and result.values["y"][0].shape[1:] == (2, 3)


def test_the_problems_found_before_a_branch_reads_ahead_are_reported_once():
    then = _branch("then", [helper.make_node("Neg", ["late"], ["t"])], "t")
    # the If's condition is not a bool: a problem of the node's form, found before its branches are walked
    model = _model([_if("x", "y", then, _branch("else", [helper.make_node("Abs", ["x"], ["e"])], "e")),
                    helper.make_node("Relu", ["x"], ["late"])], _INPUTS, ["y"])
    errors = opspec.infer(model, check_type=True).errors
    assert len(errors) == 1 and errors[0].op_type == "If"


def test_a_branch_reading_only_typed_values_is_not_scanned(monkeypatch):
    from opspec.runtime.inference import node_order

    calls: list[object] = []
    real = node_order._read_from_around

    def counted(graphs: Any) -> set[str]:
        calls.append(graphs)
        return real(graphs)

    monkeypatch.setattr(node_order, "_read_from_around", counted)
    then = _branch("then", [helper.make_node("Neg", ["x"], ["a"]), helper.make_node("Relu", ["a"], ["t"])], "t")
    model = _model([_if("c", "y", then, _branch("else", [helper.make_node("Abs", ["x"], ["e"])], "e")),
                    helper.make_node("Relu", ["y"], ["z"])], _INPUTS, ["z"])
    result = opspec.infer(model)
    assert result.errors == [] and result.values["z"][0] == TensorType(F, (2, 3))
    assert calls == []


def test_a_function_body_called_in_a_branch_reads_only_its_own_names(monkeypatch):
    from opspec.runtime.inference import walk

    outer_checks: list[object] = []
    real = walk.walk_order

    def counted(nodes: Any) -> list[int] | None:
        if len(nodes) == 2 and nodes[0].op_type == "If":
            outer_checks.append(nodes)
        return real(nodes)

    monkeypatch.setattr(walk, "walk_order", counted)
    # the body's "late" is its own: an op of no known domain gives it, with no type
    body = [helper.make_node("Mystery", ["a"], ["late"], domain="custom"), helper.make_node("Neg", ["late"], ["b"])]
    function = helper.make_function("local", "F", ["a"], ["b"], body,
                                    [helper.make_opsetid("", 21), helper.make_opsetid("custom", 1)])
    then = _branch("then", [helper.make_node("F", ["x"], ["t"], domain="local")], "t")
    graph = helper.make_graph([_if("c", "y", then, _branch("else", [helper.make_node("Abs", ["x"], ["e"])], "e")),
                               helper.make_node("Relu", ["x"], ["late"])], "g", _INPUTS,
                              [helper.make_tensor_value_info("y", F, None)])
    model = helper.make_model(graph, functions=[function], opset_imports=[
        helper.make_opsetid("", 21), helper.make_opsetid("local", 1), helper.make_opsetid("custom", 1)])
    result = opspec.infer(model)
    assert result.errors == [] and result.values["late"][0] == TensorType(F, (2, 3))
    assert outer_checks == []  # the main list, in order, is never checked


def test_a_branch_reading_a_name_it_gives_itself_on_a_cycle_is_walked_once_more_in_list_order():
    # "late" is given on a cycle inside the branch and by a later node around it: the branch's read
    # of it looks ahead of the main list, yet the main list is in order (the branch defines the name)
    then = _branch("then", [helper.make_node("Neg", ["late"], ["t"]), helper.make_node("Relu", ["t"], ["late"])], "t")
    model = _model([_if("c", "y", then, _branch("else", [helper.make_node("Abs", ["x"], ["e"])], "e")),
                    helper.make_node("Relu", ["x"], ["late"])], _INPUTS, ["y", "late"])
    assert walk_order(model.graph.node) is None
    result = opspec.infer(model)
    assert result.errors == []
    assert result.values["y"][0] == TensorType(F, None) and result.values["late"][0] == TensorType(F, (2, 3))


def _nested_reading_ahead(depth: int) -> onnx.ModelProto:
    """Ifs nested ``depth`` deep, each level's If followed by a node giving ``X<level>``; the
    innermost graph reads every ``X`` (the deepest level's first), each ahead of its level's list."""
    def level(index: int) -> tuple[list, str]:
        if index == depth:
            return [helper.make_node("Sum", [f"X{k}" for k in reversed(range(depth))], ["deepest"])], "deepest"
        inner, output = level(index + 1)
        other = _branch(f"else{index}", [helper.make_node("Abs", ["x"], [f"e{index}"])], f"e{index}")
        return [_if("c", f"y{index}", _branch(f"then{index}", inner, output), other),
                helper.make_node("Relu", ["x"], [f"X{index}"])], f"y{index}"

    nodes, output = level(0)
    return _model(nodes, _INPUTS, [output])


def test_graphs_nested_in_lists_that_each_read_ahead_are_walked_a_bounded_number_of_times(monkeypatch):
    from opspec.runtime.inference import walk

    deepest_walks: list[object] = []
    real = walk.Walker.run

    def counted(self: Any, graph_walk: Any) -> None:
        if graph_walk.nodes and graph_walk.nodes[0].op_type == "Sum":
            deepest_walks.append(graph_walk)
        real(self, graph_walk)

    monkeypatch.setattr(walk.Walker, "run", counted)
    depth = 12  # given up and walked again at every level each time, the innermost graph would be walked 2**12 times
    result = opspec.infer(_nested_reading_ahead(depth))
    assert result.errors == [] and result.values["y0"][0] == TensorType(F, (2, 3))
    assert len(deepest_walks) <= 4 * depth
