"""One model, one answer: a path, its bytes, an opspec ModelProto and an onnx.ModelProto of
the same model give the same result and the same report, refused external data included."""
from __future__ import annotations

import warnings

import onnx
import pytest
from onnx import TensorProto, helper

import opspec
from opspec.generated.opspec_ir_pb2 import ModelProto as OurModel
from opspec.runtime.inference.api import ExternalDataRefused
from test_external_data import _external_shape_model


def _forms(path):
    data = path.read_bytes()
    return {"path": path, "str": str(path), "bytes": data, "onnx": onnx.ModelProto.FromString(data),
            "opspec": OurModel.FromString(data)}


def _answer(source):
    try:
        result = opspec.infer(source)
    except opspec.ModelLoadError as error:
        return ("ModelLoadError", str(error).split(": ", 1)[-1].split(": not an ONNX model")[-1])
    return ([str(e) for e in result.errors], sorted((name, str(t)) for name, (t, _) in result.values.items()))


def _model():
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _without_opsets(model):
    del model.opset_import[:]


@pytest.mark.parametrize("break_it", [
    lambda model: None,
    lambda model: model.ClearField("ir_version"),
    lambda model: model.ClearField("graph"),
    _without_opsets,
    lambda model: setattr(model, "ir_version", 10**6),
], ids=["whole", "no-ir-version", "no-graph", "no-opset-import", "implausible-ir-version"])
def test_every_form_of_a_model_gets_the_same_answer(tmp_path, break_it):
    model = _model()
    break_it(model)
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    answers = {form: _answer(source) for form, source in _forms(path).items()}
    assert len({repr(answer) for answer in answers.values()}) == 1, answers


@pytest.mark.parametrize("location", ["../outside.bin", "/etc/passwd"])
def test_refused_external_data_is_reported_for_every_form(tmp_path, location):
    folder = tmp_path / "model"
    folder.mkdir()
    path = _external_shape_model(folder, location)
    reports = {form: opspec.infer(source).external_refusals for form, source in _forms(path).items()}
    assert len({tuple(report) for report in reports.values()}) == 1 and len(reports["path"]) == 1, reports
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        opspec.infer_shapes(path)
    assert [str(w.message) for w in caught if w.category is ExternalDataRefused] == reports["path"]


def test_data_a_message_cannot_reach_is_reported_not_silently_dropped(tmp_path):
    path = _external_shape_model(tmp_path, "weights.bin")
    (tmp_path / "weights.bin").write_bytes(b"\x02" + b"\x00" * 7 + b"\x06" + b"\x00" * 7)
    assert opspec.infer(path).external_refusals == []
    for source in (path.read_bytes(), onnx.load(str(path), load_external_data=False)):
        refusals = opspec.infer(source).external_refusals
        assert len(refusals) == 1 and "not given as a file path" in refusals[0], refusals
