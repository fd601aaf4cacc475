"""Graph inference: the engine, the model API and what they write back."""
from __future__ import annotations

from types import MappingProxyType

import numpy as np
import pytest

import onnx  # noqa: E402 - the reference implementation, a test dependency
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import opspec  # noqa: E402
from opspec.generated import opspec_ir_pb2 as ir  # noqa: E402
from opspec.runtime.inference import node_errors  # noqa: E402
from opspec.runtime.rulebook import RULES  # noqa: E402
from opspec.runtime.defs import INFERENCE  # noqa: E402
from opspec.runtime.inference.api import InferenceError, infer, infer_shapes  # noqa: E402
from opspec.runtime.contract import Data, TensorType  # noqa: E402
from opspec.runtime.ir import ModelLoadError  # noqa: E402
from opspec.runtime.schema import ValueConstraint  # noqa: E402
from opspec.runtime.shape import ShapeError, Sym, parse_dim  # noqa: E402

F, I64 = TensorProto.FLOAT, TensorProto.INT64


# --------------------------------------------------------------------------- helpers

def model(nodes, inputs, outputs, *, value_info=(), initializers=(), opset=17, functions=(), opsets=None):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers), value_info=list(value_info))
    imports = opsets if opsets is not None else [helper.make_opsetid("", opset)]
    return helper.make_model(graph, opset_imports=imports, functions=list(functions))


def tensor(name, elem=0, shape=None):
    """A value_info; element type and shape unknown unless given."""
    return helper.make_tensor_value_info(name, elem, shape)


def dims(value_info):
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
            for d in value_info.type.tensor_type.shape.dim]


def described(graph_values):
    return {v.name: (v.type.tensor_type.elem_type, dims(v)) for v in graph_values}






CHAIN = [helper.make_node("Relu", ["X"], ["a"], name="relu"),
         helper.make_node("Add", ["a", "X"], ["b"], name="add"),
         helper.make_node("Relu", ["b"], ["Y"], name="out")]


def chain_model(**kwargs):
    return model(CHAIN, [tensor("X", F, ["N", 3])], [tensor("Y")], **kwargs)


# --------------------------------------------------------------------------- basics

def test_chain_types_every_value(fake_rules):
    result = infer(chain_model())
    assert result.errors == [] and result.unknown_ops == set()
    graph = result.model.graph
    assert described(graph.value_info) == {"a": (F, ["N", 3]), "b": (F, ["N", 3])}
    assert described(graph.output) == {"Y": (F, ["N", 3])}
    assert result.values["X"] == (TensorType(F, (Sym("N"), 3)), "(input)")
    assert result.values["b"] == (TensorType(F, (Sym("N"), 3)), "Add")


def test_matches_onnx_on_a_simple_model(fake_rules):
    source = chain_model()
    ours = infer_shapes(source)
    theirs = onnx.shape_inference.infer_shapes(source)
    assert described(ours.graph.value_info) == described(theirs.graph.value_info)
    assert described(ours.graph.output) == described(theirs.graph.output)


def test_real_rules_type_the_chain():
    result = infer(chain_model())
    assert result.errors == []
    assert result.values["Y"][0] == TensorType(F, (Sym("N"), 3))
    assert described(result.model.graph.output) == {"Y": (F, ["N", 3])}


def test_missing_rule_keeps_the_element_type_binding(monkeypatch):
    monkeypatch.setattr(RULES, "lookup", lambda name: None)
    result = infer(chain_model())
    assert result.errors == []
    assert result.values["a"][0] == TensorType(F, None)
    assert described(result.model.graph.value_info) == {"a": (F, []), "b": (F, [])}


def test_fixed_output_type_is_bound_without_a_rule(monkeypatch):
    monkeypatch.setattr(RULES, "lookup", lambda name: None)
    nodes = [helper.make_node("Shape", ["X"], ["s"]), helper.make_node("ArgMax", ["X"], ["m"])]
    result = infer(model(nodes, [tensor("X", F, [2])], [tensor("s"), tensor("m")]))
    assert result.values["s"][0] == TensorType(I64, None)  # T1 allows only int64
    assert result.values["m"][0] == TensorType(I64, None)  # output declared tensor(int64)


