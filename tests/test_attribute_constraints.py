"""Every attribute value constraint of the newest version of every ai.onnx operator is
enforced: a node that breaks it (one per constrained attribute, made from the schema) is a
node error naming the attribute and the constraint, in inference and in ``opspec check``.
Hand-written cases follow, for the limits relative to an input's rank.
"""
from __future__ import annotations

import numpy as np
import pytest

import opspec

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

from opspec.runtime.schema import AttrType  # noqa: E402

RANK = 4


def _newest_schemas():
    newest: dict[str, opspec.OpSchema] = {}
    for schema in opspec.get_all_schemas_with_history():
        if schema.domain == "" and schema.since_version >= newest.get(schema.name, schema).since_version:
            newest[schema.name] = schema
    return newest


def _constrained():
    return [(schema, attribute) for _, schema in sorted(_newest_schemas().items())
            for attribute in schema.attributes.values() if attribute.constraint is not None]


def _violation(attribute):
    """A value of the attribute's type that breaks its constraint, for an input of rank RANK."""
    constraint, kind = attribute.constraint, attribute.type
    if kind is AttrType.TENSOR:  # a tensor's limits are on its element count
        return onnx.numpy_helper.from_array(np.zeros((constraint.max_length or 0) + 1, np.float32))
    element = {AttrType.INTS: AttrType.INT, AttrType.FLOATS: AttrType.FLOAT,
               AttrType.STRINGS: AttrType.STRING}.get(kind, kind)
    if constraint.allowed is not None:
        bad = "not_a_choice" if element is AttrType.STRING else max(constraint.allowed) + 1
    elif constraint.minimum is not None:
        bad = constraint.minimum if constraint.exclusive_minimum else constraint.minimum - 1
    elif constraint.maximum is not None:
        bad = constraint.maximum if constraint.exclusive_maximum else constraint.maximum + 1
    elif constraint.axis_of is not None:
        bad = RANK + constraint.axis_extra
    else:
        bad = None
    if element is AttrType.FLOAT and bad is not None:
        bad = float(bad)
    if kind is element:
        return bad
    if bad is not None:
        return [bad]
    one = _ONE[element]
    if constraint.length_of is not None:
        return [one] * (constraint.length_scale * RANK + constraint.length_offset + 1)
    if constraint.length_as is not None:  # the node gives the other list one value (_node_model)
        return [one] * 2
    return [one] * ((constraint.max_length or 0) + 1)


#: A value of each element type.
_ONE = {AttrType.INT: 1, AttrType.FLOAT: 1.0, AttrType.STRING: "a"}


def _node_model(schema, name, value):
    """A one-node model of ``schema`` whose attribute ``name`` is ``value``; every input is a
    graph input, the ones a constraint is relative to of rank RANK (a sequence's elements for
    a sequence), the others of unknown type."""
    relative = {schema.attributes[name].constraint.axis_of, schema.attributes[name].constraint.length_of}
    inputs, names = [], []
    for param in schema.inputs:
        if param.is_optional and param.name not in relative:
            continue
        tensor_types = sorted(t for t in param.types if t.startswith("tensor("))
        sequence_types = sorted(t[4:-1] for t in param.types if t.startswith("seq(tensor("))
        if param.name in relative and (tensor_types or sequence_types):
            elem = getattr(TensorProto, (tensor_types or sequence_types)[0][7:-1].upper())
            make = helper.make_tensor_value_info if tensor_types else helper.make_tensor_sequence_value_info
            inputs.append(make(param.name, elem, [2] * RANK))
        else:
            inputs.append(helper.make_tensor_value_info(param.name, TensorProto.UNDEFINED, None))
        names.append(param.name)
    outputs = [f"out{i}" for i in range(max(1, schema.min_output))]
    attributes = {name: value}
    other = schema.attributes[name].constraint.length_as
    if other is not None:
        attributes[other] = _violation(schema.attributes[other])[:1] or [_ONE[AttrType.INT]]
    node = helper.make_node(schema.name, names, outputs, name="n", **attributes)
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info(o, 0, None) for o in outputs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", schema.since_version)])


CONSTRAINED = _constrained()


