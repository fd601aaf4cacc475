"""The command line for scripts: --version, --format json, exit codes, a runtime-only ``show``."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from onnx import TensorProto, helper

import opspec
from opspec.cli import main
from opspec.codegen.generate import REPO

F = TensorProto.FLOAT


@pytest.fixture(autouse=True)
def _stand_in_rules(fake_rules):
    return fake_rules


def _save(tmp_path, nodes, outputs, value_info=(), opsets=(("", 17),)):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", F, ["N", 3])],
                              [helper.make_tensor_value_info(name, 0, None) for name in outputs],
                              value_info=list(value_info))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    path = tmp_path / "model.onnx"
    path.write_bytes(model.SerializeToString())
    return path


def test_version_prints_the_package_version(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"opspec {opspec.__version__}"


def test_infer_json_lists_every_value_with_its_dims(tmp_path, capsys):
    nodes = [helper.make_node("Relu", ["X"], ["a"], name="relu"),
             helper.make_node("Frob", ["a"], ["Y"], name="frob", domain="com.acme")]
    declared = [helper.make_tensor_value_info("a", F, ["N", None])]
    path = _save(tmp_path, nodes, ["Y"], declared, opsets=(("", 17), ("com.acme", 1)))
    assert main(["infer", str(path), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    values = {value["name"]: value for value in report["values"]}
    assert values["X"] == {"name": "X", "producer": "(input)", "from": "declared", "type": "tensor(float)",
                           "kind": "tensor", "elem_type": "float", "shape": ["N", 3]}
    assert values["a"]["from"] == "refined" and values["a"]["shape"] == ["N", 3]
    assert values["Y"]["from"] is None and values["Y"]["elem_type"] is None and values["Y"]["shape"] is None
    assert report["unknown_ops"] == [{"domain": "com.acme", "op_type": "Frob", "reason": "unknown domain 'com.acme'"}]
    assert report["ok"] is True and report["errors"] == [] and report["nodes"] == 2


def test_infer_json_reports_node_errors_and_fails(tmp_path, capsys):
    nodes = [helper.make_node("Relu", ["X"], ["Y"], name="relu")]
    path = _save(tmp_path, nodes, ["Y"], [helper.make_tensor_value_info("Y", F, ["N", 4])])
    assert main(["infer", str(path), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False
    [error] = report["errors"]
    assert error["node"] == "relu" and error["op_type"] == "Relu" and "'Y'" in error["message"]


def test_check_json_reports_graph_and_node_problems(tmp_path, capsys):
    nodes = [helper.make_node("Relu", ["later"], ["Y"], name="first"),
             helper.make_node("Cast", ["X"], ["later"], name="cast")]
    path = _save(tmp_path, nodes, ["Y"])
    assert main(["check", str(path), "--format", "json"]) == 1
    problems = json.loads(capsys.readouterr().out)["problems"]
    assert {"code": "topological-order", "where": "node 'first' (Relu, domain 'ai.onnx')",
            "message": "input 'later' is produced by a later node (nodes must be in topological order)"} in problems
    assert any(p.get("node") == "cast" and "'to' is missing" in p["message"] and p["code"] == "attribute-missing"
               for p in problems)


def test_infer_lists_ops_with_a_schema_but_no_rule(tmp_path):
    tree = tmp_path / "opdefs"
    shutil.copytree(REPO / "examples/custom_ops/opdefs", tree)
    swish = tree / "com.example/activation/Swish.yaml"
    swish.write_text(swish.read_text().replace("    inference: elementwise\n", ""))
    assert main(["generate", "--opdefs", str(tree), "--out", str(tmp_path / "ops")]) == 0
    node = helper.make_node("Swish", ["X"], ["Y"], domain="com.example", name="swish")
    path = _save(tmp_path, [node], ["Y"], opsets=(("", 17), ("com.example", 2)))
    done = subprocess.run([sys.executable, "-m", "opspec", "infer", str(path), "--registry", str(tmp_path / "ops")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "1 op with a schema but no inference rule" in done.stdout
    assert "  Swish version 2 (domain 'com.example')" in done.stdout


def test_output_folder_is_checked_before_loading(tmp_path, capsys):
    missing_model = tmp_path / "missing.onnx"
    assert main(["infer", str(missing_model), "-o", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith(f"opspec: cannot write {tmp_path}: it is a directory")


def test_exit_codes_are_distinct(tmp_path):
    good = _save(tmp_path, [helper.make_node("Relu", ["X"], ["Y"])], ["Y"])
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")

    def code(*args: str) -> int:
        return subprocess.run([sys.executable, "-m", "opspec", *args], capture_output=True).returncode

    assert code("check", str(good)) == 0
    assert code("check", str(bad)) == 2
    assert code("check", "--no-such-flag", str(good)) == 2


def test_show_needs_no_jinja2():
    script = ("import sys\n"
              "class Block:\n"
              "    def find_spec(self, name, path=None, target=None):\n"
              "        if name.split('.')[0] == 'jinja2':\n"
              "            raise ImportError('jinja2 is blocked')\n"
              "sys.meta_path.insert(0, Block())\n"
              "from opspec.cli import main\n"
              "sys.exit(main(['show', 'Conv']))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Conv version")