def test_schema_version_follows_the_opset_import(monkeypatch):
    seen = []

    def record(ctx):
        seen.append((ctx.schema.since_version, ctx.opset, ctx.schema.inference.name))

    monkeypatch.setattr(RULES, "lookup", lambda name: record)
    for opset, domain in ((6, ""), (13, "ai.onnx")):
        nodes = [helper.make_node("Add", ["X", "X"], ["Y"], domain=domain)]
        infer(model(nodes, [tensor("X", F, [2])], [tensor("Y")], opsets=[helper.make_opsetid(domain, opset)]))
    assert seen == [(6, 6, "broadcast_legacy"), (13, 13, "broadcast")]


def test_missing_opset_import_is_a_node_error(fake_rules):
    nodes = [helper.make_node("Relu", ["X"], ["Y"], name="r")]
    source = model(nodes, [tensor("X", F, [2])], [tensor("Y")], opsets=[helper.make_opsetid("com.other", 1)])
    result = infer(source)
    assert [e.message for e in result.errors] == ["the model imports no opset for domain 'ai.onnx'"]


# --------------------------------------------------------------------------- value_info

def test_value_info_is_merged_in_place_and_new_values_appended_in_node_order(fake_rules):
    declared = [tensor("b", 0, [None, 3]), tensor("unrelated", I64, [7])]
    result = infer(chain_model(value_info=declared))
    infos = result.model.graph.value_info
    assert [v.name for v in infos] == ["b", "unrelated", "a"]
    assert described(infos) == {"b": (F, ["N", 3]), "unrelated": (I64, [7]), "a": (F, ["N", 3])}


def test_declared_shape_refines_the_inferred_one(fake_rules):
    declared = [tensor("a", F, [5, 3])]
    result = infer(chain_model(value_info=declared))
    assert result.values["a"][0] == TensorType(F, (5, 3))
    assert result.values["b"][0] == TensorType(F, (5, 3))  # downstream sees the merged type


@pytest.mark.parametrize("declared, fragment", [
    (tensor("a", I64, ["N", 3]), "element types int64 and float differ"),
    (tensor("a", F, ["N", 4]), "dims 4 and 3 differ at axis 1"),
    (tensor("a", F, ["N", 3, 1]), "ranks 3 and 2 differ"),
])
def test_conflicting_value_info_is_an_error_naming_value_types_and_node(fake_rules, declared, fragment):
    result = infer(chain_model(value_info=[declared]))
    text = str(result.errors[0])
    assert "node 'relu' (Relu, domain 'ai.onnx')" in text
    assert "output 'a'" in text and fragment in text
    assert "tensor(float) (N, 3)" in text


def test_conflict_with_declared_graph_output(fake_rules):
    source = model(CHAIN, [tensor("X", F, ["N", 3])], [tensor("Y", F, ["N", 5])])
    result = infer(source)
    assert "output 'Y'" in str(result.errors[0])
    with pytest.raises(InferenceError, match="node 'out'"):
        infer_shapes(source, strict_mode=True)


def test_non_strict_ignores_errors_like_onnx(fake_rules):
    out = infer_shapes(chain_model(value_info=[tensor("a", I64, ["N", 3])]))
    assert isinstance(out, onnx.ModelProto)


# --------------------------------------------------------------------------- errors

def test_rule_errors_non_strict_collected_and_inference_goes_on(fake_rules):
    def fails(ctx):
        raise ShapeError("cannot broadcast (2,) with (3,)")

    fake_rules["broadcast"] = fails
    result = infer(chain_model())
    assert [str(e) for e in result.errors] == [
        "node 'add' (Add, domain 'ai.onnx'): cannot broadcast (2,) with (3,)"]
    assert result.values["b"][0] == TensorType(F, None)  # the binding made before the rule
    assert result.values["Y"][0] == TensorType(F, None)


def test_rule_errors_strict_raise_naming_the_node(fake_rules):
    fake_rules["broadcast"] = lambda ctx: ctx.fail("operands disagree")
    with pytest.raises(InferenceError) as caught:
        infer(chain_model(), strict_mode=True)
    assert str(caught.value) == "node 'add' (Add, domain 'ai.onnx'): operands disagree"
    assert caught.value.errors[0].op_type == "Add"


@pytest.mark.parametrize("bug", [
    lambda ctx: [][1],
    lambda ctx: None + 1,  # type: ignore[operator]  # a broken rule, on purpose
    lambda ctx: ctx.set_output(0, "not a type"),
    lambda ctx: 1 / 0,
])
def test_buggy_rules_become_node_errors(fake_rules, bug, monkeypatch):
    monkeypatch.setattr(node_errors, "RAISE_RULE_BUGS", False)
    fake_rules["broadcast"] = bug
    source = chain_model(value_info=[tensor("b", F, ["N", 3])])
    result = infer(source)
    assert len(result.errors) == 1 and result.errors[0].name == "add"
    assert "Traceback" not in str(result.errors[0])


