"""Structural graph checks, held against onnx.checker: it rejects what we reject, and the
node conformance models it accepts pass here too."""
from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper

from opspec.runtime.inference.graph_checks import check_graphs
from opspec.runtime.ir import load_model

F = TensorProto.FLOAT


def _vi(name):
    return helper.make_tensor_value_info(name, F, [2])


def _model(nodes, inputs=("X",), outputs=("Y",), initializers=(), opsets=(("", 17),)):
    graph = helper.make_graph(nodes, "g", [_vi(i) for i in inputs], [_vi(o) for o in outputs], list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])


def _branch(nodes, outputs):
    return helper.make_graph(nodes, "branch", [], [_vi(o) for o in outputs])


def _if(then_nodes, then_out, name="if"):
    return helper.make_node("If", ["c"], ["Y"], name=name, then_branch=_branch(then_nodes, [then_out]),
                            else_branch=_branch([helper.make_node("Relu", ["X"], ["e"])], ["e"]))


def _weight(name):
    return helper.make_tensor(name, F, [2], [1.0, 2.0])


relu = helper.make_node
BROKEN = {
    "topological order": (
        _model([relu("Relu", ["a"], ["Y"], name="second"), relu("Relu", ["X"], ["a"], name="first")]),
        "node 'second' (Relu, domain 'ai.onnx'): input 'a' is produced by a later node"),
    "undefined input": (
        _model([relu("Relu", ["Z"], ["Y"], name="r")]),
        "node 'r' (Relu, domain 'ai.onnx'): input 'Z' is not defined"),
    "assigned twice": (
        _model([relu("Relu", ["X"], ["Y"], name="a"), relu("Relu", ["X"], ["Y"], name="b")]),
        "node 'b' (Relu, domain 'ai.onnx'): output 'Y' is already defined"),
    "output reassigns an input": (
        _model([relu("Relu", ["X"], ["X"], name="a"), relu("Relu", ["X"], ["Y"], name="b")]),
        "node 'a' (Relu, domain 'ai.onnx'): output 'X' is already defined"),
    "input declared twice": (
        _model([relu("Relu", ["X"], ["Y"])], inputs=("X", "X")),
        "graph 'g': input 'X' is declared more than once"),
    "initializer twice": (
        _model([relu("Add", ["X", "w"], ["Y"])], initializers=[_weight("w"), _weight("w")]),
        "graph 'g': initializer 'w' is declared more than once"),
    "output not produced": (
        _model([relu("Relu", ["X"], ["a"])]),
        "graph 'g': output 'Y' is not produced by any node, input or initializer"),
    "no opset import": (
        _model([relu("Foo", ["X"], ["Y"], domain="com.acme", name="foo")]),
        "node 'foo' (Foo, domain 'com.acme'): domain 'com.acme' has no opset import"),
    "subgraph uses a later outer value": (
        _model([_if([relu("Relu", ["z"], ["t"], name="inner")], "t"), relu("Relu", ["X"], ["z"])],
               inputs=("X", "c"), outputs=("Y", "z")),
        "node 'inner' (Relu, domain 'ai.onnx') in graph 'branch': input 'z' is not defined"),
    "subgraph reassigns an outer value": (
        _model([_if([relu("Relu", ["X"], ["X"], name="inner")], "X")], inputs=("X", "c")),
        "node 'inner' (Relu, domain 'ai.onnx') in graph 'branch': output 'X' is already defined"),
    "subgraph output from outside": (
        _model([_if([], "X")], inputs=("X", "c")),
        "graph 'branch': output 'X' is not produced by any node, input or initializer"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_onnx_and_opspec_both_reject(case):
    model, message = BROKEN[case]
    with pytest.raises(onnx.checker.ValidationError):
        onnx.checker.check_model(model)
    problems = [str(problem) for problem in check_graphs(load_model(model).model)]
    assert any(problem.startswith(message) for problem in problems), problems


def test_outer_values_used_in_a_subgraph_are_fine():
    model = _model([_if([relu("Relu", ["X"], ["t"])], "t")], inputs=("X", "c"))
    onnx.checker.check_model(model)
    assert check_graphs(load_model(model).model) == []


def test_every_conformance_model_onnx_accepts_passes():
    from conformance.harness import cases

    rejected = []
    for case in cases():
        try:
            onnx.checker.check_model(case.model)
        except onnx.checker.ValidationError:
            continue
        problems = check_graphs(load_model(case.model).model)
        if problems:
            rejected.append((case.name, [str(p) for p in problems]))
    assert rejected == []


def test_repeated_node_names_are_fine_as_in_onnx():
    model = _model([relu("Relu", ["X"], ["a"], name="n"), relu("Relu", ["a"], ["Y"], name="n")])
    onnx.checker.check_model(model)
    assert check_graphs(load_model(model).model) == []
