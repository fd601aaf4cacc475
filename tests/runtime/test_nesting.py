"""Deep nesting gets one short, located answer: chains of model-local function calls
longer than onnx accepts are refused at their first call, never with Python's recursion
limit; chains onnx infers are inferred alike."""
from __future__ import annotations

import subprocess
import sys
import threading

import onnx
import pytest
from onnx import TensorProto, helper

import opspec
from opspec.runtime.inference.nesting import MAX_CALL_DEPTH, short_chain

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


def test_a_deep_chain_in_a_thread_and_the_recursion_limit_after():
    limit = sys.getrecursionlimit()
    outcome = []
    thread = threading.Thread(target=lambda: outcome.append(opspec.infer(_chain(MAX_CALL_DEPTH))))
    thread.start()
    thread.join()
    assert outcome and not outcome[0].errors and _dims(outcome[0].model) == [2, 3]
    assert sys.getrecursionlimit() == limit


def test_the_command_line_answers_a_1000_deep_chain_briefly(tmp_path):
    path = tmp_path / "chain.onnx"
    onnx.save(_chain(1000), str(path))
    run = subprocess.run([sys.executable, "-m", "opspec", "infer", str(path)], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 1 and len(run.stdout) + len(run.stderr) < 1000 and "Traceback" not in run.stderr
    assert "function calls nested deeper than" in run.stdout


def test_short_chain_leaves_short_messages_alone():
    assert short_chain("in function 'F': node #0 (Relu): bad") == "in function 'F': node #0 (Relu): bad"
