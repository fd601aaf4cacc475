"""``opspec infer`` and ``opspec check`` on model files."""
from __future__ import annotations

import subprocess
import sys

import pytest

import onnx  # noqa: E402 - the reference implementation, a test dependency
from onnx import TensorProto, helper  # noqa: E402

from opspec.cli import main  # noqa: E402

F = TensorProto.FLOAT


@pytest.fixture(autouse=True)
def _stand_in_rules(fake_rules):
    """Every test here runs on the shared stand-in rules (see conftest)."""
    return fake_rules


def save(tmp_path, nodes, outputs=("Y",), value_info=(), name="model.onnx", opsets=(("", 17),)):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", F, ["N", 3])],
                              [helper.make_tensor_value_info(o, 0, None) for o in outputs],
                              value_info=list(value_info))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    path = tmp_path / name
    path.write_bytes(model.SerializeToString())
    return path


GOOD = [helper.make_node("Relu", ["X"], ["a"], name="relu"), helper.make_node("Add", ["a", "X"], ["Y"], name="add")]


def test_infer_prints_a_table_of_every_value(tmp_path, capsys):
    assert main(["infer", str(save(tmp_path, GOOD))]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines()]
    assert rows[0] == ["NAME", "PRODUCER", "FROM", "TYPE", "SHAPE"]
    assert ["X", "(input)", "declared", "float", "(N,", "3)"] in rows
    assert ["a", "Relu", "inferred", "float", "(N,", "3)"] in rows
    assert ["Y", "Add", "inferred", "float", "(N,", "3)"] in rows
    assert "0 errors" in out


def test_infer_writes_the_model_with_o(tmp_path, capsys):
    target = tmp_path / "out.onnx"
    assert main(["infer", str(save(tmp_path, GOOD)), "-o", str(target)]) == 0
    written = onnx.load(str(target))
    assert [v.name for v in written.graph.value_info] == ["a"]
    assert [d.dim_param or d.dim_value for d in written.graph.output[0].type.tensor_type.shape.dim] == ["N", 3]
    assert f"wrote {target}" in capsys.readouterr().out


def test_infer_reports_errors_and_unknown_ops_and_fails(tmp_path, capsys):
    nodes = GOOD + [helper.make_node("Frobnicate", ["Y"], ["Z"], domain="com.acme")]
    conflict = [helper.make_tensor_value_info("a", F, ["N", 4])]
    path = save(tmp_path, nodes, outputs=("Z",), value_info=conflict, opsets=(("", 17), ("com.acme", 1)))
    assert main(["infer", str(path)]) == 1
    out = capsys.readouterr().out
    table, _, rest = out.partition("\n\n")
    assert "Frobnicate" in table
    assert "node 'relu' (Relu, domain 'ai.onnx'): output 'a'" in rest
    assert "Frobnicate (domain 'com.acme'): unknown domain 'com.acme'" in rest


