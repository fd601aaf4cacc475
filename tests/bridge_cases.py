"""Runs the onnx bridge on the example domain in a fresh process; prints one JSON report.

With ``--without-python-inference`` the bridge is told the installed onnx cannot attach
a Python inference function (as onnx 1.17 and 1.18 cannot), whatever onnx is installed.

Used by test_bridge.py, in a child process so that a crash inside onnx shows as a
failed test rather than taking pytest down, and so that registering the example domain
does not leak into other tests.
"""
from __future__ import annotations

import json
import sys
import warnings

import onnx
from onnx import TensorProto, helper

import opspec
from opspec import onnx_bridge
from opspec.runtime.onnx_features import OnnxFeatures, onnx_features

F = TensorProto.FLOAT


def model(nodes, inputs, version=1, output=("y", F, ["N", 3])):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(*i) for i in inputs],
                              [helper.make_tensor_value_info(*output)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                                   helper.make_opsetid("com.example", version)])


def shapes(inferred):
    found = {}
    for info in list(inferred.graph.value_info) + list(inferred.graph.output):
        tensor = info.type.tensor_type
        found[info.name] = [tensor.elem_type, [d.dim_param or d.dim_value for d in tensor.shape.dim]]
    return found


def outcome(action):
    """``["ok", result]`` or ``[error class name, message]``: never lets an error escape."""
    try:
        return ["ok", action()]
    except Exception as error:  # noqa: BLE001 - the report says what was raised
        return [type(error).__name__, str(error)]


def main(package: str, without_python_inference: bool = False) -> None:
    opspec.register(package)
    features = onnx_features()
    if without_python_inference:
        features = OnnxFeatures(features.version, features.node_determinism, python_inference=False)
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        registered = onnx_bridge.register_with_onnx("com.example", features=features)
    report: dict[str, object] = {
        "registered": registered, "python_inference": features.python_inference,
        "warnings": [f"{w.category.__name__}: {w.message}" for w in warned],
    }
    add = helper.make_node("ScaledAdd", ["a", "b"], ["c"], domain="com.example", alpha=2.0)
    swish = helper.make_node("Swish", ["c"], ["y"], domain="com.example")
    good = model([add, swish], [("a", F, ["N", 3]), ("b", F, [1, 3])])
    report["check"] = outcome(lambda: onnx.checker.check_model(good, full_check=True))
    report["infer"] = outcome(lambda: shapes(onnx.shape_inference.infer_shapes(good, strict_mode=True)))
    shuffle = helper.make_node("PixelShuffle", ["a"], ["y"], domain="com.example", blocksize=2)
    user_rule = model([shuffle], [("a", F, ["N", 8, "H", 5])], output=("y", F, None))
    report["user_rule"] = outcome(lambda: shapes(onnx.shape_inference.infer_shapes(user_rule, strict_mode=True)))
    bad_block = helper.make_node("PixelShuffle", ["a"], ["y"], domain="com.example", blocksize=3)
    report["user_rule_bad_node"] = outcome(lambda: shapes(onnx.shape_inference.infer_shapes(
        model([bad_block], [("a", F, ["N", 8, "H", 5])], output=("y", F, None)), strict_mode=True)))
    bad = {
        "mismatched_shapes": model([add, swish], [("a", F, [2, 3]), ("b", F, [4, 3])]),
        "missing_input": model([helper.make_node("ScaledAdd", ["a"], ["c"], domain="com.example"), swish],
                               [("a", F, [2, 3])]),
        "extra_input": model([helper.make_node("Swish", ["a", "a"], ["y"], domain="com.example")],
                             [("a", F, [2, 3])]),
        "attribute_of_wrong_kind": model([helper.make_node("Swish", ["a"], ["y"], domain="com.example", beta="x")],
                                         [("a", F, [2, 3])]),
        "type_outside_constraint": model([helper.make_node("Swish", ["a"], ["y"], domain="com.example")],
                                         [("a", TensorProto.INT8, [2, 3])]),
        "untyped_input": model([helper.make_node("Swish", ["a"], ["y"], domain="com.example")],
                               [("a", F, None)]),
        "rank_zero": model([add, swish], [("a", F, []), ("b", F, [])]),
    }
    for name, case in bad.items():
        report[name] = outcome(lambda case=case: shapes(onnx.shape_inference.infer_shapes(case, strict_mode=True)))
    onnx_bridge.deregister_from_onnx("com.example")
    report["after_deregister"] = onnx.defs.has("Swish", "com.example")
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1], "--without-python-inference" in sys.argv[2:])