@pytest.mark.parametrize("bug", [lambda ctx: [][1], lambda ctx: ctx.set_output(0, "not a type")])
def test_buggy_rules_raise_under_the_debug_flag(fake_rules, bug):
    """The suite runs with the flag set (see conftest), so a rule bug fails the test that meets it."""
    assert node_errors.RAISE_RULE_BUGS
    fake_rules["broadcast"] = bug
    with pytest.raises((IndexError, TypeError)):
        infer(chain_model(value_info=[tensor("b", F, ["N", 3])]))


def test_node_errors_stay_node_errors_under_the_debug_flag(fake_rules):
    fake_rules["broadcast"] = lambda ctx: ctx.fail("operands disagree")
    result = infer(chain_model())
    assert [e.message for e in result.errors] == ["operands disagree"]


def test_unnamed_node_is_named_by_position(fake_rules):
    fake_rules["elementwise"] = lambda ctx: ctx.fail("bad")
    nodes = [helper.make_node("Relu", ["X"], ["Y"])]
    result = infer(model(nodes, [tensor("X", F, [1])], [tensor("Y")]))
    assert str(result.errors[0]) == "node #0 (Relu, domain 'ai.onnx'): bad"


def test_unknown_ops_are_reported_and_inference_goes_on(fake_rules):
    nodes = [helper.make_node("Mystery", ["X"], ["a"], domain="com.acme", name="m"),
             helper.make_node("NotAnOp", ["a"], ["b"]),
             helper.make_node("Relu", ["X"], ["Y"])]
    source = model(nodes, [tensor("X", F, [4])], [tensor("Y")],
                   opsets=[helper.make_opsetid("", 17), helper.make_opsetid("com.acme", 1)])
    result = infer(source, strict_mode=True)
    assert result.unknown_ops == {("com.acme", "Mystery"), ("", "NotAnOp")}
    assert "unknown domain" in result.unknown_reasons["com.acme", "Mystery"]
    assert result.values["a"] == (None, "com.acme::Mystery")
    assert result.values["Y"][0] == TensorType(F, (4,))
    assert [n.name for n in result.unknown_nodes] == ["m", ""]


def test_op_newer_than_the_models_opset_is_unknown(fake_rules):
    nodes = [helper.make_node("Gelu", ["X"], ["Y"])]
    result = infer(model(nodes, [tensor("X", F, [4])], [tensor("Y")], opset=13))
    assert ("", "Gelu") in result.unknown_ops


def test_onnxruntimes_versions_apply_where_the_models_opset_has_no_standard_one(fake_rules):
    nodes = [helper.make_node("LayerNormalization", ["X", "S"], ["Y"])]
    result = infer(model(nodes, [tensor("X", F, [4]), tensor("S", F, [4])], [tensor("Y")], opset=13))
    assert not result.unknown_ops and not result.errors


def test_subgraph_attributes_do_not_crash(fake_rules):
    from opspec.runtime.rules.control_flow import if_

    fake_rules["if"] = if_
    branch = helper.make_graph([helper.make_node("Relu", ["X"], ["r"])], "branch", [], [tensor("r", F, ["M"])])
    nodes = [helper.make_node("If", ["c"], ["Y"], then_branch=branch, else_branch=branch, name="if")]
    result = infer(model(nodes, [tensor("c", TensorProto.BOOL, []), tensor("X", F, [4])], [tensor("Y")]),
                   check_type=True)
    assert result.unknown_ops == set() and result.errors == []
    assert result.values["Y"][0].elem == F


# --------------------------------------------------------------------------- symbols

def test_fresh_symbols_avoid_every_name_in_the_model(fake_rules):
    fake_rules["elementwise"] = lambda ctx: ctx.set_output_shape(0, (ctx.fresh_dim(), ctx.fresh_dim()))
    inner = helper.make_graph([], "inner", [tensor("i", F, ["unk__1"])], [tensor("o", F, ["unk__2*2"])])
    nodes = [helper.make_node("If", ["c"], ["z"], then_branch=inner, else_branch=inner),
             helper.make_node("Relu", ["X"], ["Y"])]
    source = model(nodes, [tensor("X", F, ["unk__0", 3]), tensor("c", TensorProto.BOOL, [])], [tensor("Y")],
                   value_info=[tensor("q", F, ["unk__3"])])
    result = infer(source)
    fresh = [str(d) for d in result.values["Y"][0].shape]
    assert len(set(fresh)) == 2
    assert not set(fresh) & {"unk__0", "unk__1", "unk__2", "unk__3"}
    assert dims(result.model.graph.output[0]) == fresh


