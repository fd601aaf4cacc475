"""Every schema of the built-in slice equals onnx's, field by field (doc text excluded)."""
from __future__ import annotations

import pytest
from onnx_parity import differences

import opspec

SLICE = """Abs Add And ArgMax AveragePool BatchNormalization Cast Ceil Clip Concat Constant ConstantOfShape
Conv Div Dropout Equal Erf Exp Expand Flatten Floor Gather Gemm GlobalAveragePool Greater Identity
LayerNormalization LeakyRelu Less Log LRN MatMul Max MaxPool Min Mul Neg Not Or Pow Range Reciprocal
ReduceMax ReduceMean ReduceSum Relu Reshape Shape Sigmoid Slice Softmax Split Sqrt Squeeze Sub Sum Tanh
Transpose Unsqueeze Where""".split()


def test_the_slice_is_complete(onnx_slice):
    ours = {(s.name, s.since_version) for s in opspec.get_all_schemas_with_history() if s.domain == ""}
    assert sorted({name for name, _ in ours}) == sorted(SLICE)
    assert ours == set(onnx_slice)
    assert len(ours) == 265


def test_every_schema_matches_onnx(onnx_slice):
    problems = [line for (name, version), theirs in sorted(onnx_slice.items())
                for line in differences(opspec.get_schema(name, version), theirs)]
    assert problems == []


@pytest.mark.parametrize("field, change", [
    ("min_input", lambda s: s._replace(min_input=s.min_input + 1)),
    ("inputs", lambda s: s._replace(inputs=s.inputs[:1])),
    ("attributes", lambda s: s._replace(attributes={})),
    ("type_constraints", lambda s: s._replace(type_constraints=())),
    ("deprecated", lambda s: s._replace(deprecated=True)),
])
def test_the_comparison_notices_a_difference(onnx_slice, field, change):
    ours = opspec.get_schema("Conv", 11)
    assert differences(ours, onnx_slice["Conv", 11]) == []
    assert any(field in line for line in differences(change(ours), onnx_slice["Conv", 11]))


def test_float_defaults_are_the_float32_values_onnx_stores(onnx_slice):
    epsilon = opspec.get_schema("BatchNormalization", 15).attributes["epsilon"].default
    assert epsilon == 9.999999747378752e-06 != 1e-05
    from onnx import helper

    theirs = onnx_slice["BatchNormalization", 15].attributes["epsilon"].default_value
    assert epsilon == helper.get_attribute_value(theirs)
