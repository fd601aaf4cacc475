"""A nested graph inferred again with the same inputs in the same scope is inferred once:
Loops nested in Loops cost linear, not exponential, time, with the answer unchanged."""
from __future__ import annotations

from typing import Any

import onnx
import pytest
from onnx import TensorProto, helper

import opspec
from opspec.runtime.inference import subgraph_reuse
from opspec.runtime.inference.subgraph_reuse import outer_names
from opspec.runtime.inference.walk import Walker

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def nested_loops(depth: int, declared: tuple | None = (2, 3), broken: bool = False,
                 growing: bool = False) -> onnx.ModelProto:
    """A Loop whose body holds a Loop ... ``depth`` levels deep, each carrying one tensor
    (declared in each body as ``declared``) and reading the outer trip count ``M``; the
    innermost body multiplies (2, 3) by (2, 3) when ``broken``, and doubles its carried
    value's first dim when ``growing`` (each Loop's rule then infers its body twice)."""
    inner = None
    for level in range(depth):
        if inner is None:
            step = helper.make_node("MatMul", ["x0", "x0"], ["y0"]) if broken else \
                helper.make_node("Concat", ["x0", "x0"], ["y0"], axis=0) if growing else \
                helper.make_node("Relu", [f"x{level}"], [f"y{level}"])
        else:
            step = helper.make_node("Loop", ["M", "", f"x{level}"], [f"y{level}"], body=inner)
        inner = helper.make_graph(
            [step, helper.make_node("Identity", ["c"], [f"c{level}"])], f"body{level}",
            [helper.make_tensor_value_info(f"i{level}", I64, []), helper.make_tensor_value_info("c", B, []),
             helper.make_tensor_value_info(f"x{level}", F, declared)],
            [helper.make_tensor_value_info(f"c{level}", B, []), helper.make_tensor_value_info(f"y{level}", F, None)])
    graph = helper.make_graph([helper.make_node("Loop", ["M", "", "x"], ["y"], body=inner)], "g",
                              [helper.make_tensor_value_info("M", I64, []),
                               helper.make_tensor_value_info("x", F, [2, 3])],
                              [helper.make_tensor_value_info("y", F, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def counted_walks(monkeypatch, model, errors: int = 0) -> tuple[int, Any]:
    """How many graphs the inference of ``model`` walked, and its result (with ``errors``
    problems found)."""
    count = [0]
    run = Walker.run

    def counted(self, *args, **kwargs):
        count[0] += 1
        return run(self, *args, **kwargs)

    monkeypatch.setattr(Walker, "run", counted)
    result = opspec.infer(model)
    monkeypatch.setattr(Walker, "run", run)
    assert len(result.errors) == errors, result.errors
    return count[0], result


def _walks(monkeypatch, model, errors: int = 0) -> tuple[int, bytes]:
    """How many graphs the inference of ``model`` walked, and the model it wrote."""
    count, result = counted_walks(monkeypatch, model, errors)
    return count, result.model.SerializeToString()


@pytest.mark.parametrize("declared", [(2, 3), ("N", 3), None])
def test_nested_loops_are_walked_a_number_of_times_linear_in_their_depth(monkeypatch, declared):
    walks, written = _walks(monkeypatch, nested_loops(30, declared))
    assert walks <= 4 * 30, walks
    assert b"body0" in written


def test_a_body_whose_carried_types_settle_at_once_is_walked_once(monkeypatch):
    """A Loop's rule infers its body with the carried types; the body is not inferred before
    with its declared ones too, which nested Loops would pay for at every level."""
    walks, written = _walks(monkeypatch, nested_loops(7))
    assert walks == 8, walks
    assert b"body0" in written


@pytest.mark.parametrize("declared", [(2, 3), ("N", 3), None])
def test_reuse_gives_the_answer_inferring_every_time_gives(monkeypatch, declared):
    model = nested_loops(7, declared, growing=True)
    reused, written = _walks(monkeypatch, model)
    monkeypatch.setattr(subgraph_reuse, "RESULTS_PER_GRAPH", 0)
    every_time, expected = _walks(monkeypatch, model)
    assert written == expected and reused < every_time


def test_a_problem_deep_inside_nested_loops_is_found_once_in_linear_time(monkeypatch):
    walks, _ = _walks(monkeypatch, nested_loops(30, None, broken=True), errors=1)
    assert walks <= 4 * 30, walks
    message = str(opspec.infer(nested_loops(30, None, broken=True)).errors[0])
    assert len(message) < 700 and "(23 more levels)" in message and "MatMul" in message, message


def _branches_reading(outer: str) -> tuple:
    then = helper.make_graph([helper.make_node("Neg", [outer], ["t"])], "then", [],
                             [helper.make_value_info("t", helper.TypeProto())])
    other = helper.make_graph([helper.make_node("Abs", [outer], ["e"])], "else", [],
                              [helper.make_value_info("e", helper.TypeProto())])
    return then, other


def test_a_branch_reading_an_outer_value_that_changes_per_iteration_is_inferred_again(monkeypatch):
    """The loop's carried value grows a dim each iteration; the If inside reads it from the
    body's scope, so its branches' results differ between the rounds that settle the loop."""
    then, other = _branches_reading("grown")
    body = helper.make_graph(
        [helper.make_node("Concat", ["s_in", "s_in"], ["grown"], axis=0),
         helper.make_node("If", ["c_in"], ["s_out"], then_branch=then, else_branch=other),
         helper.make_node("Identity", ["c_in"], ["c_out"])],
        "body", [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("c_in", B, []),
                 helper.make_value_info("s_in", helper.TypeProto())],
        [helper.make_value_info(o, helper.TypeProto()) for o in ("c_out", "s_out")])
    graph = helper.make_graph([helper.make_node("Loop", ["M", "", "s0"], ["s_final"], body=body)], "g",
                              [helper.make_tensor_value_info("M", I64, []),
                               helper.make_tensor_value_info("s0", F, [2, 3])],
                              [helper.make_value_info("s_final", helper.TypeProto())])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    _, written = _walks(monkeypatch, model)
    monkeypatch.setattr(subgraph_reuse, "RESULTS_PER_GRAPH", 0)
    _, expected = _walks(monkeypatch, model)
    assert written == expected


def test_outer_names_are_what_a_graph_reads_before_defining_it():
    then, other = _branches_reading("a")
    graph = helper.make_graph(
        [helper.make_node("Relu", ["late"], ["early"]),  # read before the node that defines it
         helper.make_node("Add", ["x", "w"], ["late"]),
         helper.make_node("If", ["early"], ["z"], then_branch=then, else_branch=other)],
        "g", [helper.make_tensor_value_info("x", F, [1])], [helper.make_value_info("out", helper.TypeProto())])
    assert outer_names(graph) == ("late", "w", "a", "out")
