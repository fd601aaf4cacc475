"""Every schema of opdefs/onnxruntime equals onnxruntime's own export, field by field; opspec stays onnx's."""
from __future__ import annotations

import pytest
from onnxruntime_parity import differences, onnxruntime_extras, opspec_extras, report

import opspec
import opspec.onnxruntime


@pytest.fixture(scope="module")
def theirs():
    return onnxruntime_extras()


def test_every_schema_onnxruntime_adds_is_in_opdefs(theirs):
    assert sorted(set(theirs) - set(opspec_extras())) == []
    assert sorted(set(opspec_extras()) - set(theirs)) == []


def test_every_schema_matches_onnxruntimes_export(theirs):
    ours = opspec_extras()
    problems = [line for key in sorted(ours) for line in differences(ours[key], theirs[key])]
    assert problems == []


def test_opspec_itself_stays_exactly_onnxs_set():
    import onnx.defs

    standard = {(s.domain, s.name, s.since_version) for s in onnx.defs.get_all_schemas_with_history()}
    assert {(s.domain, s.name, s.since_version) for s in opspec.get_all_schemas_with_history()} == standard


def test_the_onnxruntime_registry_answers_for_both_sets():
    assert opspec.onnxruntime.get_schema("Attention", domain="com.microsoft").domain == "com.microsoft"
    assert opspec.onnxruntime.get_schema("Relu", 14) == opspec.get_schema("Relu", 14)
    # onnxruntime's first LayerNormalization applies where the model's opset has no standard one.
    assert opspec.onnxruntime.get_schema("LayerNormalization", 13).since_version == 1
    assert opspec.onnxruntime.get_schema("LayerNormalization", 17) == opspec.get_schema("LayerNormalization", 17)
    assert not opspec.has("Attention", domain="com.microsoft")
    assert opspec.onnxruntime.has("FastGelu", 1, "com.microsoft")


def test_the_report_counts_each_domain(theirs):
    text = report()
    assert all(f"{domain or 'ai.onnx':<28}" in text for domain, _, _ in theirs)


@pytest.mark.parametrize("change", [
    lambda s: s._replace(min_input=s.min_input + 1),
    lambda s: s._replace(attributes={}),
    lambda s: s._replace(type_constraints=s.type_constraints[::-1]),
    lambda s: s._replace(deprecated=True),
])
def test_the_comparison_notices_a_difference(theirs, change):
    ours = opspec.onnxruntime.get_schema("Attention", 1, "com.microsoft")
    reference = theirs["com.microsoft", "Attention", 1]
    assert differences(ours, reference) == []
    assert differences(change(ours), reference)


def test_every_schema_onnxruntime_infers_has_a_rule(theirs):
    ours = opspec_extras()
    assert sorted(f"{d or 'ai.onnx'}::{n}-{v}" for (d, n, v), schema in theirs.items()
                  if schema.has_type_and_shape_inference_function and ours[d, n, v].inference is None) == []
