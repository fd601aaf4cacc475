"""The CNNs shipped in onnx's wheel (IR version 3: every initializer is also a graph input).

onnx infers every value of these models exactly, using the initializers' data; opspec
must do as well, and never disagree with it.
"""
from __future__ import annotations

from pathlib import Path

import onnx
import onnx.shape_inference
import pytest

import opspec

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
MODELS = sorted(LIGHT.glob("*.onnx"))


def exact(model) -> dict:
    """Values whose type is a tensor with every dim known: name -> (elem, dims)."""
    found = {}
    for value in list(model.graph.value_info) + list(model.graph.output):
        tensor = value.type.tensor_type
        if tensor.HasField("shape") and all(d.HasField("dim_value") for d in tensor.shape.dim):
            found[value.name] = (tensor.elem_type, tuple(d.dim_value for d in tensor.shape.dim))
    return found


def test_the_wheel_ships_the_models():
    assert len(MODELS) >= 9


@pytest.mark.parametrize("path", MODELS, ids=[p.stem for p in MODELS])
def test_light_model_is_as_exact_as_onnx(path):
    model = onnx.load(str(path))
    assert model.ir_version < 4
    theirs = exact(onnx.shape_inference.infer_shapes(model, data_prop=True))
    result = opspec.infer(model, data_prop=True)
    ours = exact(result.model)
    assert result.errors == [] and not result.unknown_ops
    assert {name: ours.get(name) for name in theirs} == theirs
    assert len(ours) >= len(theirs)


def test_overridable_initializers_know_less():
    """Taking listed initializers as overridable (the strict reading) must not invent dims."""
    model = onnx.load(str(LIGHT / "light_squeezenet.onnx"))
    strict = opspec.infer(model, overridable_initializers=True)
    assert strict.errors == []
    loose = exact(opspec.infer(model).model)
    assert len(exact(strict.model)) < len(loose)
    assert all(loose[name] == dims for name, dims in exact(strict.model).items())