@pytest.mark.parametrize("schema,attribute", CONSTRAINED, ids=[f"{s.name}.{a.name}" for s, a in CONSTRAINED])
def test_a_node_that_breaks_a_constraint_is_a_node_error(schema, attribute):
    value = _violation(attribute)
    tensor = attribute.type is AttrType.TENSOR
    constraint = attribute.constraint
    assert tensor or constraint.violations(value) or constraint.axis_of or constraint.length_of or constraint.length_as
    model = _node_model(schema, attribute.name, value)
    errors = opspec.infer(model).errors
    found = [(error, violation) for error in errors for violation in error.violations
             if violation.attribute == attribute.name]
    assert found, errors
    error, violation = found[0]
    shown = f"tensor of shape {list(value.dims)}" if tensor else value
    assert violation.constraint == attribute.constraint.describe() and violation.found == shown
    assert str(violation) in error.message and violation.problem in str(violation)


def _conv(x_shape, w_shape=(4, 3, 3, 3), **attributes):
    graph = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], name="c", **attributes)], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape),
                               helper.make_tensor_value_info("w", TensorProto.FLOAT, w_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_lengths_relative_to_the_input_rank():
    (error,) = opspec.infer(_conv([1, 3, 8, 8], pads=[1, 1, 1])).errors
    assert error.message == ("attribute 'pads' = [1, 1, 1]: has 3 values, but 2 * rank(X) - 4 is 4 for input 'X' "
                             "of rank 4 (constraint: len == 2 * rank(X) - 4)")
    assert opspec.infer(_conv([1, 3, 8, 8], pads=[1, 1, 1, 1], strides=[2, 2])).errors == []
    assert opspec.infer(_conv(["N", "C", "H", "W"], kernel_shape=[3, 3])).errors == []


def test_a_limit_relative_to_an_unknown_rank_is_not_checked():
    assert opspec.infer(_conv(None, None, pads=[1, 1, 1, 1, 1, 1])).errors == []  # 3 spatial axes: fine for rank 5


def test_every_broken_constraint_of_a_node_is_named():
    (error,) = opspec.infer(_conv([1, 3, 8, 8], strides=[0, 1, 1], group=0)).errors
    # one for group, two for strides (a zero, a length)
    assert [(v.attribute, v.found) for v in error.violations] == [("group", 0)] + [("strides", [0, 1, 1])] * 2
    assert error.message == "; ".join(str(violation) for violation in error.violations)


def test_check_gives_constraint_problems_their_code(tmp_path, capsys):
    import json

    from opspec.cli import main

    path = tmp_path / "m.onnx"
    path.write_bytes(_conv([1, 3, 8, 8], auto_pad="SAME").SerializeToString())
    assert main(["check", str(path), "--format", "json"]) == 1
    (problem,) = json.loads(capsys.readouterr().out)["problems"]
    assert problem["code"] == "attribute-value" and problem["node"] == "c"


def test_check_lists_each_broken_constraint_of_a_node_as_a_problem(tmp_path, capsys):
    import json

    from opspec.cli import main

    path = tmp_path / "m.onnx"
    path.write_bytes(_conv([1, 3, 8, 8], auto_pad="SAME", pads=[1, 1, 1]).SerializeToString())
    assert main(["check", str(path), "--format", "json"]) == 1
    problems = json.loads(capsys.readouterr().out)["problems"]
    assert [(p["code"], p["attribute"], p["constraint"], p["found"]) for p in problems] == [
        ("attribute-value", "auto_pad", 'in {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", ""}', "SAME"),
        ("attribute-value", "pads", "len == 2 * rank(X) - 4", [1, 1, 1])]
    assert problems[1]["message"] == ("attribute 'pads' = [1, 1, 1]: has 3 values, but 2 * rank(X) - 4 is 4 for "
                                      "input 'X' of rank 4 (constraint: len == 2 * rank(X) - 4)")


def test_check_reports_a_node_with_broken_constraints_and_another_problem_apart():
    from opspec.runtime.checker import check_model
    from opspec.runtime.ir import load_model

    model = _conv([1, 3, 8, 8], [4, 3, 3, 3], group=0, strides=[1, 0])
    model.graph.node.add().CopyFrom(helper.make_node("Relu", ["y", "extra"], ["z"], name="r"))
    checked = check_model(load_model(model.SerializeToString()).model)
    by_node = [(problem.name, [v.attribute for v in problem.violations]) for problem in checked.nodes]
    assert by_node[:2] == [("c", ["group"]), ("c", ["strides"])] and by_node[2] == ("r", [])


def test_allowed_strings_in_any_case():
    from opspec.codegen.constraints import constraint_problems
    from opspec.codegen.notation import parse_attribute

    spec = parse_attribute("strings in {Relu, Tanh} any case")
    constraint = spec.constraint
    assert constraint is not None and constraint.ignore_case and constraint.allowed == ("Relu", "Tanh")
    assert constraint.violations(["relu", "TANH", "Tanh"]) == []
    assert constraint.violations(["Relu", "leaky"]) == ["'leaky' is not one of 'Relu', 'Tanh'"]
    assert constraint.describe() == 'in {"Relu", "Tanh"} any case'
    assert parse_attribute(f"strings {constraint.describe()}").constraint == constraint
    assert constraint_problems(spec.type, constraint, []) == []
    flags, exact = parse_attribute("ints in {0, 1} any case").constraint, parse_attribute("strings in {Relu}").constraint
    assert flags is not None and exact is not None
    assert constraint_problems(AttrType.INTS, flags, []) == ["'any case' needs allowed values of a string type, not ints"]
    assert exact.violations(["relu"]) == ["'relu' is not one of 'Relu'"]


def test_a_sequence_axis_is_checked_against_its_elements_rank():
    sequence = helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, [2, 3])
    for axis, new_axis, wrong in ((2, 1, False), (-3, 1, False), (3, 0, True), (-4, 1, True)):
        graph = helper.make_graph([helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=axis, new_axis=new_axis)],
                                  "g", [sequence], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
        violations = [v for error in opspec.infer(model).errors for v in error.violations]
        assert [(v.attribute, v.found) for v in violations] == ([("axis", axis)] if wrong else []), (axis, new_axis)