def test_infer_strict_stops_at_the_first_error(tmp_path, capsys):
    path = save(tmp_path, GOOD, value_info=[helper.make_tensor_value_info("a", F, ["N", 4])])
    assert main(["infer", "--strict", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("opspec: node 'relu' (Relu, domain 'ai.onnx'): output 'a'")


def test_infer_check_type_and_data_prop_flags(tmp_path, capsys, fake_rules):
    seen = []

    def record(ctx):
        seen.append(ctx.input_data(0))
        from opspec.runtime.contract import Data
        ctx.set_output_shape(0, (1,))
        ctx.set_output_data(0, Data((1,), (7,)))

    fake_rules["elementwise"] = record
    nodes = [helper.make_node("Relu", ["X"], ["a"]), helper.make_node("Relu", ["a"], ["Y"]),
             helper.make_node("Cast", ["Y"], ["Z"], name="cast")]
    path = save(tmp_path, nodes, outputs=("Z",))
    assert main(["infer", str(path)]) == 0
    assert seen[1] is not None and seen[1].values == (7,)
    seen.clear()
    assert main(["infer", "--no-data-prop", str(path)]) == 0
    assert seen[1] is None
    assert main(["infer", "--check-type", str(path)]) == 1
    assert "required attribute 'to' is missing" in capsys.readouterr().out


def test_check_lists_every_problem_one_line_each(tmp_path, capsys):
    nodes = [helper.make_node("Cast", ["X"], ["a"], name="cast"),
             helper.make_node("Concat", ["X", "X"], ["b"], name="cat", axis=1.5),
             helper.make_node("Odd", ["X"], ["c"], name="odd", domain="com.acme"),
             helper.make_node("Relu", ["X"], ["Y"], name="fine")]
    path = save(tmp_path, nodes, opsets=(("", 17), ("com.acme", 1)))
    assert main(["check", str(path)]) == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines == [
        "node 'cast' (Cast, domain 'ai.onnx'): required attribute 'to' is missing",
        "node 'cat' (Concat, domain 'ai.onnx'): attribute 'axis' must be int, got float",
        "node 'odd' (Odd, domain 'com.acme'): cannot be checked: unknown domain 'com.acme'",
    ]
    assert "3 problems in 3 nodes (of 4)" in captured.err


def test_check_passes_a_good_model(tmp_path, capsys):
    assert main(["check", str(save(tmp_path, GOOD))]) == 0
    assert capsys.readouterr().out == "ok: 2 nodes conform to their schemas\n"


def _bad_files(tmp_path):
    good = save(tmp_path, GOOD).read_bytes()
    (tmp_path / "empty.onnx").write_bytes(b"")
    (tmp_path / "truncated.onnx").write_bytes(good[: len(good) // 2])
    (tmp_path / "text.onnx").write_text("this is not a model\n")
    (tmp_path / "folder").mkdir()
    return {"missing": tmp_path / "missing.onnx", "empty": tmp_path / "empty.onnx",
            "truncated": tmp_path / "truncated.onnx", "text": tmp_path / "text.onnx", "folder": tmp_path / "folder"}


@pytest.mark.parametrize("command", ["infer", "check"])
@pytest.mark.parametrize("kind", ["missing", "empty", "truncated", "text", "folder"])
def test_bad_files_give_one_clear_line(tmp_path, capsys, command, kind):
    path = _bad_files(tmp_path)[kind]
    assert main([command, str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"opspec: cannot load model '{path}'")


def test_unwritable_output_is_a_clear_error(tmp_path, capsys):
    path = save(tmp_path, GOOD)
    assert main(["infer", str(path), "-o", str(tmp_path / "no" / "such" / "dir.onnx")]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("opspec: cannot write") and captured.out == ""  # refused before any work


def test_real_process_has_no_traceback(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07\x12")
    good = save(tmp_path, GOOD)
    for args, code in ((["infer", str(bad)], 2), (["check", str(bad)], 2), (["infer", str(good)], 0)):
        done = subprocess.run([sys.executable, "-m", "opspec", *args], capture_output=True, text=True)
        assert done.returncode == code, done.stderr
        assert "Traceback" not in done.stderr


def _chain(length):
    nodes = [helper.make_node("Relu", ["X" if i == 0 else f"v{i - 1}"], [f"v{i}" if i < length - 1 else "Y"])
             for i in range(length)]
    return nodes


def test_a_large_model_gets_a_summary_unless_every_value_is_asked_for(tmp_path, capsys):
    from opspec.cli_infer import TABLE_LIMIT

    path = save(tmp_path, _chain(TABLE_LIMIT + 5))
    assert main(["infer", str(path)]) == 0
    out = capsys.readouterr().out
    assert "NAME" not in out
    assert f"{TABLE_LIMIT + 6:,} values: {TABLE_LIMIT + 5:,} inferred, 1 declared (--values lists every value)" in out
    assert f"{TABLE_LIMIT + 5:,} nodes, {TABLE_LIMIT + 6:,} values" in out  # one number format in both lines
    assert main(["infer", str(path), "--values"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["NAME", "PRODUCER", "FROM", "TYPE", "SHAPE"]
    assert lines[1].split() == ["X", "(input)", "declared", "float", "(N,", "3)"]
    assert lines[TABLE_LIMIT + 6].split() == ["Y", "Relu", "inferred", "float", "(N,", "3)"]


def test_json_lists_every_value_of_a_large_model_as_one_document(tmp_path, capsys):
    import json

    from opspec.cli_infer import TABLE_LIMIT

    assert main(["infer", str(save(tmp_path, _chain(TABLE_LIMIT + 5))), "--format", "json"]) == 0
    out = capsys.readouterr().out
    document = json.loads(out)
    assert len(document["values"]) == TABLE_LIMIT + 6
    assert document["values"][-1] == {"name": "Y", "producer": "Relu", "from": "inferred", "type": "tensor(float)",
                                      "kind": "tensor", "elem_type": "float", "shape": ["N", 3]}
    assert out == json.dumps(document, ensure_ascii=False) + "\n"  # the layout of a document written whole
