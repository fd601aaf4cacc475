"""Every schema in opdefs equals onnx's, field by field (doc text excluded), in every domain."""
from __future__ import annotations

import pytest
from onnx_parity import differences, onnx_schemas, report

import opspec


@pytest.fixture(scope="module")
def onnx_all():
    return onnx_schemas()


def _ours():
    return {(s.domain, s.name, s.since_version): s for s in opspec.get_all_schemas_with_history()}


def test_every_op_in_opdefs_has_all_of_onnxs_versions(onnx_all):
    ours = _ours()
    names = {(domain, name) for domain, name, _ in ours}
    assert set(ours) == {key for key in onnx_all if key[:2] in names}


def test_every_schema_matches_onnx(onnx_all):
    problems = [line for key, ours in sorted(_ours().items(), key=lambda item: item[0]) if key in onnx_all
                for line in differences(ours, onnx_all[key])]
    assert problems == []


def test_every_schema_of_the_standard_set_is_one_of_onnxs(onnx_all):
    """A schema onnx does not have belongs in a layered op set (opdefs/onnxruntime), not in the standard one."""
    assert sorted(key for key in _ours() if key not in onnx_all) == []


def test_the_coverage_report_names_each_domain(onnx_all):
    text = report()
    assert all(f"{domain or 'ai.onnx':<28}" in text for domain, _, _ in onnx_all)


@pytest.mark.parametrize("field, change", [
    ("min_input", lambda s: s._replace(min_input=s.min_input + 1)),
    ("inputs", lambda s: s._replace(inputs=s.inputs[:1])),
    ("attributes", lambda s: s._replace(attributes={})),
    ("type_constraints", lambda s: s._replace(type_constraints=())),
    ("type_constraint order", lambda s: s._replace(type_constraints=s.type_constraints[::-1])),
    ("deprecated", lambda s: s._replace(deprecated=True)),
    ("support_level", lambda s: s._replace(support_level=s.SupportType.EXPERIMENTAL)),
    ("node_determinism", lambda s: s._replace(node_determinism=s.NodeDeterminism.Deterministic)),
    ("has_context_dependent_function", lambda s: s._replace(context_dependent_function_opset_versions=(11,))),
])
def test_the_comparison_notices_a_difference(onnx_all, field, change):
    ours = opspec.get_schema("Dropout", 13)
    theirs = onnx_all["", "Dropout", 13]
    assert differences(ours, theirs) == []
    assert any(field in line for line in differences(change(ours), theirs))


def test_the_comparison_notices_a_changed_function_body(onnx_all):
    ours = opspec.get_schema("Range", 11)
    theirs = onnx_all["", "Range", 11]
    assert ours.has_function and differences(ours, theirs) == []
    body = ours.functions[0]
    changed = ours._replace(functions=(body._replace(text=body.text.replace("Ceil", "Floor")),))
    assert any("function" in line for line in differences(changed, theirs))


def test_float_defaults_are_the_float32_values_onnx_stores(onnx_all):
    epsilon = opspec.get_schema("BatchNormalization", 15).attributes["epsilon"].default
    assert epsilon == 9.999999747378752e-06 != 1e-05
    from onnx import helper

    theirs = onnx_all["", "BatchNormalization", 15].attributes["epsilon"].default_value
    assert epsilon == helper.get_attribute_value(theirs)