def test_a_list_as_long_as_another():
    from opspec.codegen.constraints import constraint_problems
    from opspec.codegen.notation import parse_attribute

    constraint = parse_attribute("floats len == len(indexes)").constraint
    assert constraint is not None and constraint.length_as == "indexes" and constraint.describe() == "len == len(indexes)"
    assert parse_attribute(f"floats {constraint.describe()}").constraint == constraint
    assert constraint_problems(AttrType.FLOATS, constraint, [], {"indexes": AttrType.INTS}) == []
    assert constraint_problems(AttrType.FLOATS, constraint, [], {"indexes": AttrType.INT}) == [
        "len(indexes) names no list attribute of this version"]
    assert constraint_problems(AttrType.FLOAT, constraint, [], {"indexes": AttrType.INTS}) == [
        "a length (len) needs a list type, not float"]


def test_a_tensor_length_counts_its_elements():
    from opspec.codegen.constraints import constraint_problems
    from opspec.codegen.notation import parse_attribute

    length, bound = parse_attribute("tensor len == 1").constraint, parse_attribute("tensor > 0").constraint
    assert length is not None and bound is not None
    assert constraint_problems(AttrType.TENSOR, length, []) == []
    assert constraint_problems(AttrType.TENSOR, bound, []) == [
        "a bound (>, >=, <, <=) needs a number or a list of numbers, not tensor"]
    for shape, wrong in (((1,), False), ((), False), ((2,), True), ((2, 3), True), ((0,), True)):
        value = onnx.numpy_helper.from_array(np.zeros(shape, np.float32))
        graph = helper.make_graph([helper.make_node("ConstantOfShape", ["s"], ["y"], name="c", value=value)], "g",
                                  [helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
        errors = opspec.infer(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])).errors
        violations = [violation for error in errors for violation in error.violations]
        assert [(v.attribute, v.found) for v in violations] == ([("value", f"tensor of shape {list(shape)}")]
                                                                if wrong else []), shape