def test_fresh_symbols_avoid_names_in_function_bodies_and_type_attributes(fake_rules):
    fake_rules["elementwise"] = lambda ctx: ctx.set_output_shape(0, (ctx.fresh_dim(), ctx.fresh_dim(), ctx.fresh_dim()))
    body = helper.make_function("local", "F", ["a"], ["b"], [helper.make_node("Relu", ["a"], ["b"])],
                                [helper.make_opsetid("", 17)])
    body.value_info.extend([tensor("a", F, ["unk__0"])])
    typed = helper.make_tensor_type_proto(F, ["2*unk__1", "prefix_unk__2"])
    nodes = [helper.make_node("Relu", ["X"], ["Y"]),
             helper.make_node("Custom", ["X"], ["Z"], domain="local.custom", hint=typed)]
    source = model(nodes, [tensor("X", F, [3])], [tensor("Y")], functions=[body],
                   opsets=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)])
    fresh = [str(d) for d in infer(source).values["Y"][0].shape]
    # a name inside an expression is taken; one that merely contains the form only costs a number
    assert fresh == ["unk__3", "unk__4", "unk__5"]


def test_fresh_symbols_avoid_names_in_attributes_whose_kind_is_not_set(fake_rules):
    fake_rules["elementwise"] = lambda ctx: ctx.set_output_shape(0, (ctx.fresh_dim(), ctx.fresh_dim()))
    typed = onnx.AttributeProto(name="hint")  # no kind: it follows from the field set
    typed.tp.CopyFrom(helper.make_tensor_type_proto(F, ["unk__0"]))
    graphed = onnx.AttributeProto(name="body")
    graphed.g.CopyFrom(helper.make_graph([], "inner", [tensor("i", F, ["unk__1"])], []))
    custom = helper.make_node("Custom", ["X"], ["Z"], domain="local.custom",
                              weights=helper.make_tensor("w", F, [2], [1.0, 2.0]))
    custom.attribute.extend([typed, graphed])
    nodes = [helper.make_node("Relu", ["X"], ["Y"]), custom]
    source = model(nodes, [tensor("X", F, [3])], [tensor("Y")],
                   opsets=[helper.make_opsetid("", 17), helper.make_opsetid("local.custom", 1)])
    fresh = [str(d) for d in infer(source).values["Y"][0].shape]
    assert len(set(fresh)) == 2 and not set(fresh) & {"unk__0", "unk__1"}


def test_symbolic_dims_round_trip(fake_rules):
    source = model([helper.make_node("Relu", ["X"], ["Y"])],
                   [tensor("X", F, ["batch size", "2*N", None, 5])], [tensor("Y")])
    out = infer_shapes(source)
    # the input's anonymous dim is inferred as a fresh symbol of its own, written as onnx names them
    assert dims(out.graph.output[0]) == ["batch size", "2*N", "unk__0", 5]
    assert dims(out.graph.input[0]) == ["batch size", "2*N", None, 5]


# --------------------------------------------------------------------------- check_type

def test_check_type_catches_a_wrong_input_type(fake_rules):
    nodes = [helper.make_node("Add", ["X", "I"], ["Y"], name="add")]
    source = model(nodes, [tensor("X", F, [2]), tensor("I", I64, [2])], [tensor("Y")])
    assert infer(source).errors == []
    errors = infer(source, check_type=True).errors
    assert len(errors) == 1
    assert "input 1 ('I', formal 'B') has type tensor(int64), but type parameter T is already bound to " \
           "tensor(float) by 'X'" in str(errors[0])
    with pytest.raises(InferenceError, match=r"node 'add' \(Add, domain 'ai.onnx'\)"):
        infer(source, check_type=True, strict_mode=True)


def test_check_type_catches_a_type_outside_the_constraint(fake_rules):
    nodes = [helper.make_node("Relu", ["S"], ["Y"])]
    source = model(nodes, [tensor("S", TensorProto.STRING, [2])], [tensor("Y")])
    (error,) = infer(source, check_type=True).errors
    assert "has type tensor(string), but T allows only" in error.message


