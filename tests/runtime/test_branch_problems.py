"""A problem in a graph that may not run (an If's branch) is a note, not an error of the model:
the model fails only if that branch runs. Graphs that certainly run (the branch a known condition
takes, a Loop's body) keep their errors, and so does a node that does not match its schema,
wherever it is. The If's outputs come from the branches that may run."""
from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import opspec
from opspec.cli import main
from opspec.runtime.checker.whole import check_model
from opspec.runtime.contract import SequenceType, TensorType
from opspec.runtime.inference.node_errors import Severity
from opspec.runtime.ir import load_model

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _affine_grid_3d_expanded(align_corners: int) -> onnx.ModelProto:
    """onnx's node-suite case ``test_affine_grid_3d[_align_corners]_expanded``, built as onnx's
    suite builds it: AffineGrid's function body in place of the node. Its If holds a 2-D and a
    3-D branch; the 2-D one splits the 5-element size into 4 and cannot run on this input."""
    from onnx.backend.test.case.node import function_testcase_helper

    node = helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=align_corners)
    types = [helper.make_tensor_type_proto(F, [2, 3, 4]), helper.make_tensor_type_proto(I64, [5])]
    name = "test_affine_grid_3d" + ("_align_corners" if align_corners else "")
    ((expanded, opsets),), _ = function_testcase_helper(node, types, name,
                                                        opset_imports=[helper.make_opsetid("", 20)])
    graph = helper.make_graph(expanded, name, [helper.make_tensor_value_info("theta", F, [2, 3, 4]),
                                               helper.make_tensor_value_info("size", I64, [5])],
                              [helper.make_tensor_value_info("grid", F, [2, 4, 5, 6, 3])])
    return helper.make_model(graph, opset_imports=list(opsets), ir_version=9)


@pytest.mark.parametrize("align_corners", [0, 1])
def test_the_node_suites_affine_grid_3d_expanded_is_valid_with_a_note_on_its_2d_branch(align_corners, tmp_path):
    model = _affine_grid_3d_expanded(align_corners)
    onnx.checker.check_model(model, full_check=True)  # the oracles: valid, and it runs
    theta = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (grid,) = session.run(None, {"theta": theta, "size": np.array([2, 3, 4, 5, 6], np.int64)})
    assert grid.shape == (2, 4, 5, 6, 3)
    for data_prop in (False, True):
        result = opspec.infer(model, check_type=True, data_prop=data_prop)
        assert result.errors == [], result.errors
        (note,) = result.notes
        assert note.severity is Severity.NOTE and note.op_type == "If" and "Split" in note.message
        assert result.values["grid"][0] == TensorType(F, (2, 4, 5, 6, 3))
    checked = check_model(load_model(model.SerializeToString()).model)
    assert checked.problems == [] and len(checked.notes) == 1
    path = tmp_path / "grid.onnx"
    onnx.save(model, path)
    for command in ("check", "infer"):
        assert main([command, str(path)]) == 0
        assert main([command, str(path), "--strict"] if command == "infer" else [command, str(path)]) == 0


def _failing_branch(name: str) -> onnx.GraphProto:
    """A branch that fails whenever it runs: (2, 3) x (2, 3)."""
    return helper.make_graph([helper.make_node("MatMul", ["X", "X"], [f"{name}_y"])], name, [],
                             [helper.make_tensor_value_info(f"{name}_y", F, None)])


def _working_branch(name: str) -> onnx.GraphProto:
    return helper.make_graph([helper.make_node("Relu", ["X"], [f"{name}_y"])], name, [],
                             [helper.make_tensor_value_info(f"{name}_y", F, None)])


def _if_model(then: onnx.GraphProto, other: onnx.GraphProto, condition: bool | None) -> onnx.ModelProto:
    """An If on X: (2, 3) whose condition is a graph input (None) or a constant."""
    nodes = [helper.make_node("If", ["c"], ["Y"], then_branch=then, else_branch=other, name="choose")]
    inputs = [helper.make_tensor_value_info("X", F, [2, 3])]
    initializers = []
    if condition is None:
        inputs.append(helper.make_tensor_value_info("c", B, []))
    else:
        initializers.append(numpy_helper.from_array(np.array(condition), "c"))
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("Y", F, None)], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def test_a_failing_branch_under_an_unknown_condition_is_a_note_and_the_outputs_cover_both():
    result = opspec.infer(_if_model(_working_branch("then"), _failing_branch("else"), None), data_prop=True)
    assert result.errors == []
    (note,) = result.notes
    assert str(note).startswith("node 'choose' (If, domain 'ai.onnx'): in subgraph 'else': node #0 (MatMul")
    # the failed branch's output is unknown: only the element type both give is kept
    assert result.values["Y"][0] == TensorType(F, None)
    with pytest.raises(opspec.InferenceError):  # errors still raise in strict mode, notes never
        opspec.infer(_if_model(_failing_branch("then"), _failing_branch("else"), True), strict_mode=True)
    opspec.infer_shapes(_if_model(_working_branch("then"), _failing_branch("else"), None), strict_mode=True)


def test_a_known_condition_makes_the_taken_branch_count_and_the_other_a_note():
    skipped = opspec.infer(_if_model(_working_branch("then"), _failing_branch("else"), True), data_prop=True)
    assert skipped.errors == [] and len(skipped.notes) == 1
    assert skipped.values["Y"][0] == TensorType(F, (2, 3))  # the taken branch's type, exactly
    taken = opspec.infer(_if_model(_failing_branch("then"), _working_branch("else"), True), data_prop=True)
    assert len(taken.errors) == 1 and taken.notes == []
    assert "MatMul" in str(taken.errors[0])


