"""Output types bound from type parameters before a rule runs (or when there is none)."""
from __future__ import annotations

from onnx import TensorProto, helper

import opspec
from opspec.runtime.contract import MapType, OptionalType, SequenceType, TensorType
from opspec.runtime.inference.typeops import type_only
from opspec.runtime.shape import Sym

F, D, I64 = TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT64


def test_type_only_drops_every_shape():
    nested = SequenceType(OptionalType(TensorType(F, (2, Sym("N")))))
    assert type_only(nested) == SequenceType(OptionalType(TensorType(F, None)))
    assert type_only(MapType(8, TensorType(F, (3,)))) == MapType(8, TensorType(F, None))


def test_a_container_output_takes_the_element_type_not_the_element_shapes(monkeypatch):
    """SequenceErase relates its output's type to its input's; the binding alone (no rule) says
    nothing of element shapes."""
    from opspec.runtime.rulebook import RULES

    monkeypatch.setattr(RULES, "lookup", lambda name: None)
    seq = helper.make_tensor_sequence_value_info("s", F, [2, 3])
    node = helper.make_node("SequenceErase", ["s"], ["out"])
    graph = helper.make_graph([node], "g", [seq], [helper.make_value_info("out", helper.TypeProto())])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    out = opspec.infer(model).values["out"][0]
    assert out in (None, SequenceType(TensorType(F, None)))


def test_each_output_of_a_heterogeneous_variadic_is_typed_on_its_own(monkeypatch):
    """Adam's variadic inputs and outputs are heterogeneous: a float input says nothing of a double output.

    The binding alone (no rule) must leave them untyped; the optimizer rule then types each one.
    """
    from opspec.runtime.rulebook import RULES

    lookup = RULES.lookup
    monkeypatch.setattr(RULES, "lookup", lambda name: None)
    names = ["R", "T", "X1", "X2", "G1", "G2", "V1", "V2", "H1", "H2"]
    kinds = [F, I64, F, D, F, D, F, D, F, D]
    inputs = [helper.make_tensor_value_info(n, k, []) for n, k in zip(names, kinds)]
    outs = ["X1n", "X2n", "V1n", "V2n", "H1n", "H2n"]
    node = helper.make_node("Adam", names, outs, domain="ai.onnx.preview.training")
    graph = helper.make_graph([node], "g", inputs, [helper.make_value_info(o, helper.TypeProto()) for o in outs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("ai.onnx.preview.training", 1)])
    values = opspec.infer(model).values
    assert all(values[o][0] is None or values[o][0].elem == 0 for o in outs)
    monkeypatch.setattr(RULES, "lookup", lookup)
    values = opspec.infer(model).values
    assert [values[o][0].elem for o in outs] == [F, D] * 3


def test_reuse_tells_an_omitted_input_from_an_unknown_one():
    """Two Slices alike but for axes: omitted in one, supplied by an op without a schema in the other."""
    ints = lambda name, values: helper.make_tensor(name, I64, [len(values)], values)  # noqa: E731
    nodes = [
        helper.make_node("Slice", ["X", "starts", "ends", "", "steps"], ["a"]),
        helper.make_node("Mystery", ["X"], ["axes"], domain="com.unknown"),
        helper.make_node("Slice", ["X", "starts", "ends", "axes", "steps"], ["b"]),
    ]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", F, [4, 6])],
                              [helper.make_value_info(n, helper.TypeProto()) for n in ("a", "b")],
                              [ints("starts", [1]), ints("ends", [3]), ints("steps", [1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.unknown", 1)])
    values = opspec.infer(model).values
    assert values["a"][0].shape == (2, 6)
    assert values["b"][0].shape in (None, (None, None))  # axis 0 or 1 may be sliced