def test_check_type_catches_a_missing_required_attribute(fake_rules):
    nodes = [helper.make_node("Cast", ["X"], ["Y"], name="cast")]
    source = model(nodes, [tensor("X", F, [2])], [tensor("Y")])
    (error,) = infer(source, check_type=True).errors
    assert str(error) == "node 'cast' (Cast, domain 'ai.onnx'): required attribute 'to' is missing"


def test_check_type_catches_attribute_kind_unknown_attribute_and_arity(fake_rules):
    nodes = [helper.make_node("Concat", ["X", "X"], ["Y"], axis=0.5, colour="red"),
             helper.make_node("Relu", ["X", "X"], ["Z"])]
    source = model(nodes, [tensor("X", F, [2])], [tensor("Y"), tensor("Z")])
    messages = [e.message for e in infer(source, check_type=True).errors]
    assert "attribute 'axis' must be int, got float" in messages
    assert "unknown attribute 'colour'" in messages
    assert "required attribute 'axis' is missing" not in messages
    assert "takes exactly 1 input, got 2" in messages


def test_check_type_catches_a_missing_required_input(fake_rules):
    nodes = [helper.make_node("Add", ["", "X"], ["Y"])]
    source = model(nodes, [tensor("X", F, [2])], [tensor("Y")])
    messages = [e.message for e in infer(source, check_type=True).errors]
    assert messages == ["required input 0 ('A') is missing"]


@pytest.mark.parametrize("check_type", [True, False])
def test_inference_applies_attribute_value_constraints(check_type, monkeypatch):
    schema = INFERENCE.get_schema("Flatten", 17, "")
    attributes = dict(schema.attributes)
    attributes["axis"] = attributes["axis"]._replace(constraint=ValueConstraint(minimum=0))
    patched = schema._replace(attributes=MappingProxyType(attributes))
    monkeypatch.setitem(INFERENCE._cache, ("Flatten", 17, ""), patched)
    nodes = [helper.make_node("Flatten", ["X"], ["Y"], axis=-1, name="flat")]
    source = model(nodes, [tensor("X", F, [2, 3])], [tensor("Y")])
    (error,) = infer(source, check_type=check_type).errors
    assert str(error) == ("node 'flat' (Flatten, domain 'ai.onnx'): attribute 'axis' = -1: -1 must be >= 0 "
                          "(constraint: >= 0)")


# --------------------------------------------------------------------------- data

def test_constant_nodes_and_initializers_give_data_to_rules(fake_rules):
    seen = {}

    def record(ctx):
        seen[ctx.node_name] = [ctx.input_data(i) for i in range(ctx.input_count)]
        ctx.set_output_shape(0, ctx.input_shape(0))

    fake_rules["elementwise"] = fake_rules["broadcast"] = record
    nodes = [helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.array([2, 3], np.int64))),
             helper.make_node("Constant", [], ["f"], value_floats=[1.5]),
             helper.make_node("Add", ["c", "init"], ["s"], name="add"),
             helper.make_node("Add", ["f", "big"], ["t"], name="add2")]
    initializers = [numpy_helper.from_array(np.array([4, 5], np.int64), "init"),
                    numpy_helper.from_array(np.zeros(100, np.int64), "big")]
    result = infer(model(nodes, [], [tensor("s"), tensor("t")], initializers=initializers))
    assert seen["add"] == [Data((2,), (2, 3)), Data((2,), (4, 5))]
    assert seen["add2"] == [Data((1,), (1.5,)), None]  # a big initializer carries no data
    assert result.values["c"][0] == TensorType(I64, (2,))


def test_data_propagation_passes_rule_output_data_on(fake_rules):
    seen = []

    def produce(ctx):
        ctx.set_output_shape(0, (2,))
        ctx.set_output_data(0, Data((2,), (Sym("N"), 3)))

    def consume(ctx):
        seen.append(ctx.input_data(0))

    fake_rules["elementwise"], fake_rules["broadcast"] = produce, consume
    nodes = [helper.make_node("Relu", ["X"], ["a"]), helper.make_node("Add", ["a", "a"], ["Y"])]
    source = model(nodes, [tensor("X", F, ["N", 3])], [tensor("Y")])
    infer(source)
    infer(source, data_prop=True)
    assert seen == [None, Data((2,), (Sym("N"), 3))]


# --------------------------------------------------------------------------- functions

def _function(name, nodes, inputs, outputs, *, attributes=(), domain="local"):
    return helper.make_function(domain, name, inputs, outputs, nodes,
                                [helper.make_opsetid("", 17)], attributes=list(attributes))