def test_a_node_that_breaks_its_schema_is_an_error_even_in_a_branch_that_may_not_run():
    broken = helper.make_graph([helper.make_node("Relu", ["X"], ["e_y"], alpha=1.0)], "else", [],
                               [helper.make_tensor_value_info("e_y", F, None)])
    result = opspec.infer(_if_model(_working_branch("then"), broken, None), check_type=True)
    assert len(result.errors) == 1 and "alpha" in str(result.errors[0]) and result.notes == []


def test_a_branch_that_may_not_run_inside_a_loop_body_stays_a_note_and_a_loop_body_keeps_its_errors():
    def model(body_nodes: list) -> onnx.ModelProto:
        body = helper.make_graph(
            [*body_nodes, helper.make_node("Identity", ["c_in"], ["c_out"])], "body",
            [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("c_in", B, [])],
            [helper.make_tensor_value_info("c_out", B, [])])
        graph = helper.make_graph(
            [helper.make_node("Loop", ["M", ""], [], body=body, name="loop")], "g",
            [helper.make_tensor_value_info("X", F, [2, 3]), helper.make_tensor_value_info("c", B, [])], [],
            [numpy_helper.from_array(np.array(3, np.int64), "M")])
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])

    choose = helper.make_node("If", ["c"], ["y"], then_branch=_working_branch("then"),
                              else_branch=_failing_branch("else"))
    nested = opspec.infer(model([choose]), data_prop=True)
    assert nested.errors == [] and len(nested.notes) == 1 and "in subgraph 'else'" in str(nested.notes[0])
    looped = opspec.infer(model([helper.make_node("MatMul", ["X", "X"], ["y"])]), data_prop=True)
    assert len(looped.errors) == 1 and looped.notes == []
    never = model([helper.make_node("MatMul", ["X", "X"], ["y"])])
    never.graph.initializer[0].CopyFrom(numpy_helper.from_array(np.array(0, np.int64), "M"))  # no iteration
    stopped = opspec.infer(never, data_prop=True)
    assert stopped.errors == [] and len(stopped.notes) == 1


def test_the_cli_shows_notes_apart_from_errors(tmp_path, capsys):
    path = tmp_path / "if.onnx"
    onnx.save(_if_model(_working_branch("then"), _failing_branch("else"), None), path)
    assert main(["infer", str(path)]) == 0
    text = capsys.readouterr().out
    assert "1 note (graphs that may not run would fail if they ran" in text and "0 errors" in text
    assert main(["infer", str(path), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["ok"] and document["errors"] == []
    assert [(note["severity"], note["code"], note["node"]) for note in document["notes"]] == [
        ("note", "inference", "choose")]
    assert main(["check", str(path)]) == 0
    assert capsys.readouterr().out.startswith("note: node 'choose' (If, domain 'ai.onnx'): in subgraph 'else'")
    assert main(["check", str(path), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["ok"] and document["problems"] == [] and document["notes"][0]["severity"] == "note"


def _loop16_seq_none() -> onnx.ModelProto:
    """onnx's node-suite case ``test_loop16_seq_none``: a Loop at opset 16 carrying an optional
    sequence that starts empty, which the body tests and unwraps (OptionalHasElement-15 and
    OptionalGetElement-15 take only optionals)."""
    floats = helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, None))
    optional = helper.make_optional_type_proto(floats)
    then = helper.make_graph(
        [helper.make_node("Constant", [], ["zero"], value=numpy_helper.from_array(np.array(0, np.float32))),
         helper.make_node("SequenceConstruct", ["zero"], ["init"])], "then_body", [],
        [helper.make_value_info("init", floats)])
    other = helper.make_graph([helper.make_node("OptionalGetElement", ["opt_in"], ["got"])], "else_body", [],
                              [helper.make_value_info("got", floats)])
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("OptionalHasElement", ["opt_in"], ["has"]),
         helper.make_node("Not", ["has"], ["none"]),
         helper.make_node("If", ["none"], ["seq"], then_branch=then, else_branch=other),
         helper.make_node("Constant", [], ["x"], value=numpy_helper.from_array(np.arange(1, 6, dtype=np.float32))),
         helper.make_node("SequenceInsert", ["seq", "x"], ["seq_out"])], "loop_body",
        [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("c_in", B, []),
         helper.make_value_info("opt_in", optional)],
        [helper.make_tensor_value_info("c_out", B, []), helper.make_value_info("seq_out", floats)])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "cond", "opt"], ["result"], body=body)], "g",
        [helper.make_tensor_value_info("M", I64, []), helper.make_tensor_value_info("cond", B, []),
         helper.make_value_info("opt", optional)], [helper.make_value_info("result", floats)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)], ir_version=8)


def test_a_loop_carrying_an_optional_that_starts_empty_keeps_it_optional_in_the_body():
    model = _loop16_seq_none()
    onnx.checker.check_model(model, full_check=True)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (produced,) = session.run(None, {"M": np.array(3, np.int64), "cond": np.array(True), "opt": None})
    assert len(produced) == 4
    result = opspec.infer(model, check_type=True, data_prop=True)
    assert result.errors == [] and result.notes == [], result.errors
    assert result.values["result"][0] == SequenceType(TensorType(F, None))
    assert check_model(load_model(model.SerializeToString()).model).problems == []
