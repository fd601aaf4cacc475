"""The onnx bridge: a YAML op set registered in onnx's registry, checked and inferred by onnx.

Every case runs twice: with what the installed onnx offers, and as on an onnx that cannot
attach a Python inference function (1.17, 1.18), where the ops are registered without
their rules and the bridge says so.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import opspec
from onnx_parity import differences
from opspec.onnx_bridge import OnnxUnavailable, register_with_onnx, to_onnx_schema
from opspec.runtime.onnx_features import OnnxFeatures, onnx_features, require_minimum

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


@pytest.fixture(scope="module")
def example_ops(tmp_path_factory) -> Path:
    from opspec.codegen.generate import generate

    out = tmp_path_factory.mktemp("bridge") / "bridge_example_ops"
    generate(REPO / "examples/custom_ops/opdefs", out)
    return out


@pytest.fixture(scope="module", params=["installed onnx", "without python inference"])
def report(request, example_ops):
    """What tests/bridge_cases.py saw, run in its own process on the example domain."""
    flags = ["--without-python-inference"] if request.param == "without python inference" else []
    done = subprocess.run([sys.executable, str(HERE / "bridge_cases.py"), str(example_ops), *flags],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"the bridge run died ({done.returncode}):\n{done.stderr[-3000:]}"
    return json.loads(done.stdout)


def test_every_version_of_the_domain_is_registered_and_removed_again(report):
    registered = {tuple(entry) for entry in report["registered"]}
    assert {("Swish", 1, "com.example"), ("Swish", 2, "com.example"), ("ScaledAdd", 3, "com.example")} <= registered
    assert report["after_deregister"] is False


def test_onnx_checker_accepts_and_onnx_inference_uses_our_rules(report):
    assert report["check"] == ["ok", None]
    if report["python_inference"]:
        assert report["infer"] == ["ok", {"c": [1, ["N", 3]], "y": [1, ["N", 3]]}]
        assert report["warnings"] == []
    else:  # onnx knows the ops but not their rules: the intermediate value stays untyped, and we say so
        assert report["infer"] == ["ok", {"y": [1, ["N", 3]]}]
        [warning] = report["warnings"]
        assert warning.startswith("OnnxFeatureWarning: onnx ") and "cannot attach a Python inference" in warning
        assert "opspec.infer_shapes" in warning


def test_a_failing_rule_is_a_clean_onnx_inference_error(report):
    kind, message = report["mismatched_shapes"]
    if not report["python_inference"]:
        assert kind == "ok"  # no rule ran, so nothing was found wrong
        return
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
    expected = [1, ["N", 2, "2*H", 10]] if report["python_inference"] else [1, []]
    assert report["user_rule"] == ["ok", {"y": expected}]


def test_a_user_rule_rejecting_a_node_is_a_clean_onnx_inference_error(report):
    kind, message = report["user_rule_bad_node"]
    if report["python_inference"]:
        assert kind == "InferenceError" and "do not divide into blocks of 3x3" in message
    else:
        assert kind == "ok"


def test_an_onnx_without_determinism_or_python_inference_still_gets_every_schema():
    """What onnx 1.17 and 1.18 lack is left out of the schema, not a crash."""
    old = OnnxFeatures("1.18.0", node_determinism=False, python_inference=False)
    ours = opspec.get_schema("Dropout", 13)
    built = to_onnx_schema(ours, old)
    assert (built.name, built.since_version, [p.name for p in built.inputs]) == ("Dropout", 13, ["data", "ratio",
                                                                                              "training_mode"])
    assert not built.has_type_and_shape_inference_function
    assert to_onnx_schema(ours).has_type_and_shape_inference_function == onnx_features().python_inference


@pytest.mark.parametrize("version", ["1.17.0", "1.18.1", "1.20.0rc1", "2.0"])
def test_onnx_from_the_tested_minimum_on_is_accepted(version):
    require_minimum(version)


@pytest.mark.parametrize("version", ["1.16.2", "1.9.1", "0.4"])
def test_an_onnx_older_than_the_minimum_is_refused_with_what_to_install(version):
    with pytest.raises(OnnxUnavailable, match=rf"^onnx {version} is older than 1\.17.*pip install 'onnx>=1\.17'"):
        require_minimum(version)


def test_without_onnx_the_bridge_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)  # what an environment without onnx gives an import
    with pytest.raises(OnnxUnavailable, match=r"^this needs the onnx package: pip install 'onnx>=1\.17'$"):
        register_with_onnx("com.microsoft")
