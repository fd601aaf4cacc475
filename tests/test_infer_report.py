"""The infer report is built once and rendered twice: the text and the JSON say the same things."""
from __future__ import annotations

import io
import json
from collections import Counter

from onnx import TensorProto, helper

import opspec
from opspec.infer_report import infer_report, render_json, render_text


def _result():
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Mystery", ["a"], ["b"], domain="com.unknown"),
             helper.make_node("Gelu", ["a"], ["c"], domain="com.microsoft")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2])],
                              [helper.make_tensor_value_info("b", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("c", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.unknown", 1)])
    return opspec.infer(model)


def test_text_and_json_render_one_report():
    result = _result()
    report = infer_report("m.onnx", 1, result, result.value_count, lambda: [], Counter(), [("ai.onnx", "Foo", 3)],
                          None, [])
    text, document = io.StringIO(), io.StringIO()
    render_text(report, text, quiet=False)
    render_json(report, document)
    rendered = json.loads(document.getvalue())
    assert [(op["domain"], op["op_type"]) for op in rendered["unknown_ops"]] == [("com.unknown", "Mystery")]
    assert "Mystery (domain 'com.unknown')" in text.getvalue()
    assert rendered["implied_opsets"] == [{"domain": "com.microsoft", "version": 1}]
    assert "com.microsoft version 1" in text.getvalue()
    assert rendered["ops_without_rule"] == [{"domain": "ai.onnx", "op_type": "Foo", "version": 3}]
    assert "Foo version 3 (domain 'ai.onnx')" in text.getvalue()
    assert rendered["ok"] is False and rendered["nodes"] == 3
    assert text.getvalue().rstrip().endswith("1 unknown op, 1 op without a rule")


def test_a_quiet_report_without_problems_says_nothing():
    result = opspec.infer(helper.make_model(helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]), opset_imports=[helper.make_opsetid("", 17)]))
    report = infer_report("m.onnx", 0, result, result.value_count, lambda: [], Counter(), [], None, [])
    quiet = io.StringIO()
    render_text(report, quiet, quiet=True)
    assert not report.has_problems and quiet.getvalue() == ""
