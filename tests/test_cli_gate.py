"""`opspec infer` and `opspec check` as CI gates: --fail-on-unknown, --quiet, the summary line,
progress only on a terminal."""
from __future__ import annotations

import io
import json
import time

import onnx
import pytest
from onnx import TensorProto, helper

from opspec.cli import main
from opspec.cli_gate import Progress, gate_status, summary_line


def _model(path, op_type: str = "Relu", domain: str = "", opsets: dict[str, int] | None = None) -> str:
    node = helper.make_node(op_type, ["x", "x"] if op_type == "ComplexMul" else ["x"], ["y"], domain=domain)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    imports = [helper.make_opsetid(name, version) for name, version in (opsets or {"": 18}).items()]
    onnx.save(helper.make_model(graph, opset_imports=imports), str(path))
    return str(path)


@pytest.fixture
def clean(tmp_path) -> str:
    return _model(tmp_path / "clean.onnx")


@pytest.fixture
def unknown(tmp_path) -> str:
    return _model(tmp_path / "unknown.onnx", "FancyOp", "com.vendor", {"": 18, "com.vendor": 1})


@pytest.fixture
def without_rule(tmp_path) -> str:
    return _model(tmp_path / "norule.onnx", "ComplexMul", "com.microsoft", {"": 18, "com.microsoft": 1})


def test_fail_on_unknown_fails_a_model_with_an_unknown_op_and_passes_one_without(clean, unknown, capsys):
    assert main(["infer", unknown]) == 0  # without the gate, unknown ops are reported, not failed
    capsys.readouterr()
    assert main(["infer", unknown, "--fail-on-unknown"]) == 1
    out = capsys.readouterr().out
    assert "FancyOp (domain 'com.vendor')" in out
    assert main(["infer", clean, "--fail-on-unknown"]) == 0


