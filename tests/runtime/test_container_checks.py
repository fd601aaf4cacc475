"""``check_type`` with container types: sequences and optionals bound to type parameters,
and types given by TYPE_PROTO attributes."""
from __future__ import annotations

from onnx import TensorProto, helper

import opspec
from opspec.runtime.contract import OptionalType, SequenceType, TensorType
from opspec.runtime.shape import Sym

F, I64 = TensorProto.FLOAT, TensorProto.INT64
FLOATS = helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, ["N"]))


def _infer(nodes, inputs, outputs, opset=18):
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_value_info(o, helper.TypeProto()) for o in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return opspec.infer(model, check_type=True)


def test_a_sequence_bound_to_a_type_parameter_passes_and_types_the_output():
    result = _infer([helper.make_node("SequenceErase", ["s", "i"], ["t"])],
                    [helper.make_value_info("s", FLOATS), helper.make_tensor_value_info("i", I64, [])], ["t"])
    assert result.errors == []
    assert result.values["t"][0] == SequenceType(TensorType(F, (Sym("N"),)))


def test_a_tensor_where_a_sequence_parameter_is_expected_is_an_error():
    result = _infer([helper.make_node("SequenceLength", ["x"], ["n"])],
                    [helper.make_tensor_value_info("x", F, [2])], ["n"])
    (error,) = result.errors
    assert "has type tensor(float), but S allows only" in error.message and "seq(tensor(float))" in error.message


def test_a_sequence_of_an_element_type_the_op_lacks_is_an_error():
    strings = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.STRING, [2]))
    result = _infer([helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)],
                    [helper.make_value_info("s", strings)], ["y"], opset=11)
    assert result.errors == []  # strings are allowed
    floats8 = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT8E4M3FN, [2]))
    (error,) = _infer([helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)],
                      [helper.make_value_info("s", floats8)], ["y"], opset=11).errors
    assert "has type seq(tensor(float8e4m3fn))" in error.message


def test_a_type_proto_attribute_gives_the_optional_its_type():
    attribute = helper.make_attribute("type", helper.make_tensor_type_proto(F, [2, 3]))
    node = helper.make_node("Optional", [], ["o"])
    node.attribute.append(attribute)
    result = _infer([node], [], ["o"])
    assert result.errors == []
    assert result.values["o"][0] == OptionalType(TensorType(F, (2, 3)))


def test_a_type_proto_attribute_naming_a_type_the_output_cannot_hold_is_an_error():
    nested = helper.make_optional_type_proto(helper.make_tensor_type_proto(F, [2]))
    node = helper.make_node("Optional", [], ["o"], name="opt")
    node.attribute.append(helper.make_attribute("type", nested))
    (error,) = _infer([node], [], ["o"]).errors
    assert "output 0 ('output') would have type optional(optional(tensor(float))), but O allows only" \
        in error.message
    assert "node 'opt'" in str(error)
    unchecked = opspec.infer(helper.make_model(helper.make_graph([node], "g", [], []),
                                               opset_imports=[helper.make_opsetid("", 18)]))
    assert unchecked.errors == []  # only check_type looks at it


def test_an_attribute_of_the_wrong_kind_where_a_type_proto_is_expected():
    node = helper.make_node("Optional", [], ["o"], type=3)
    messages = [e.message for e in _infer([node], [], ["o"]).errors]
    assert any("attribute 'type' must be" in m for m in messages)