def test_model_local_function_call_is_inferred(fake_rules):
    body = [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Relu", ["s"], ["r"])]
    function = _function("AddRelu", body, ["a", "b"], ["r"])
    nodes = [helper.make_node("AddRelu", ["X", "X"], ["Y"], domain="local", name="call"),
             helper.make_node("Relu", ["Y"], ["Z"])]
    source = model(nodes, [tensor("X", F, ["N", 8])], [tensor("Z")], functions=[function],
                   opsets=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)])
    result = infer(source)
    assert result.errors == [] and result.unknown_ops == set()
    assert result.values["Y"] == (TensorType(F, (Sym("N"), 8)), "local::AddRelu")
    assert described(result.model.graph.value_info) == {"Y": (F, ["N", 8])}


def test_function_attribute_references_are_substituted(fake_rules):
    seen = []

    def record(ctx):
        seen.append(ctx.attribute("alpha"))
        ctx.set_output_shape(0, ctx.input_shape(0))

    fake_rules["elementwise"] = record
    body = [helper.make_node("LeakyRelu", ["a"], ["r"])]
    body[0].attribute.append(helper.make_attribute_ref("alpha", onnx.AttributeProto.FLOAT, ref_attr_name="rate"))
    function = _function("Leaky", body, ["a"], ["r"], attributes=["rate"])
    nodes = [helper.make_node("Leaky", ["X"], ["Y"], domain="local", rate=0.25),
             helper.make_node("Leaky", ["X"], ["Z"], domain="local")]
    source = model(nodes, [tensor("X", F, [3])], [tensor("Y"), tensor("Z")], functions=[function],
                   opsets=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)])
    result = infer(source)
    assert seen == [0.25, pytest.approx(0.01)]  # the call's value, then the schema default when the call sets none
    assert result.values["Z"][0] == TensorType(F, (3,))


def test_errors_inside_a_function_are_reported_at_the_call(fake_rules):
    fake_rules["elementwise"] = lambda ctx: ctx.fail("inner trouble")
    function = _function("Wrap", [helper.make_node("Relu", ["a"], ["r"], name="inner")], ["a"], ["r"])
    nodes = [helper.make_node("Wrap", ["X"], ["Y"], domain="local", name="call")]
    source = model(nodes, [tensor("X", F, [3])], [tensor("Y")], functions=[function],
                   opsets=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)])
    (error,) = infer(source).errors
    assert str(error) == ("node 'call' (Wrap, domain 'local'): in function 'Wrap': "
                          "node 'inner' (Relu, domain 'ai.onnx'): inner trouble")


def test_recursive_function_is_an_error_not_a_hang(fake_rules):
    function = _function("Loop", [helper.make_node("Loop", ["a"], ["r"], domain="local")], ["a"], ["r"])
    nodes = [helper.make_node("Loop", ["X"], ["Y"], domain="local", name="call")]
    source = model(nodes, [tensor("X", F, [3])], [tensor("Y")], functions=[function],
                   opsets=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)])
    (error,) = infer(source).errors
    assert "calls itself" in error.message


# --------------------------------------------------------------------------- sources

def test_input_model_is_never_mutated(fake_rules):
    source = chain_model(value_info=[tensor("b", 0, [None, 3])])
    before = source.SerializeToString()
    infer_shapes(source)
    assert source.SerializeToString() == before
    ours = ir.ModelProto.FromString(before)
    infer_shapes(ours)
    assert ours.SerializeToString() == before


def test_returns_the_kind_it_was_given(fake_rules, tmp_path):
    source = chain_model()
    assert isinstance(infer_shapes(source), onnx.ModelProto)
    assert isinstance(infer_shapes(ir.ModelProto.FromString(source.SerializeToString())), ir.ModelProto)
    data = infer_shapes(source.SerializeToString())
    assert isinstance(data, bytes)
    assert described(onnx.ModelProto.FromString(data).graph.output) == {"Y": (F, ["N", 3])}
    path = tmp_path / "m.onnx"
    path.write_bytes(source.SerializeToString())
    for given in (path, str(path)):
        out = infer_shapes(given)
        assert isinstance(out, onnx.ModelProto)  # onnx is installed here
        assert described(out.graph.output) == {"Y": (F, ["N", 3])}
    assert path.read_bytes() == source.SerializeToString()


def test_unreadable_sources_raise_model_load_error(tmp_path):
    with pytest.raises(ModelLoadError):
        infer_shapes(tmp_path / "missing.onnx")
    with pytest.raises(ModelLoadError):
        infer_shapes(b"\x00\x01garbage")


