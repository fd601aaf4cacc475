"""Tensor data in files beside the model: read inside the model's folder, refused elsewhere."""
from __future__ import annotations

import os

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from opspec.cli import main
from opspec.runtime.ir.external import ExternalData


def _external_shape_model(folder, location, values=(2, 6), offset=None, length=None):
    """Reshape X by an int64 shape tensor whose bytes live in ``location``."""
    tensor = numpy_helper.from_array(np.array(values, dtype=np.int64), "shape")
    tensor.ClearField("raw_data")
    tensor.data_location = TensorProto.EXTERNAL
    entries = {"location": location}
    if offset is not None:
        entries["offset"] = str(offset)
    if length is not None:
        entries["length"] = str(length)
    for key, value in entries.items():
        tensor.external_data.add(key=key, value=value)
    graph = helper.make_graph([helper.make_node("Reshape", ["X", "shape"], ["Y"], name="reshape")], "g",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, [3, 4])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], [tensor])
    path = folder / "model.onnx"
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    return path


def _output_row(out):
    return [line.split() for line in out.splitlines() if line.startswith("Y ")][0]


def test_data_beside_the_model_is_read(tmp_path, capsys):
    (tmp_path / "weights.bin").write_bytes(b"pad!" + np.array([2, 6], dtype=np.int64).tobytes())
    path = _external_shape_model(tmp_path, "weights.bin", offset=4, length=16)
    assert main(["infer", str(path)]) == 0
    assert _output_row(capsys.readouterr().out)[-2:] == ["(2,", "6)"]


@pytest.mark.parametrize("location, why", [
    ("/etc/passwd", "is not relative to the model's folder"),
    ("../outside.bin", "leaves the model's folder"),
    ("sub/../../outside.bin", "leaves the model's folder"),
    ("link.bin", "leads outside the model's folder"),
])
def test_data_outside_the_folder_is_refused_and_never_read(tmp_path, capsys, location, why):
    inside = tmp_path / "model"
    inside.mkdir()
    outside = tmp_path / "outside.bin"
    outside.write_bytes(np.array([2, 6], dtype=np.int64).tobytes())
    os.symlink(outside, inside / "link.bin")
    path = _external_shape_model(inside, location)
    assert main(["infer", str(path)]) == 0
    out = capsys.readouterr().out
    assert "(2, 6)" not in out
    assert f"tensor 'shape': external data location '{location}' {why}" in out
    assert main(["check", str(path)]) == 1
    assert why in capsys.readouterr().out


def test_hostile_offsets_and_sizes_read_nothing_big(tmp_path):
    (tmp_path / "w.bin").write_bytes(b"\0" * 4096)
    tensor = TensorProto(name="t", data_type=TensorProto.INT64, dims=[2], data_location=TensorProto.EXTERNAL)
    tensor.external_data.add(key="location", value="w.bin")
    reader = ExternalData(tmp_path)
    assert reader.inlined(tensor, 16) is None  # no length given: the whole file is too big
    tensor.external_data.add(key="length", value="-1")
    assert reader.inlined(tensor, 16) is None and "negative" in reader.refusals[-1]
    missing = TensorProto(name="m", data_type=TensorProto.INT64, dims=[2], data_location=TensorProto.EXTERNAL)
    missing.external_data.add(key="location", value="nope.bin")
    assert reader.inlined(missing, 16) is None and "cannot read external data 'nope.bin'" in reader.refusals[-1]


def test_the_python_api_reads_data_beside_a_model_given_by_path(tmp_path):
    import opspec

    (tmp_path / "weights.bin").write_bytes(np.array([2, 6], dtype=np.int64).tobytes())
    path = _external_shape_model(tmp_path, "weights.bin")
    result = opspec.infer(str(path))
    assert result.values["Y"][0].shape == (2, 6) and result.external_refusals == []


def test_the_python_api_refuses_data_outside_the_folder(tmp_path):
    import opspec

    inside = tmp_path / "model"
    inside.mkdir()
    (tmp_path / "outside.bin").write_bytes(np.array([2, 6], dtype=np.int64).tobytes())
    result = opspec.infer(str(_external_shape_model(inside, "../outside.bin")))
    assert result.values["Y"][0].shape != (2, 6)
    assert result.external_refusals == ["tensor 'shape': external data location '../outside.bin' leaves the "
                                        "model's folder; not read"]
