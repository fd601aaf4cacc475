"""``opspec.check_model``: onnx.checker.check_model's call and verdicts, from ``opspec check``'s checks."""
from __future__ import annotations

import onnx
import onnx.checker
import pytest
from onnx import TensorProto, helper

import opspec
from opspec.generated.opspec_ir_pb2 import ModelProto

F = TensorProto.FLOAT


def _model(node, inputs, output=("y", F, [2, 3]), opsets=(("", 17),)):
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(*i) for i in inputs],
                              [helper.make_tensor_value_info(*output)])
    return helper.make_model(graph, ir_version=8, opset_imports=[helper.make_opsetid(*o) for o in opsets])


GOOD = _model(helper.make_node("Add", ["a", "b"], ["y"], name="add"), [("a", F, [2, 3]), ("b", F, [1, 3])])
#: One input too many: a schema problem, found with or without full_check.
TWO_INPUTS = _model(helper.make_node("Transpose", ["a", "b"], ["y"], name="two_inputs"),
                    [("a", F, [3, 2]), ("b", F, [3, 2])])
#: Shapes that cannot broadcast: only type and shape inference (full_check) finds it.
MISMATCHED = _model(helper.make_node("Add", ["a", "b"], ["y"], name="add"), [("a", F, [2, 3]), ("b", F, [4, 3])])
#: An op of a domain nothing defines: skipped unless check_custom_domain.
CUSTOM = _model(helper.make_node("Mystery", ["a"], ["y"], domain="com.nowhere"), [("a", F, [2])], ("y", F, [2]),
                opsets=(("", 17), ("com.nowhere", 1)))


def _onnx_verdict(model, **options) -> bool:
    try:
        onnx.checker.check_model(model, **options)
    except onnx.checker.ValidationError:
        return False
    except onnx.shape_inference.InferenceError:
        return False
    return True


def _our_verdict(model, **options) -> bool:
    try:
        opspec.check_model(model, **options)
    except opspec.ValidationError:
        return False
    return True


@pytest.mark.parametrize("options", [{}, {"full_check": True}, {"check_custom_domain": True},
                                     {"skip_opset_compatibility_check": True}])
@pytest.mark.parametrize("name", ["GOOD", "TWO_INPUTS", "MISMATCHED", "CUSTOM"])
def test_the_verdicts_are_onnx_checkers(name, options):
    model = globals()[name]
    assert _our_verdict(model, **options) == _onnx_verdict(model, **options)


def test_every_form_of_model_is_taken_and_none_is_changed(tmp_path):
    path = tmp_path / "good.onnx"
    onnx.save(GOOD, path)
    before = GOOD.SerializeToString()
    for form in (GOOD, before, path, str(path), ModelProto.FromString(before)):
        opspec.check_model(form, full_check=True)
    assert GOOD.SerializeToString() == before


def test_a_failure_lists_each_problem_where_it_is():
    with pytest.raises(opspec.ValidationError) as raised:
        opspec.check_model(MISMATCHED, full_check=True)
    error = raised.value
    assert len(error.problems) == 1 and "node 'add' (Add, domain 'ai.onnx')" in str(error.problems[0])
    assert str(error).splitlines() == ["the model has 1 problem:", str(error.problems[0])]
    assert isinstance(error, onnx.checker.ValidationError)  # caught as onnx's when onnx was loaded first


def test_an_unreadable_model_is_a_load_error():
    with pytest.raises(opspec.ModelLoadError, match="not an ONNX model"):
        opspec.check_model(b"\x00not a model")
