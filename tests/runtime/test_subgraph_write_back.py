"""Inferred types are written into nested graphs too, as onnx writes them."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper, shape_inference

import opspec

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _dims(value_info):
    tensor = value_info.type.tensor_type
    return tensor.elem_type, [d.dim_value if d.HasField("dim_value") else d.dim_param or None
                              for d in tensor.shape.dim] if tensor.HasField("shape") else None


def _model():
    """A for loop whose body transposes, then doubles its carried value; an If inside the body."""
    then = helper.make_graph([helper.make_node("Neg", ["doubled"], ["flipped"])], "then", [],
                             [helper.make_value_info("flipped", helper.TypeProto())])
    other = helper.make_graph([helper.make_node("Abs", ["doubled"], ["kept"])], "else", [],
                              [helper.make_value_info("kept", helper.TypeProto())])
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "s_in"], ["doubled"]),
         helper.make_node("If", ["c_in"], ["s_out"], then_branch=then, else_branch=other),
         helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("ReduceSum", ["s_out"], ["total"], keepdims=0)],
        "body", [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("c_in", B, []),
                 helper.make_value_info("s_in", helper.TypeProto())],
        [helper.make_value_info(o, helper.TypeProto()) for o in ("c_out", "s_out", "total")])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "s0"], ["s_final", "totals"], body=body)], "g",
        [helper.make_tensor_value_info("s0", F, ["N", 3])],
        [helper.make_value_info(o, helper.TypeProto()) for o in ("s_final", "totals")],
        [numpy_helper.from_array(np.array(4, dtype=np.int64), "M")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _body(model):
    return model.graph.node[0].attribute[0].g


def test_values_inside_a_loop_body_and_its_branches_get_value_info():
    model = _model()
    original = model.SerializeToString()
    inferred = opspec.infer_shapes(model)
    assert model.SerializeToString() == original  # the input is never changed
    body = _body(inferred)
    assert {v.name: _dims(v) for v in body.value_info} == {"doubled": (F, ["N", 3])}
    assert {v.name: _dims(v) for v in body.output} == {
        "c_out": (B, []), "s_out": (F, ["N", 3]), "total": (F, [])}
    branches = {a.name: a.g for a in body.node[1].attribute}
    assert [_dims(v) for v in branches["then_branch"].output] == [(F, ["N", 3])]
    assert [_dims(v) for v in branches["else_branch"].output] == [(F, ["N", 3])]
    assert [_dims(v) for v in inferred.graph.output] == [(F, ["N", 3]), (F, [4])]


def _covers(ours, theirs) -> bool:
    """Same names and element types, and our dims wherever onnx gives a shape."""
    return (ours.keys() == theirs.keys()
            and all(ours[n][0] == theirs[n][0] and theirs[n][1] in (None, ours[n][1]) for n in ours))


def test_nested_value_info_agrees_with_onnx_wherever_onnx_knows():
    ours, theirs = _body(opspec.infer_shapes(_model())), _body(shape_inference.infer_shapes(_model()))
    assert _covers({v.name: _dims(v) for v in ours.value_info}, {v.name: _dims(v) for v in theirs.value_info})
    assert _covers({v.name: _dims(v) for v in ours.output}, {v.name: _dims(v) for v in theirs.output})


def test_inferring_an_inferred_model_again_changes_nothing():
    once = opspec.infer_shapes(_model())
    twice = opspec.infer_shapes(once)
    assert twice.SerializeToString() == once.SerializeToString()


def test_a_declared_body_output_is_kept_and_refined():
    model = _model()
    body = _body(model)
    body.output[1].CopyFrom(helper.make_tensor_value_info("s_out", F, ["N", None]))
    out = _body(opspec.infer_shapes(model)).output[1]
    assert _dims(out) == (F, ["N", 3])


def _branch_reading_around(outer_values: int):
    """An If whose then-branch holds an initializer named like an outer value (the outer value
    comes first), declares another outer value in its value_info, reads both and gives one value
    of its own; ``outer_values`` more
    values around it decide whether its scope copies them in or reads through to them."""
    then = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["own"]), helper.make_node("Neg", ["own"], ["t"])], "then", [],
        [helper.make_tensor_value_info("t", F, None)],
        [numpy_helper.from_array(np.zeros((5,), np.float32), "w")],  # gives way to the outer "w"
        value_info=[helper.make_tensor_value_info("x", F, None)])  # an outer value: not the branch's to write
    other = helper.make_graph([helper.make_node("Abs", ["x"], ["e"])], "else", [],
                              [helper.make_tensor_value_info("e", F, None)])
    inputs = [helper.make_tensor_value_info(name, F, [2, 3]) for name in ("x", "w")]
    inputs += [helper.make_tensor_value_info(f"pad{i}", F, [1]) for i in range(outer_values)]
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)], "g",
        [helper.make_tensor_value_info("c", B, []), *inputs], [helper.make_tensor_value_info("y", F, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_branch_writes_only_its_own_values_whether_its_scope_copies_the_values_around_it_or_not():
    for outer_values in (0, 100):  # a few values around: copied into the branch's scope; many: read through
        inferred = opspec.infer_shapes(_branch_reading_around(outer_values))
        then = {a.name: a.g for a in inferred.graph.node[0].attribute}["then_branch"]
        assert {v.name: _dims(v) for v in then.value_info} == {"x": (F, None), "own": (F, [2, 3])}
        assert [_dims(v) for v in then.output] == [(F, [2, 3])]
