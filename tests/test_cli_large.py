"""``opspec infer`` on models too large for a table: the summary counts what the table would
mark, without visiting every value, and the written model is the one the API writes."""
from __future__ import annotations

import re
from collections import Counter

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import opspec
from opspec.cli import main
import models

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _declaring_everything_model() -> onnx.ModelProto:
    """Values of every origin: declared, refined by inference, inferred, left unknown; a node
    output named like a graph input, an initializer, a sparse initializer, value_info that
    nobody produces and value_info that says nothing."""
    nodes = [
        helper.make_node("Relu", ["X"], ["a"]),
        helper.make_node("Add", ["a", "W"], ["b"]),
        helper.make_node("Mystery", ["b"], ["c"], domain="example.unknown"),
        helper.make_node("Relu", ["c"], ["d"]),
        helper.make_node("Relu", ["b"], ["Z"]),  # an output named like a graph input
        helper.make_node("Shape", ["b"], ["s"]),
        helper.make_node("Add", ["b", "S"], ["Y"]),
    ]
    sparse = helper.make_sparse_tensor(numpy_helper.from_array(np.array([1.0], np.float32), "S"),
                                       numpy_helper.from_array(np.array([0], np.int64), "S_indices"), [3])
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("X", F, ["N", 3]), helper.make_tensor_value_info("Z", F, None)],
        [helper.make_tensor_value_info("Y", F, ["N", 3]), helper.make_tensor_value_info("d", F, None),
         helper.make_tensor_value_info("s", 0, None)],
        [numpy_helper.from_array(np.ones(3, np.float32), "W")],
        value_info=[helper.make_tensor_value_info("a", F, ["N", 3]), helper.make_tensor_value_info("b", F, None),
                    helper.make_tensor_value_info("nobody", F, [1]), helper.make_tensor_value_info("c", 0, None)],
        sparse_initializer=[sparse])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


MODELS = {
    "every origin": _declaring_everything_model,
    "transformer": lambda: models.transformer(1),
    "cnn": models.small_cnn,
    "chain": lambda: models.elementwise_chain(20),
}


def _summary(out: str) -> Counter[str]:
    line = next(line for line in out.splitlines() if "(--values lists every value)" in line)
    counts = Counter({origin: int(count.replace(",", ""))
                      for count, origin in re.findall(r"([\d,]+) (inferred|refined|declared|unknown)", line)})
    counts["total"] = int(line.split()[0].replace(",", ""))
    return counts


def _table(out: str) -> Counter[str]:
    lines = out.split("\n\n")[0].splitlines()[1:]
    counts = Counter({"inferred": 0, "refined": 0, "declared": 0, "unknown": 0})
    counts.update("unknown" if line.split()[2] == "-" else line.split()[2] for line in lines)
    counts["total"] = len(lines)
    return +counts


@pytest.mark.parametrize("name", MODELS)
def test_the_summary_counts_what_the_table_marks(name, tmp_path, monkeypatch, capsys):
    path = tmp_path / "m.onnx"
    onnx.save(MODELS[name](), path)
    assert main(["infer", str(path), "--values"]) in (0, 1)
    table = _table(capsys.readouterr().out)
    monkeypatch.setattr("opspec.cli_infer.TABLE_LIMIT", 0)
    for extra in ([], ["-o", str(tmp_path / "out.onnx")]):
        assert main(["infer", str(path), *extra]) in (0, 1)
        assert _summary(capsys.readouterr().out) == table


def test_the_mixed_model_has_values_of_every_origin(tmp_path, capsys):
    path = tmp_path / "m.onnx"
    onnx.save(_declaring_everything_model(), path)
    main(["infer", str(path)])
    table = _table(capsys.readouterr().out)
    assert all(table[origin] for origin in ("inferred", "refined", "declared", "unknown")), table


@pytest.mark.parametrize("name", MODELS)
def test_the_command_writes_what_the_api_writes(name, tmp_path, capsys):
    path, ours, api = tmp_path / "m.onnx", tmp_path / "cli.onnx", tmp_path / "api.onnx"
    model = MODELS[name]()
    onnx.save(model, path)
    main(["infer", str(path), "-o", str(ours), *(["--format", "json"] if name == "chain" else [])])
    opspec.infer_shapes_path(path, api, data_prop=True)
    assert ours.read_bytes() == api.read_bytes()
    expected = opspec.infer_shapes(model, data_prop=True)
    assert onnx.load(str(api)) == expected  # the same model as inferred in memory, value_info merged
    assert onnx.load(str(path)) == model  # the input file is left alone


@pytest.mark.parametrize("name", MODELS)
def test_json_values_are_each_rows_value_json(name, tmp_path, capsys):
    import json

    from opspec.cli_report import declared_types, value_json, value_rows
    from opspec.runtime.ir import load_model

    path = tmp_path / "m.onnx"
    onnx.save(MODELS[name](), path)
    main(["infer", str(path), "--format", "json"])
    document = json.loads(capsys.readouterr().out)
    model = load_model(path).model
    declared = declared_types(model)
    rows = value_rows(opspec.infer(model, data_prop=True).iter_values(), declared)
    assert document["values"] == [value_json(row) for row in rows]
    if name != "chain":  # values of several types, sharing the same type objects
        assert len({json.dumps(value["shape"]) for value in document["values"]}) > 1
