"""The op set is handed to inference, the rule-test helper and the converter: a second one answers
for its own call only, and nothing global changes."""
from __future__ import annotations

import copy
from dataclasses import replace

import onnx
import pytest
from onnx import TensorProto, helper

import opspec
from opspec.runtime import defs
from opspec.runtime.op_set import installed_op_set, standard_op_set
from opspec.runtime.registry import SchemaError
from opspec.runtime.rulebook import RuleBook
from opspec.runtime.testing import run_rule, t


class _NoRules(RuleBook):
    """A rule book that knows no rule."""

    def lookup(self, name):
        return None

    def spec(self, name):
        return None


def _model(node, imports):
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid(domain, version) for domain, version in imports])


def _dims(model):
    kind = model.graph.output[0].type.tensor_type
    return [dim.dim_param or dim.dim_value for dim in kind.shape.dim] if kind.HasField("shape") else None


def test_the_rules_of_the_op_set_given_are_the_ones_run():
    model = _model(helper.make_node("Relu", ["x"], ["y"]), [("", 17)])
    assert _dims(opspec.infer_shapes(model)) == ["N", 2]
    without = opspec.infer_shapes(model, op_set=replace(installed_op_set(), rules=_NoRules()))
    assert _dims(without) is None and without.graph.output[0].type.tensor_type.elem_type == TensorProto.FLOAT
    assert _dims(opspec.infer_shapes(model)) == ["N", 2]  # the installed op set is as it was


def test_an_op_outside_the_op_set_given_is_unknown_there_alone():
    model = _model(helper.make_node("Gelu", ["x"], ["y"], domain="com.microsoft"), [("", 17), ("com.microsoft", 1)])
    assert _dims(opspec.infer_shapes(model)) == ["N", 2]
    result = opspec.infer(model, op_set=standard_op_set())
    assert result.unknown_ops == {("com.microsoft", "Gelu")}
    assert installed_op_set().registry is defs.INFERENCE and standard_op_set().registry is defs.REGISTRY


def test_domains_run_without_an_import_are_the_op_sets_own():
    model = _model(helper.make_node("Gelu", ["x"], ["y"], domain="com.microsoft"), [("", 17)])
    assert opspec.infer(model).implied_opsets
    assert not opspec.infer(model, op_set=replace(installed_op_set(), implied_domains=frozenset())).implied_opsets


def test_the_rule_helper_looks_up_in_the_op_set_given():
    assert run_rule("Gelu", None, [t(2, 3)], domain="com.microsoft").output_type(0) == t(2, 3)
    with pytest.raises(SchemaError):
        run_rule("Gelu", None, [t(2, 3)], domain="com.microsoft", op_set=standard_op_set())


def test_the_checker_and_the_converter_take_the_op_set():
    model = _model(helper.make_node("Gelu", ["x"], ["y"], domain="com.microsoft"), [("", 17), ("com.microsoft", 1)])
    opspec.check_model(model, full_check=True, check_custom_domain=True)
    with pytest.raises(opspec.ValidationError, match="Gelu"):
        opspec.check_model(model, full_check=True, check_custom_domain=True, op_set=standard_op_set())
    relu = _model(helper.make_node("Relu", ["x"], ["y"]), [("", 13)])
    converted = opspec.convert_version(relu, 14, op_set=replace(installed_op_set(), rules=_NoRules()))
    assert isinstance(converted, onnx.ModelProto) and _dims(converted) is None
    assert _dims(opspec.convert_version(relu, 14)) == ["N", 2]


def test_binding_plans_are_kept_per_schema_across_entries():
    from opspec.runtime.inference.resolve import schema_entry
    from opspec.runtime.op_set import SchemaCache

    cache, rules = SchemaCache(), installed_op_set().rules
    add, relu = defs.REGISTRY.get_schema("Add", 14), defs.REGISTRY.get_schema("Relu", 14)
    first = schema_entry(add, rules, 14, cache)
    first.plan(2, 1)
    again = schema_entry(add, rules, 14, cache)
    assert again.plans is first.plans and (2, 1) in again.plans  # computed once, reused
    assert schema_entry(relu, rules, 14, cache).plans is not first.plans
    assert schema_entry(add, rules, 14).plans is not first.plans  # no cache: an entry's own
    # Rules that change (as registering a module may) are followed, not the kept rule.
    assert schema_entry(add, _NoRules(), 14, cache).rule is None
    assert schema_entry(add, rules, 14, cache).rule is first.rule is not None
    # Another schema object (as a later registration makes) never sees this one's plans.
    assert cache.get(copy.copy(add)) is None
