"""What the walk reads once and reuses (constants, attribute sets, declared types) never mixes nodes up."""
from __future__ import annotations

import gc

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import opspec

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _dims(value_info):
    return [d.dim_param or d.dim_value for d in value_info.type.tensor_type.shape.dim]


def test_identical_branches_of_two_nodes_are_each_written_into_their_own_graph():
    def branch(tag):
        return helper.make_graph([helper.make_node("Relu", ["x"], ["r"])], tag, [],
                                 [helper.make_tensor_value_info("r", F, None)])

    nodes = [helper.make_node("If", ["c"], [f"y{i}"], then_branch=branch("b"), else_branch=branch("b"))
             for i in range(2)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                                           helper.make_tensor_value_info("x", F, ["N", 2])],
                              [helper.make_tensor_value_info(f"y{i}", F, None) for i in range(2)])
    out = opspec.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    for node in out.graph.node:
        for attribute in node.attribute:
            assert _dims(attribute.g.output[0]) == ["N", 2]


def test_repeated_constants_and_attribute_sets_give_each_node_its_own_result():
    nodes = []
    for i, target in enumerate([[3, 2], [6], [3, 2], [2, 3], [6]]):
        shape = numpy_helper.from_array(np.array(target, np.int64))
        nodes += [helper.make_node("Constant", [], [f"s{i}"], value=shape),
                  helper.make_node("Reshape", ["x", f"s{i}"], [f"y{i}"]),
                  helper.make_node("Transpose", [f"y{i}"], [f"t{i}"], perm=list(range(len(target)))[::-1])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [2, 3])],
                              [helper.make_tensor_value_info(f"t{i}", F, None) for i in range(5)])
    out = opspec.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    assert [_dims(v) for v in out.graph.output] == [[2, 3], [6], [2, 3], [3, 2], [6]]


def test_a_type_declared_many_times_is_read_alike_each_time():
    inputs = [helper.make_tensor_value_info(f"x{i}", F, ["N", 4]) for i in range(3)]
    nodes = [helper.make_node("Relu", [f"x{i}"], [f"y{i}"]) for i in range(3)]
    outputs = [helper.make_tensor_value_info(f"y{i}", F, None) for i in range(3)]
    model = helper.make_model(helper.make_graph(nodes, "g", inputs, outputs),
                              opset_imports=[helper.make_opsetid("", 17)])
    assert [_dims(v) for v in opspec.infer_shapes(model).graph.output] == [["N", 4]] * 3


def test_the_cycle_collector_is_left_as_it_was():
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", F, [1])], [helper.make_tensor_value_info("y", F, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    assert gc.isenabled()
    opspec.infer_shapes(model)
    assert gc.isenabled()
    gc.disable()
    try:
        opspec.infer_shapes(model)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_node_like_a_conforming_one_but_for_its_attribute_encoding_is_still_checked():
    perm_as_floats = helper.make_attribute("perm", [1.0, 0.0])  # the same numbers, the wrong attribute type
    odd = helper.make_node("Transpose", ["x"], ["b"])
    odd.attribute.append(perm_as_floats)
    nodes = [helper.make_node("Transpose", ["x"], ["a"], perm=[1, 0]), odd,
             helper.make_node("Transpose", ["x"], ["c"], perm=[1, 0])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [2, 3])],
                              [helper.make_tensor_value_info(name, F, None) for name in "abc"])
    result = opspec.infer(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), check_type=True)
    assert [error.index for error in result.errors] == [1]
    assert "perm" in result.errors[0].message


def test_a_node_like_a_conforming_one_but_missing_a_required_input_is_still_checked():
    nodes = [helper.make_node("Add", ["x", "x"], ["a"]), helper.make_node("Add", ["x", ""], ["b"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [2])],
                              [helper.make_tensor_value_info(name, F, None) for name in "ab"])
    result = opspec.infer(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), check_type=True)
    assert [error.index for error in result.errors] == [1]



