"""The compiler's command line: generate, show, import."""
from __future__ import annotations

import shutil
import subprocess
import sys

import onnx.defs
import pytest
from onnx_parity import differences

import opspec
from opspec.cli import main
from opspec.codegen.compiler import compile_tree
from opspec.codegen.generate import REPO


def test_generate_prints_a_summary(tmp_path, capsys):
    assert main(["generate", "--opdefs", str(REPO / "opdefs"), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    schemas = opspec.get_all_schemas_with_history()
    domains, ops = {s.domain for s in schemas}, {(s.domain, s.name) for s in schemas}
    assert f"generated {len(domains)} domain{'s' if len(domains) > 1 else ''}, {len(ops)} ops, {len(schemas)} schemas; onnxruntime: " in out
    assert all(f"  {domain:<36} opsets" in out for domain in ("ai.onnx", "ai.onnx.ml", "onnxruntime: com.microsoft"))


@pytest.mark.parametrize("extra", [[], ["--check"]])
def test_generate_in_place_from_an_installed_package_is_a_usage_error(monkeypatch, capsys, extra):
    from opspec.codegen import generate

    monkeypatch.setattr(generate, "SOURCE_CHECKOUT", False)
    assert main(["generate", *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "installed package: pass --out DIR" in err


def test_show_prints_a_readable_schema(capsys):
    assert main(["show", "Clip", "--version", "10"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Clip version 6 (domain 'ai.onnx'; versions 1, 6, 11, 12, 13)")
    assert "Clip(input: T) -> (output: T)" in out
    assert "    max: float = 3.4028235e+38" in out
    assert "T: tensor(float16), tensor(float), tensor(double)" in out
    assert "inference: elementwise" in out


def test_show_unknown_op_is_one_line(capsys):
    assert main(["show", "Nope"]) == 2
    assert capsys.readouterr().err == "opspec: no operator 'Nope' in domain 'ai.onnx'\n"


def test_console_script_runs():
    result = subprocess.run([sys.executable, "-m", "opspec", "show", "Relu"], capture_output=True, text=True)
    assert result.returncode == 0 and "Relu version 14" in result.stdout


def test_import_drafts_exact_facts_and_no_prose(tmp_path, capsys):
    tree = tmp_path / "opdefs"
    (tree / "ai.onnx").mkdir(parents=True)
    shutil.copy(REPO / "opdefs/types.yaml", tree / "types.yaml")
    shutil.copy(REPO / "opdefs/ai.onnx/domain.yaml", tree / "ai.onnx/domain.yaml")
    ops = ["Conv", "Slice", "Cast", "Identity", "Resize"]
    assert main(["import", "--ops", ",".join(ops), "--out", str(tree / "ai.onnx"), "--family", "drafts"]) == 0
    assert "5 drafted, 0 kept, 0 failed" in capsys.readouterr().out
    drafted = compile_tree(tree)[0]
    reference = {(s.name, s.since_version): s for s in onnx.defs.get_all_schemas_with_history() if s.domain == ""}
    for op in drafted.ops:
        for schema in op.schemas:
            assert differences(schema, reference[schema.name, schema.since_version]) == []
            assert all(p.description == "TODO" for p in schema.inputs)
        text = (tree / "ai.onnx/drafts" / f"{op.decl.name}.yaml").read_text()
        assert (reference[op.decl.name, op.schemas[-1].since_version].doc or "").strip()[:40] not in text


def test_registry_option_brings_a_users_op_set(tmp_path):
    from onnx import TensorProto, helper

    out = tmp_path / "acme_ops"
    assert main(["generate", "--opdefs", str(REPO / "examples/custom_ops/opdefs"), "--out", str(out)]) == 0
    nodes = [helper.make_node("Swish", ["x"], ["y"], domain="com.example", name="swish", beta=0.5),
             helper.make_node("ScaledAdd", ["y", "x"], ["z"], domain="com.example", name="add", mode="fastest")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8])],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 2)])
    path = tmp_path / "custom.onnx"
    path.write_bytes(model.SerializeToString())

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "opspec", *args], capture_output=True, text=True, cwd=tmp_path)

    shown = run("show", "Swish", "--domain", "com.example", "--registry", str(out))
    assert shown.returncode == 0 and "Swish version 2 (domain 'com.example'" in shown.stdout
    inferred = run("infer", str(path), "--registry", str(out))
    assert inferred.returncode == 1, inferred.stderr  # the user's constraint on 'mode' is a node error
    assert [line.split() for line in inferred.stdout.splitlines() if line.startswith("y ")] == [
        ["y", "com.example::Swish", "inferred", "float", "(N,", "8)"]]
    assert "attribute 'mode' = 'fastest': 'fastest' is not one of 'fast', 'exact'" in inferred.stdout
    checked = run("check", str(path), "--registry", str(out))
    assert checked.returncode == 1
    assert "node 'add' (ScaledAdd, domain 'com.example')" in checked.stdout and "'fastest'" in checked.stdout
    without = run("infer", str(path))
    assert "2 unknown ops" in without.stdout
    missing = run("show", "Swish", "--registry", str(tmp_path / "nope"))
    assert missing.returncode == 2 and missing.stderr.strip().endswith("no such folder")


