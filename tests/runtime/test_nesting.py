"""Deep nesting gets one short, located answer: chains of model-local function calls
longer than onnx accepts are refused at their first call, never with Python's recursion
limit (which inference leaves alone); chains onnx infers are inferred alike, with the
default recursion limit and in a thread with a small stack."""
from __future__ import annotations

import subprocess
import sys
import threading
from typing import Any

import onnx
import pytest
from onnx import TensorProto, helper

import opspec
from opspec.runtime.inference import functions, nesting, subgraphs
from opspec.runtime.inference.nesting import MAX_CALL_DEPTH, short_chain
from test_subgraph_reuse import nested_loops

OPSETS = [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)]


def _chain(length: int, last: onnx.NodeProto | None = None) -> onnx.ModelProto:
    """F0 calls F1 ... calls F(length-1), whose body is ``last`` (a Relu by default)."""
    functions = []
    for i in range(length):
        body = helper.make_node(f"F{i + 1}", ["x"], ["y"], domain="local") if i < length - 1 else \
            last or helper.make_node("Relu", ["x"], ["y"])
        functions.append(helper.make_function("local", f"F{i}", ["x"], ["y"], [body], OPSETS))
    graph = helper.make_graph([helper.make_node("F0", ["x"], ["y"], domain="local")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=OPSETS, functions=functions)


def _dims(model: onnx.ModelProto) -> list[int]:
    return [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]


def test_a_chain_onnx_infers_is_inferred_alike():
    model = _chain(257)  # the longest chain onnx 1.23.2 infers
    expected = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    result = opspec.infer(model)
    assert not result.errors and _dims(result.model) == _dims(expected) == [2, 3]


@pytest.mark.parametrize("length", [MAX_CALL_DEPTH + 1, 1000])
def test_a_chain_too_deep_is_one_short_error_at_its_first_call(length):
    model = _chain(length)
    with pytest.raises(Exception, match="depth exceeds limit"):
        onnx.shape_inference.infer_shapes(model, strict_mode=True)
    for source in (model, model.SerializeToString()):
        result = opspec.infer(source)
        assert len(result.errors) == 1 and len(str(result.errors[0])) < 300, result.errors
        assert str(result.errors[0]).startswith("node #0 (F0, domain 'local'): function calls nested deeper than")
        assert "Recursion" not in str(result.errors[0])
        inferred = onnx.ModelProto.FromString(result.model) if isinstance(result.model, bytes) else result.model
        assert not inferred.graph.output[0].type.tensor_type.HasField("shape")
    with pytest.raises(opspec.InferenceError, match="nested deeper than"):
        opspec.infer_shapes(model, strict_mode=True)


def test_an_error_deep_in_a_chain_is_reported_with_a_short_path():
    bad = helper.make_node("MatMul", ["x", "x"], ["y"])  # (2, 3) x (2, 3): the inner dims differ
    result = opspec.infer(_chain(250, bad))
    assert len(result.errors) == 1
    message = str(result.errors[0])
    assert len(message) < 600 and "(243 more calls)" in message and "F249" in message, message


def _in_thread(work, stack_size: int = 0):
    """``work()``'s result, run in a new thread with ``stack_size`` bytes of stack (0: the default)."""
    outcome = []
    before = threading.stack_size(stack_size)
    try:
        thread = threading.Thread(target=lambda: outcome.append(work()))
        thread.start()
        thread.join()
    finally:
        threading.stack_size(before)
    assert outcome, "the thread failed"
    return outcome[0]


@pytest.mark.parametrize("stack_size", [0, 256 * 1024])
def test_the_deepest_nesting_allowed_fits_the_default_recursion_limit_and_a_small_stack(monkeypatch, stack_size):
    limit = sys.getrecursionlimit()
    monkeypatch.setattr(sys, "setrecursionlimit", None)  # inference must not touch the limit
    chain = _in_thread(lambda: opspec.infer(_chain(MAX_CALL_DEPTH)), stack_size)
    assert not chain.errors and _dims(chain.model) == [2, 3]
    loops = _in_thread(lambda: opspec.infer(nested_loops(30, None)), stack_size)
    assert not loops.errors and _dims(loops.model) == [2, 3]
    assert sys.getrecursionlimit() == limit


def _stack_depth() -> int:
    """How many frames are on the stack."""
    frame: Any = sys._getframe()
    count = 0
    while frame is not None:
        frame, count = frame.f_back, count + 1
    return count


def _frames_per_level(model: onnx.ModelProto) -> set[int]:
    """How many frames deeper each level of nesting in ``model`` goes than the one before."""
    depths: list[int] = []
    check = nesting.out_of_stack

    def measured() -> bool:
        depths.append(_stack_depth())
        return check()

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(functions, "out_of_stack", measured)
        patch.setattr(subgraphs, "out_of_stack", measured)
        assert not opspec.infer(model).errors
    return {after - before for before, after in zip(depths, depths[1:]) if after > before}


def test_each_level_of_nesting_costs_a_few_frames():
    assert _frames_per_level(_chain(20)) == {3}
    assert max(_frames_per_level(nested_loops(12, None))) <= 10


def _deep_in_the_stack(work, room: int):
    """``work()``'s result, called with only ``room`` frames left below the recursion limit."""
    def descend(depth: int):
        return descend(depth - 1) if depth > 0 else work()
    return descend(sys.getrecursionlimit() - _stack_depth() - room)


def test_a_caller_deep_in_its_own_stack_gets_the_same_short_answer():
    chain = _deep_in_the_stack(lambda: opspec.infer(_chain(200)), 400)
    assert len(chain.errors) == 1, chain.errors
    message = str(chain.errors[0])
    assert message.startswith("node #0 (F0, domain 'local'): function calls nested too deeply for Python's stack")
    assert len(message) < 300
    loops = _deep_in_the_stack(lambda: opspec.infer(nested_loops(30, None)), 200)
    assert loops.errors and all("subgraphs nested too deeply for Python's stack" in str(e) for e in loops.errors)
    assert all(len(str(error)) < 1000 and "Recursion" not in str(error) for error in loops.errors)


def test_the_command_line_answers_a_1000_deep_chain_briefly(tmp_path):
    path = tmp_path / "chain.onnx"
    onnx.save(_chain(1000), str(path))
    run = subprocess.run([sys.executable, "-m", "opspec", "infer", str(path)], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 1 and len(run.stdout) + len(run.stderr) < 1000 and "Traceback" not in run.stderr
    assert "function calls nested deeper than" in run.stdout


def test_short_chain_leaves_short_messages_alone():
    assert short_chain("in function 'F': node #0 (Relu): bad") == "in function 'F': node #0 (Relu): bad"