def test_model_without_graph_is_returned_unchanged():
    function = _function("F", [], ["a"], ["a"])
    source = helper.make_model(helper.make_graph([], "g", [], []), functions=[function])
    source.ClearField("graph")
    assert infer_shapes(source.SerializeToString()) == source.SerializeToString()


def test_facade_exports():
    assert opspec.infer_shapes is infer_shapes and opspec.InferenceError is InferenceError
    assert opspec.infer is infer


def test_speed_smoke(fake_rules):
    """Not a benchmark: catches accidental quadratic behaviour."""
    import time

    nodes, previous = [], "X"
    for index in range(5000):
        nodes.append(helper.make_node("Relu", [previous], [f"v{index}"]))
        previous = f"v{index}"
    source = model(nodes, [tensor("X", F, ["N", 3])], [tensor(previous)])
    start = time.process_time()
    out = infer_shapes(source)
    assert time.process_time() - start < 2.0
    assert len(out.graph.value_info) == 4999


# --------------------------------------------------------------------------- reuse of results

def _relu_chain(length, shape=("N", 3)):
    nodes = [helper.make_node("Relu", [f"v{i}" if i else "X"], [f"v{i + 1}"], name=f"r{i}") for i in range(length)]
    return model(nodes, [tensor("X", F, list(shape))], [tensor(f"v{length}")])


def _recording(calls):
    """A rule that passes its first input's shape through and records the node it runs on."""
    def rule(ctx):
        calls.append(ctx.node_name)
        ctx.set_output_shape(0, ctx.input_shape(0))
    return rule


def test_identical_nodes_reuse_results(fake_rules):
    calls: list[str] = []
    fake_rules["elementwise"] = _recording(calls)
    result = infer(_relu_chain(5))
    assert calls == ["r0"]
    assert all(result.values[f"v{i}"][0] == TensorType(F, (Sym("N"), 3)) for i in range(1, 6))


def test_fresh_symbols_are_never_reused_across_nodes(fake_rules):
    fake_rules["elementwise"] = lambda ctx: ctx.set_output_shape(0, (ctx.fresh_dim(),))
    nodes = [helper.make_node("Relu", ["X"], ["a"]), helper.make_node("Relu", ["X"], ["b"])]
    result = infer(model(nodes, [tensor("X", F, [3])], [tensor("a"), tensor("b")]))
    assert result.values["a"][0].shape != result.values["b"][0].shape


def test_failures_are_reported_at_every_identical_node(fake_rules):
    fake_rules["elementwise"] = lambda ctx: ctx.fail("no")
    nodes = [helper.make_node("Relu", ["X"], ["a"], name="one"), helper.make_node("Relu", ["X"], ["b"], name="two")]
    result = infer(model(nodes, [tensor("X", F, [3])], [tensor("a"), tensor("b")]))
    assert [e.name for e in result.errors] == ["one", "two"]


def test_nodes_differing_in_attributes_or_data_are_inferred_separately(fake_rules):
    calls = []

    def counting(ctx):
        calls.append((ctx.attribute("alpha"), ctx.input_data(0)))
        ctx.set_output_shape(0, ctx.input_shape(0))

    fake_rules["elementwise"] = counting
    nodes = [helper.make_node("LeakyRelu", ["X"], ["a"], alpha=0.5), helper.make_node("LeakyRelu", ["X"], ["b"], alpha=0.5),
             helper.make_node("LeakyRelu", ["X"], ["c"], alpha=0.25), helper.make_node("LeakyRelu", ["K"], ["d"])]
    constant = helper.make_node("Constant", [], ["K"], value_floats=[1.0, 2.0, 3.0])
    infer(model([constant] + nodes, [tensor("X", F, [3])], [tensor(n) for n in "abcd"]))
    assert calls == [(0.5, None), (0.25, None), (pytest.approx(0.01), Data((3,), (1.0, 2.0, 3.0)))]


# --------------------------------------------------------------------------- conversion

@pytest.mark.parametrize("value", [
    TensorType(F, (Sym("N"), 3, None)),
    TensorType(0, None),
    TensorType(I64, ()),
    TensorType(F, (parse_dim("2*N+1"), 2**40)),
])
def test_types_round_trip_through_protobuf(value):
    from opspec.runtime.inference.read_types import DimReader
    from opspec.runtime.inference.write_types import TypeEncoder

    proto = ir.TypeProto.FromString(TypeEncoder()(value))
    assert DimReader().type(proto) == value