def test_unwritable_output_is_one_line(tmp_path, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    assert main(["generate", "--opdefs", str(REPO / "examples/custom_ops/opdefs"), "--out", str(blocker)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"opspec: cannot write the output to {blocker}") and "internal error" not in err


def test_the_command_flushes_its_output_then_ends_the_process_with_its_status():
    script = ("import sys, atexit; from opspec import cli; atexit.register(lambda: print('clean-up ran'));"
              "cli.main = lambda: (print('to a pipe', end=''), print('and to stderr', end='', file=sys.stderr), 3)[2];"
              "cli.run()")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert (done.returncode, done.stdout, done.stderr) == (3, "to a pipe", "and to stderr")


def test_generate_keeps_its_result_for_the_end_of_the_process_and_drops_it_at_the_next_command(tmp_path):
    from opspec import cli

    assert main(["generate", "--opdefs", str(REPO / "examples/custom_ops/opdefs"), "--out", str(tmp_path)]) == 0
    assert [type(kept).__name__ for kept in cli._KEPT] == ["Result"]
    assert main(["show", "Relu"]) == 0 and cli._KEPT == []


def test_python_dash_m_opspec_runs_the_command():
    done = subprocess.run([sys.executable, "-m", "opspec", "show", "Relu"], capture_output=True, text=True)
    assert done.returncode == 0 and "Relu" in done.stdout


def test_show_finds_onnxruntimes_ops_without_a_flag(capsys):
    assert main(["show", "GroupQueryAttention", "--domain", "com.microsoft"]) == 0
    assert capsys.readouterr().out.startswith("GroupQueryAttention version 1 (domain 'com.microsoft', onnxruntime;")
    assert main(["show", "LayerNormalization"]) == 0, "the standard set answers first"
    assert capsys.readouterr().out.startswith("LayerNormalization version 17 (domain 'ai.onnx'; versions 17)")
    assert main(["show", "LayerNormalization", "--version", "13"]) == 0, "then onnxruntime's version of it"
    assert capsys.readouterr().out.startswith("LayerNormalization version 1 (domain 'ai.onnx', onnxruntime;")


@pytest.mark.parametrize(("args", "meant"), [
    (["GroupQueryAttention", "--domain", "com.microsft"], "did you mean 'com.microsoft'"),
    (["groupqueryattention", "--domain", "com.microsoft"], "did you mean 'GroupQueryAttention'?"),
    (["Rleu"], "did you mean 'Relu'"),
    (["GroupQueryAttention"], "GroupQueryAttention is in domain 'com.microsoft' (--domain com.microsoft)"),
])
def test_show_offers_what_an_unknown_name_may_have_meant(capsys, args, meant):
    assert main(["show", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and meant in err


def test_the_built_in_onnxruntime_folder_as_registry_changes_nothing(tmp_path, capsys):
    from onnx import TensorProto, helper

    folder = str(REPO / "generated" / "onnxruntime")
    assert main(["show", "GroupQueryAttention", "--domain", "com.microsoft", "--registry", folder]) == 0
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = tmp_path / "m.onnx"
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    capsys.readouterr()
    assert main(["infer", str(path), "-q", "--registry", folder]) == 0, capsys.readouterr().err
