"""The engine's seams: rule flags in declarations, the one type-string parser, the public rule-test helper."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
from onnx import TensorProto, helper

import opspec
from opspec.codegen.diagnostics import Diagnostics
from opspec.codegen.rule_specs import read_catalogue
from opspec.runtime.contract import MapType, OptionalType, SequenceType, SparseTensorType, TensorType
from opspec.runtime.contract.declare import DeclarationError, make_spec
from opspec.runtime.contract.elements import ElementType
from opspec.runtime.inference.read_types import type_from_string
from opspec.runtime.rulebook import RULES
from opspec.runtime.testing import INT64, run_rule, t, vec
from opspec.runtime.types import TypeStringError, formal_type_string, normalize_type_string, parse_type_string

TESTS = Path(__file__).resolve().parent.parent


def test_a_rule_flag_is_read_alike_at_run_time_and_by_the_compiler():
    constant, elementwise = RULES.spec("constant"), RULES.spec("elementwise")
    assert constant is not None and constant.constant_output
    assert elementwise is not None and not elementwise.constant_output
    catalogue = read_catalogue(None, Diagnostics())
    assert catalogue["constant"].spec == RULES.spec("constant")


def test_element_type_names_in_a_declaration_are_read_as_their_numbers(tmp_path):
    # a rule's option default written FLOAT reads as 1 for the compiler as at run time
    catalogue = read_catalogue(None, Diagnostics())
    for name in ("random_tensor", "multinomial"):
        assert catalogue[name].spec == RULES.spec(name)
    (tmp_path / "mine.py").write_text(
        "from opspec.runtime.contract import INT64, option, rule\n"
        "from opspec.runtime.contract.elements import DOUBLE as WIDE\n"
        "@rule('mine', 'A rule.', narrow=option('int', INT64), wide=option('int', WIDE))\n"
        "def mine(ctx):\n    pass\n")
    diagnostics = Diagnostics()
    declared = read_catalogue(tmp_path, diagnostics)["mine"]
    assert not diagnostics.items
    assert declared.spec.defaults() == {"narrow": ElementType.INT64, "wide": ElementType.DOUBLE}


def test_a_rule_flag_must_be_a_boolean():
    assert make_spec("r", "A rule.", {"constant_output": True}).constant_output
    with pytest.raises(DeclarationError, match="flag 'constant_output' must be True or False"):
        make_spec("r", "A rule.", {"constant_output": 1})


def test_a_constant_rules_data_flows_without_data_propagation():
    # Reshape's target shape comes from a Constant: known without data_prop because the
    # constant rule's declaration says its output data is the node's own.
    target = helper.make_tensor("shape", TensorProto.INT64, [2], [3, 2])
    graph = helper.make_graph(
        [helper.make_node("Constant", [], ["s"], value=target), helper.make_node("Reshape", ["x", "s"], ["y"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    out = opspec.infer_shapes(model, data_prop=False)
    dims = [d.dim_value for d in out.graph.output[0].type.tensor_type.shape.dim]
    assert dims == [3, 2]


@pytest.mark.parametrize("text, canonical, formal, value", [
    ("tensor(float)", "tensor(float)", "tensor(float)", TensorType(1, None)),
    ("sparse_tensor( int64 )", "sparse_tensor(int64)", "sparse_tensor(int64)", SparseTensorType(7, None)),
    ("seq(tensor(int64))", "seq(tensor(int64))", "seq(tensor(int64))", SequenceType(TensorType(7, None))),
    ("optional(seq(tensor(bool)))", "optional(seq(tensor(bool)))", "optional(seq(tensor(bool)))",
     OptionalType(SequenceType(TensorType(9, None)))),
    ("map(int64,float)", "map(int64, float)", "map(int64,tensor(float))", MapType(7, TensorType(1, None))),
    ("seq(map(string, seq(tensor(float))))", "seq(map(string, seq(tensor(float))))",
     "seq(map(string,seq(tensor(float))))", SequenceType(MapType(8, SequenceType(TensorType(1, None))))),
])
def test_one_parser_reads_every_type_string(text, canonical, formal, value):
    assert parse_type_string(text) == parse_type_string(canonical)
    assert normalize_type_string(text) == canonical
    assert formal_type_string(text) == formal
    assert type_from_string(text) == value


@pytest.mark.parametrize("text, message", [
    ("tensor(float", "is not a type"),
    ("vector(float)", "is not a type"),
    ("tensor(float128)", "unknown element type 'float128'"),
    ("map(float, float)", "a map needs a key type"),
    ("seq(tensor(foo))", "unknown element type 'foo' in 'tensor(foo)'"),
])
def test_a_malformed_type_string_is_one_clear_error(text, message):
    with pytest.raises(TypeStringError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_type_string(text)
    assert formal_type_string(text) == text.replace(" ", "")  # formal spelling never raises


def test_the_rule_helper_runs_a_rule_as_the_engine_does():
    ctx = run_rule("Reshape", 14, [t(2, 3), t(2, elem=INT64)], data=[None, vec(3, 2)])
    assert ctx.output_type(0) == t(3, 2)
    ctx = run_rule("Cast", 19, [t(4)], {"to": INT64})
    assert ctx.output_type(0) == t(4, elem=INT64)


def test_no_test_imports_a_private_name_of_the_engine():
    offenders = []
    for path in TESTS.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("opspec.runtime.inference"):
                offenders += [f"{path.name}: {alias.name}" for alias in node.names if alias.name.startswith("_")]
    assert offenders == []