def test_fail_on_unknown_fails_an_op_that_has_a_schema_but_no_rule(without_rule, capsys):
    assert main(["infer", without_rule, "--fail-on-unknown", "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "ComplexMul version 1 (domain 'com.microsoft')" in out
    assert out.strip().splitlines()[-1].endswith("0 errors, 0 unknown ops, 1 op without a rule")


def test_fail_on_unknown_sets_ok_in_json(unknown, capsys):
    assert main(["infer", unknown, "--fail-on-unknown", "--format", "json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["ok"] is False and document["unknown_ops"][0]["op_type"] == "FancyOp"


def test_quiet_prints_nothing_for_a_clean_model(clean, capsys):
    assert main(["infer", clean, "--quiet"]) == 0
    assert main(["check", clean, "--quiet"]) == 0
    assert capsys.readouterr() == ("", "")


def test_quiet_prints_only_the_problems_and_the_summary(unknown, capsys):
    assert main(["infer", unknown, "-q", "--fail-on-unknown"]) == 1
    lines = [line for line in capsys.readouterr().out.splitlines() if line]
    assert lines == ["1 unknown op (outputs left untyped):", lines[1],
                     f"{unknown}: 1 node, 2 values; 0 errors, 1 unknown op, 0 ops without a rule"]
    assert "FancyOp" in lines[1]


def test_the_summary_is_the_last_line_of_a_full_report(clean, capsys):
    assert main(["infer", clean]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"{clean}: 1 node, 2 values; 0 errors, 0 unknown ops, 0 ops without a rule"


def test_gate_status_and_summary():
    assert gate_status(1, 0, 0, False) == 1
    assert gate_status(0, 2, 0, False) == 0 and gate_status(0, 2, 0, True) == 1 and gate_status(0, 0, 1, True) == 1
    assert summary_line("m.onnx", 1, 3, 0, 1, 2) == "m.onnx: 1 node, 3 values; 0 errors, 1 unknown op, 2 ops without a rule"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_shows_on_a_terminal_only_after_a_while_and_is_erased(monkeypatch):
    monkeypatch.setattr("sys.stdout", _Terminal())
    stream = _Terminal()
    with Progress("inferring m.onnx", stream=stream, after=0.05):
        deadline = time.monotonic() + 5
        while "inferring" not in stream.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
    assert "opspec: inferring m.onnx (0 s)" in stream.getvalue() and stream.getvalue().endswith("\r\033[K")
    quick = _Terminal()
    with Progress("inferring m.onnx", stream=quick, after=60):
        pass
    assert quick.getvalue() == ""


def test_progress_text_from_a_function_is_made_afresh_each_time(monkeypatch):
    monkeypatch.setattr("sys.stdout", _Terminal())
    stream = _Terminal()
    done: list[int] = []
    with Progress(lambda: f"scanning: {len(done)} models done", stream=stream, after=0):
        deadline = time.monotonic() + 10
        while "scanning: 0 models" not in stream.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
        done.append(1)
        while "scanning: 1 models" not in stream.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
    shown = stream.getvalue()
    assert "\ropspec: scanning: 0 models done (0 s)\033[K" in shown
    assert shown.index("scanning: 0 models") < shown.index("\ropspec: scanning: 1 models done (")


def test_progress_never_goes_to_a_pipe_or_beside_json(monkeypatch):
    piped = io.StringIO()
    with Progress("inferring m.onnx", stream=piped, after=0):
        time.sleep(0.05)
    assert piped.getvalue() == ""
    monkeypatch.setattr("sys.stdout", io.StringIO())  # stdout redirected: stderr stays clean too
    terminal = _Terminal()
    with Progress("inferring m.onnx", stream=terminal, after=0):
        time.sleep(0.05)
    assert terminal.getvalue() == ""
    with Progress("inferring m.onnx", enabled=False, stream=_Terminal(), after=0) as progress:
        assert progress._thread is None


def test_check_fails_on_an_op_without_a_rule_only_when_asked(without_rule, capsys):
    assert main(["check", without_rule]) == 0
    assert "unknown: ComplexMul version 1 (domain 'com.microsoft') has no inference rule" in capsys.readouterr().out
    assert main(["check", without_rule, "--fail-on-unknown", "--quiet"]) == 1
    captured = capsys.readouterr()
    assert captured.out.startswith("unknown: ComplexMul version 1")
    assert captured.err.strip() == "opspec: no problem, but 1 op without a rule (--fail-on-unknown)"
    assert main(["check", without_rule, "--fail-on-unknown", "--format", "json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["ok"] is False and document["counts"] == {"problems": 0, "ops_without_rule": 1}
    assert document["ops_without_rule"] == [{"domain": "com.microsoft", "op_type": "ComplexMul", "version": 1}]


def _relu_model(path) -> str:
    model = onnx.load(_model(path))
    model.ir_version = 10  # one onnxruntime 1.31.1 loads
    onnx.save(model, str(path))
    return str(path)


def test_check_with_a_runtime_says_and_counts_nodes_whose_kernel_it_could_not_tell(tmp_path, capsys, monkeypatch):
    import opspec.runtime.checker.runtime_support as support

    model = _relu_model(tmp_path / "relu.onnx")
    assert main(["check", model, "--runtime", "onnxruntime", "--fail-on-unknown", "--quiet"]) == 0  # typed: told
    assert capsys.readouterr() == ("", "")
    monkeypatch.setattr(support, "_bound_types", lambda schema, node, type_of: {})  # as if no type were known
    assert main(["check", model, "--runtime", "onnxruntime"]) == 0  # unknown is no failure without the gate
    assert "unknown: node #0 (Relu, domain 'ai.onnx'): the type of T is unknown" in capsys.readouterr().out
    assert main(["check", model, "--runtime", "onnxruntime", "--fail-on-unknown", "-q"]) == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        "unknown: node #0 (Relu, domain 'ai.onnx'): the type of T is unknown, so whether a kernel takes the node "
        "cannot be told", "onnxruntime:cpu: will run"]
    assert "1 node whose kernel could not be told" in captured.err
    assert main(["check", model, "--runtime", "onnxruntime", "--fail-on-unknown", "--format", "json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["ok"] is False and document["will_run"] is True
    assert document["counts"] == {"problems": 0, "ops_without_rule": 0, "unbound_nodes": 1}
    assert document["unbound_nodes"] == [{"where": "node #0 (Relu, domain 'ai.onnx')", "index": 0, "op_type": "Relu",
                                          "domain": "ai.onnx", "version": 14, "type_parameters": ["T"]}]


def test_a_node_after_an_op_nobody_types_is_unbound(tmp_path):
    from opspec.cli_models import load
    from opspec.runtime.checker.runtime_support import Target
    from opspec.runtime.checker.whole import check_model

    context = helper.make_node("EPContext", ["x"], ["c"], domain="com.microsoft", name="compiled")
    relu = helper.make_node("Relu", ["c"], ["y"], name="relu")
    graph = helper.make_graph([context, relu], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [onnx.ValueInfoProto(name="y")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 10
    onnx.save(model, str(tmp_path / "m.onnx"))
    verdict = check_model(load(str(tmp_path / "m.onnx")), None, Target()).verdict
    assert [(node.op, node.params) for node in verdict.unbound] == [("Relu", ("T",))]
    assert [problem.code for problem in verdict.problems] == ["no-kernel"]  # EPContext has no CPU kernel
