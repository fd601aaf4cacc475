"""The onnx bridge: a YAML op set registered in onnx's registry, checked and inferred by onnx."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import opspec
from onnx_parity import differences
from opspec.onnx_bridge import to_onnx_schema

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """What tests/bridge_cases.py saw, run in its own process on the example domain."""
    from opspec.codegen.generate import REPO, generate

    out = tmp_path_factory.mktemp("bridge") / "bridge_example_ops"
    generate(REPO / "examples/custom_ops/opdefs", out)
    done = subprocess.run([sys.executable, str(HERE / "bridge_cases.py"), str(out)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, f"the bridge run died ({done.returncode}):\n{done.stderr[-3000:]}"
    return json.loads(done.stdout)


def test_every_version_of_the_domain_is_registered_and_removed_again(report):
    registered = {tuple(entry) for entry in report["registered"]}
    assert {("Swish", 1, "com.example"), ("Swish", 2, "com.example"), ("ScaledAdd", 3, "com.example")} <= registered
    assert report["after_deregister"] is False


def test_onnx_checker_accepts_and_onnx_inference_uses_our_rules(report):
    assert report["check"] == ["ok", None]
    assert report["infer"] == ["ok", {"c": [1, ["N", 3]], "y": [1, ["N", 3]]}]


def test_a_failing_rule_is_a_clean_onnx_inference_error(report):
    kind, message = report["mismatched_shapes"]
    assert kind == "InferenceError"
    assert "com.example::ScaledAdd-1" in message and "cannot broadcast" in message


@pytest.mark.parametrize("case", ["missing_input", "extra_input", "attribute_of_wrong_kind",
                                  "type_outside_constraint", "untyped_input", "rank_zero"])
def test_bad_nodes_give_a_result_or_an_inference_error_never_a_crash(report, case):
    assert report[case][0] in {"ok", "InferenceError"}, report[case]


#: What onnx's Python ``OpSchema`` constructor cannot take, so the bridge leaves out.
_NOT_CARRIED = ("function", "has_function", "has_context_dependent_function", "context_dependent", "support_level")


def test_the_onnx_schema_has_our_signature():
    for name, version in (("Conv", 11), ("Clip", 13), ("Split", 18), ("Concat", 13), ("Dropout", 13)):
        ours = opspec.get_schema(name, version)
        problems = [line for line in differences(ours, to_onnx_schema(ours))
                    if not line.split(" ", 1)[1].startswith(_NOT_CARRIED)]
        assert problems == []


def test_a_user_rule_from_the_op_set_infers_inside_onnx(report):
    """PixelShuffle's rule lives in the example tree's rules/ folder, not in opspec."""
    assert report["user_rule"] == ["ok", {"y": [1, ["N", 2, "2*H", 10]]}]


def test_a_user_rule_rejecting_a_node_is_a_clean_onnx_inference_error(report):
    kind, message = report["user_rule_bad_node"]
    assert kind == "InferenceError" and "do not divide into blocks of 3x3" in message
