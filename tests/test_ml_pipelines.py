"""Classical ML pipelines (ai.onnx.ml): every value typed, batch dims carried through.

The expected shapes are what onnxruntime produces when it runs these pipelines.
"""
from __future__ import annotations

import onnx.shape_inference
import pytest
from ml_pipelines import impute_normalize, logistic, onehot_trees

import opspec
from opspec.runtime.contract import MapType, SequenceType, TensorType
from opspec.runtime.shape import Sym

N = Sym("N")
F, I64 = 1, 7


def values(model):
    result = opspec.infer(model, check_type=True)
    assert result.errors == [] and not result.unknown_ops
    return {name: value for name, (value, _) in result.values.items()}


def test_scaler_logistic_regression_zipmap():
    typed = values(logistic())
    assert typed["scaled"] == TensorType(F, (N, 4))
    assert typed["label"] == TensorType(I64, (N,))
    assert typed["probabilities"] == TensorType(F, (N, 3))
    assert typed["output_probability"] == SequenceType(MapType(I64, TensorType(F, None)))


def test_one_hot_encoder_and_tree_ensemble():
    typed = values(onehot_trees())
    assert typed["onehot"] == TensorType(F, (N, 1, 3))
    assert typed["features"] == TensorType(F, (N, 3))
    assert typed["variable"] == TensorType(F, (N, 1))


def test_imputer_and_normalizer():
    typed = values(impute_normalize())
    assert typed["imputed"] == typed["normalized"] == TensorType(F, (N, 3))


@pytest.mark.parametrize("build", [logistic, onehot_trees, impute_normalize])
def test_at_least_as_exact_as_onnx(build):
    model = build()
    theirs = onnx.shape_inference.infer_shapes(model)
    ours = opspec.infer_shapes(model)

    def known(m):
        found = {}
        for vi in list(m.graph.value_info) + list(m.graph.output):
            if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
                found[vi.name] = [d.dim_value or d.dim_param or None for d in vi.type.tensor_type.shape.dim]
        return found

    mine = known(ours)
    for name, dims in known(theirs).items():
        assert name in mine and len(mine[name]) == len(dims)
        for a, b in zip(mine[name], dims):
            assert b is None or isinstance(b, str) or a == b, (name, mine[name], dims)


def _single(op, attributes, inputs, outputs=1, opset=3):
    from onnx import helper

    names = [f"y{i}" for i in range(outputs)]
    node = helper.make_node(op, [name for name, _ in inputs], names, domain="ai.onnx.ml", **attributes)
    graph = helper.make_graph([node], "g", [helper.make_value_info(name, t) for name, t in inputs],
                              [helper.make_value_info(n, helper.TypeProto()) for n in names])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("ai.onnx.ml", opset),
                                                   helper.make_opsetid("", 17)])


def _tensor(elem, shape):
    from onnx import helper

    return helper.make_tensor_type_proto(elem, shape)


SINGLE = [
    ("LabelEncoder", {"keys_strings": ["a", "b"], "values_int64s": [1, 2]}, [("x", _tensor(8, ["N"]))], 1, 2),
    ("LabelEncoder", {"keys_int64s": [1, 2], "values_floats": [0.5, 1.5]}, [("x", _tensor(7, ["N", 2]))], 1, 4),
    ("CategoryMapper", {"cats_strings": ["a"], "cats_int64s": [1]}, [("x", _tensor(8, ["N"]))], 1, 1),
    ("LinearRegressor", {"coefficients": [1.0] * 6, "intercepts": [0.0, 0.0], "targets": 2},
     [("x", _tensor(1, ["N", 3]))], 1, 1),
    ("FeatureVectorizer", {"inputdimensions": [2, 3]}, [("a", _tensor(1, ["N", 2])), ("b", _tensor(1, ["N", 3]))],
     1, 1),
    ("ArrayFeatureExtractor", {}, [("x", _tensor(1, ["N", 5])), ("i", _tensor(7, [2]))], 1, 1),
    ("OneHotEncoder", {"cats_int64s": [1, 2, 3, 4]}, [("x", _tensor(7, ["N"]))], 1, 1),
]


@pytest.mark.parametrize("op, attributes, inputs, outputs, opset", SINGLE, ids=[c[0] for c in SINGLE])
def test_single_ml_ops_are_typed_at_least_as_well_as_onnx(op, attributes, inputs, outputs, opset):
    model = _single(op, attributes, inputs, outputs, opset)
    theirs = onnx.shape_inference.infer_shapes(model).graph.output
    result = opspec.infer(model, check_type=True)
    assert result.errors == []
    for output in theirs:
        ours = result.values[output.name][0]
        tensor = output.type.tensor_type
        if tensor.elem_type:
            assert ours.elem == tensor.elem_type, (output.name, ours)
        if tensor.HasField("shape"):
            assert len(ours.shape) == len(tensor.shape.dim)
            for a, b in zip(ours.shape, tensor.shape.dim):
                assert not b.HasField("dim_value") or a == b.dim_value, (output.name, ours, tensor)