def _relu_model(nodes):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, ["N", 2])],
                              [helper.make_tensor_value_info(n.output[0], F, None) for n in nodes])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_the_attributes_of_an_op_that_declares_none_are_left_unread(monkeypatch):
    from opspec.runtime.inference import read_attributes

    reads = []
    real = read_attributes.attribute_values
    def counting(protos):
        reads.append(protos)
        return real(protos)

    monkeypatch.setattr(read_attributes, "attribute_values", counting)
    nodes = [helper.make_node("Relu", ["x"], [f"y{i}"], note=i) for i in range(3)]  # Relu declares no attribute
    out = opspec.infer_shapes(_relu_model(nodes))
    assert [_dims(value) for value in out.graph.output] == [["N", 2]] * 3 and not reads


def test_a_rule_that_reads_an_undeclared_attribute_gets_it_and_is_not_reused_across_them():
    from dataclasses import replace

    from opspec.runtime.op_set import installed_op_set
    from opspec.runtime.rulebook import RuleBook

    installed = installed_op_set()

    class Peeking(RuleBook):
        """The installed rules, each of which also looks at an attribute its op does not declare."""

        def lookup(self, name):
            rule = installed.rules.lookup(name)
            assert rule is not None

            def peek(ctx):
                rule(ctx)
                if ctx.attribute("note") == 1:
                    ctx.set_output_shape(0, (7,))
            return peek

        def spec(self, name):
            return installed.rules.spec(name)

    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Relu", ["x"], ["b"], note=1),
             helper.make_node("Relu", ["x"], ["c"])]
    out = opspec.infer_shapes(_relu_model(nodes), op_set=replace(installed, rules=Peeking()))
    assert [_dims(value) for value in out.graph.output] == [["N", 2], [7], ["N", 2]]


def test_a_new_value_whose_serialized_type_holds_a_percent_byte_is_written():
    nodes = [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Relu", ["y"], ["z"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [37, 37])],
                              [helper.make_tensor_value_info("z", F, None)])
    out = opspec.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    assert [(v.name, _dims(v)) for v in out.graph.value_info] == [("y", [37, 37])]


def test_a_large_attribute_set_is_read_only_as_far_as_the_rule_looks(monkeypatch):
    from opspec.runtime.inference import read_attributes

    decoded = []
    real = read_attributes._decode

    def counting(raw):
        decoded.append(raw)
        return real(raw)

    monkeypatch.setattr(read_attributes, "_decode", counting)
    note = ["n" * 100] * 100  # far past what the reader keeps: read attribute by attribute
    nodes = [helper.make_node("Transpose", ["x"], [f"t{i}"], perm=perm, note=note)
             for i, perm in enumerate([[1, 0, 2], [2, 1, 0], [1, 0, 2]])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [2, 3, 4])],
                              [helper.make_tensor_value_info(f"t{i}", F, None) for i in range(3)])
    out = opspec.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    assert [_dims(v) for v in out.graph.output] == [[3, 2, 4], [4, 3, 2], [3, 2, 4]]
    assert not decoded  # the rule never asked for ``note``


def test_a_large_attribute_set_reads_as_its_values():
    from opspec.runtime.inference.read_attributes import AttributeReader, attribute_values

    protos = [helper.make_attribute("note", ["n" * 100] * 100), helper.make_attribute("axis", 1),
              helper.make_attribute("axis", 2)]
    values, frozen, _ = AttributeReader().read(protos)
    assert frozen is None  # not keyed: the node's result is not remembered
    assert "axis" in values and "other" not in values and len(values) == 2
    assert dict(values) == attribute_values(protos)  # the last of a repeated name wins, as before


def test_a_large_set_of_many_attributes_is_found_large_without_serializing_it_whole():
    from opspec.runtime.inference.read_attributes import AttributeReader

    serialized = []

    class Attribute:  # an AttributeProto as the reader sees one: 1,000 bytes serialized
        def __init__(self, name):
            self.name = name

        def SerializeToString(self):
            serialized.append(self.name)
            return b"x" * 1000

    protos = [Attribute(f"a{i}") for i in range(12)]
    values, frozen, exact = AttributeReader().read(protos)
    assert frozen is None and exact is None and sorted(values) == sorted(p.name for p in protos)
    assert serialized == ["a0", "a1", "a2", "a3", "a4"]  # past the limit at the fifth: the rest left alone