def test_container_types_round_trip_through_protobuf():
    from opspec.runtime.inference.read_types import DimReader
    from opspec.runtime.inference.write_types import TypeEncoder
    from opspec.runtime.contract import MapType, OptionalType, SequenceType, SparseTensorType

    for value in (SequenceType(TensorType(F, (2,))), OptionalType(SequenceType(TensorType(I64, None))),
                  MapType(I64, TensorType(F, (Sym("K"),))), SparseTensorType(F, (4, 4)), SequenceType(None)):
        assert DimReader().type(ir.TypeProto.FromString(TypeEncoder()(value))) == value


def test_long_names_and_many_dims_are_encoded(fake_rules):
    long = "x" * 300
    source = model([helper.make_node("Relu", ["X"], [long]), helper.make_node("Relu", [long], ["Y"])],
                   [tensor("X", F, list(range(1, 60)))], [tensor("Y")])
    out = infer_shapes(source)
    assert out.graph.value_info[0].name == long
    assert dims(out.graph.value_info[0]) == list(range(1, 60))


def test_tensor_data_reads_raw_and_typed_fields_within_the_limit():
    from opspec.runtime.inference.read_tensors import tensor_data

    assert tensor_data(numpy_helper.from_array(np.array([1, -2], np.int32))) == Data((2,), (1, -2))
    assert tensor_data(helper.make_tensor("t", I64, [3], [4, 5, 6])) == Data((3,), (4, 5, 6))
    assert tensor_data(helper.make_tensor("t", TensorProto.BOOL, [2], [True, False])) == Data((2,), (1, 0))
    assert tensor_data(helper.make_tensor("t", F, [], [2.5])) == Data((), (2.5,))
    assert tensor_data(numpy_helper.from_array(np.zeros(65, np.int64))) is None
    strings = helper.make_tensor("t", TensorProto.STRING, [1], [b"a"])  # type: ignore[list-item]  # stubs: numbers only
    assert tensor_data(strings) is None
    assert tensor_data(helper.make_tensor("t", F, [2], [1.0, 2.0]), frozenset({I64})) is None


@pytest.mark.parametrize("options", [(0,), (0, 1, 1), (2,), (0, 2), (2, 0), (0, 2, 0, 1)])
@pytest.mark.parametrize("count", range(6))
def test_formal_positions_agree_with_the_context(options, count):
    from opspec.runtime.inference.checks import formal_positions
    from types import SimpleNamespace

    from opspec.runtime.contract.positions import FormalPositions
    from opspec.runtime.schema import FormalParameter, FormalParameterOption

    params = [FormalParameter(f"p{i}", "T", frozenset(), FormalParameterOption(o)) for i, o in enumerate(options)]
    table = FormalPositions(SimpleNamespace(inputs=params, outputs=(), name="Op", since_version=1))
    expected: list[int | None] = [None] * count
    for index, param in enumerate(params):
        for actual in table.ranges(False, count)[param.name]:
            expected[actual] = index
    assert list(formal_positions(params, count)) == expected


def test_nodes_differing_only_in_data_their_rule_never_reads_share_one_result(fake_rules):
    calls: list[str] = []
    fake_rules["elementwise"] = _recording(calls)
    constants = [helper.make_node("Constant", [], [f"K{i}"], value_floats=[float(i)] * 3) for i in range(2)]
    nodes = [helper.make_node("Relu", [f"K{i}"], [f"r{i}"], name=f"n{i}") for i in range(2)]
    result = infer(model(constants + nodes, [], [tensor("r0"), tensor("r1")]))
    assert calls == ["n0"]
    assert result.values["r1"][0] == TensorType(F, (3,))


def test_inference_pauses_the_cycle_collector_and_restores_it_as_it_was():
    import gc

    from opspec.runtime.inference.graph import with_collector_paused

    seen = []

    def note(fail: bool) -> None:
        seen.append(gc.isenabled())
        if fail:
            raise ZeroDivisionError

    paused = with_collector_paused(note)
    assert gc.isenabled()
    paused(False)
    with pytest.raises(ZeroDivisionError):
        paused(True)
    assert gc.isenabled() and seen == [False, False]
    gc.disable()
    try:
        paused(False)
        assert not gc.isenabled()  # a caller's own pause is left alone
    finally:
        gc.enable()
    infer_shapes(chain_model())
    assert gc.isenabled()
