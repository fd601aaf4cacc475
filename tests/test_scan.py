"""``opspec scan`` and ``opspec.scan``: one whole JSON line per model, a model that crashes, hangs,
kills its worker or exhausts memory is one failed line among the others, a second run skips what
the report holds, Ctrl-C leaves whole lines, the HTML page sorts and filters in a real browser,
and Ray gives the pool's lines."""
from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))

import opspec  # noqa: E402
from opspec.batch.records import ScanOptions, Task, comparable  # noqa: E402
from opspec.batch.report import read_report  # noqa: E402
from opspec.batch.steps import analyse  # noqa: E402
from opspec.cli import main  # noqa: E402


def _add(first: int = TensorProto.FLOAT, second: int = TensorProto.FLOAT, op: str = "Add", domain: str = "",
         opsets: tuple[tuple[str, int], ...] = (("", 17),), name: str = "g") -> bytes:
    graph = helper.make_graph([helper.make_node(op, ["a", "b"], ["c"], domain=domain)], name,
                              [helper.make_tensor_value_info("a", first, [2, 3]),
                               helper.make_tensor_value_info("b", second, [2, 3])],
                              [helper.make_tensor_value_info("c", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    model.ir_version = 8
    return model.SerializeToString()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A clean model, one with a type problem (in a subfolder), one with an op nobody knows, a
    file that is no model, and a file that is not searched for."""
    models = tmp_path / "models"
    (models / "sub").mkdir(parents=True)
    (models / "ok.onnx").write_bytes(_add())
    (models / "sub" / "mixed.onnx").write_bytes(_add(second=TensorProto.INT64))
    (models / "custom.onnx").write_bytes(_add(op="Mystery", domain="com.example",
                                              opsets=(("", 17), ("com.example", 1))))
    (models / "garbage.onnx").write_bytes(b"\xff\xff\xff\xff not a model")
    (models / "notes.txt").write_text("not scanned")
    return models


def _by_name(records) -> dict[str, dict]:
    return {os.path.basename(record["path"]): record for record in records}


def test_each_model_is_one_line_with_its_findings(folder, tmp_path):
    report = tmp_path / "scan.jsonl"
    result = opspec.scan([folder], report, jobs=2)
    lines = read_report(report)
    assert len(lines) == 4 and sorted(map(json.dumps, lines)) == sorted(map(json.dumps, result.records))
    found = _by_name(lines)
    ok = found["ok.onnx"]
    assert ok["status"] == "ok" and ok["problems"] == {} and ok["nodes"] == 1 and ok["values"] == 3
    assert ok["typed_values"] == 3 and ok["opsets"] == {"ai.onnx": 17} and ok["ir_version"] == 8
    assert ok["sha256"] == hashlib.sha256((folder / "ok.onnx").read_bytes()).hexdigest()
    assert ok["bytes"] == (folder / "ok.onnx").stat().st_size
    assert set(ok["timings"]) == {"load", "check", "infer", "cost"}
    # Add of two (2, 3) float tensors: 6 additions, no multiply-accumulate, no weights; the three
    # values of 24 bytes each, with a, b and c all live at once
    assert ok["cost"] == {"macs": 0, "flops": 6, "parameters": 0, "weight_bytes": 0, "activation_bytes": 72,
                          "peak_activation_bytes": 72, "kv_cache_bytes": 0, "nodes_of_unknown_macs": 0}
    mixed = found["mixed.onnx"]
    assert mixed["status"] == "problems" and mixed["problems"] == {"input-type": 1} and mixed["problem_count"] == 1
    custom = found["custom.onnx"]
    assert custom["status"] == "problems" and custom["unknown_ops"] == ["com.example:Mystery"]
    assert custom["problems"] == {"unknown-op": 1}
    garbage = found["garbage.onnx"]
    assert garbage["status"] == "failed" and garbage["failure"] == "unreadable"
    assert result.summary.statuses == {"ok": 1, "problems": 2, "failed": 1}


def test_a_second_run_skips_what_the_report_holds(folder, tmp_path):
    report = tmp_path / "scan.jsonl"
    opspec.scan([folder / "ok.onnx", folder / "sub"], report, jobs=1)
    assert len(read_report(report)) == 2
    again = opspec.scan([str(folder / "*.onnx"), folder / "sub"], report, jobs=1)
    assert sorted(map(os.path.basename, again.skipped)) == ["mixed.onnx", "ok.onnx"]
    assert sorted(os.path.basename(record["path"]) for record in again.records) == ["custom.onnx", "garbage.onnx"]
    assert len(read_report(report)) == 4


def test_a_torn_last_line_is_dropped_before_new_lines_are_written(folder, tmp_path):
    report = tmp_path / "scan.jsonl"
    report.write_text('{"path": "x.onnx", "sha256": "00"}\n{"path": "torn.onn')
    opspec.scan([folder / "ok.onnx"], report, jobs=1)
    text = report.read_text()
    assert text.endswith("\n") and "torn.onn" not in text
    assert [json.loads(line)["path"] for line in text.splitlines()] == ["x.onnx", str(folder / "ok.onnx")]


def test_runtime_prediction_is_check_for_runtimes(folder, tmp_path):
    from opspec.runtime.checker.runtime_check import check_for_runtime
    from opspec.batch.steps import code_counts

    result = opspec.scan([folder / "ok.onnx", folder / "custom.onnx"], runtime="onnxruntime", jobs=1)
    for record in result.records:
        expected = check_for_runtime(record["path"])
        assert record["runtime"]["target"] == "onnxruntime:cpu"
        assert record["runtime"]["will_run"] == expected.will_run
        assert record["runtime"]["problems"] == code_counts(expected.verdict.problems)
        assert "runtime" in record["timings"]
    assert _by_name(result.records)["ok.onnx"]["runtime"]["will_run"] is True
    assert _by_name(result.records)["custom.onnx"]["runtime"]["will_run"] is False


def test_external_data_is_read_only_when_asked(tmp_path, monkeypatch):
    import numpy as np
    from onnx import numpy_helper
    from onnx.external_data_helper import convert_model_to_external_data

    from opspec.runtime.ir.external import ExternalData

    shape = numpy_helper.from_array(np.array([3, 2], dtype=np.int64), "shape")
    graph = helper.make_graph([helper.make_node("Reshape", ["x", "shape"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [shape])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    convert_model_to_external_data(model, location="weights.bin", size_threshold=0)
    path = tmp_path / "reshape.onnx"
    onnx.save_model(model, path)
    opened: list[str] = []
    real = ExternalData._read

    def spy(self, name, location, *rest):
        opened.append(location)
        return real(self, name, location, *rest)

    monkeypatch.setattr(ExternalData, "_read", spy)
    task = Task(str(path), "0", path.stat().st_size)
    assert analyse(task, ScanOptions())["status"] == "ok" and opened == []
    assert analyse(task, ScanOptions(read_external=True))["status"] == "ok" and opened == ["weights.bin"]


def test_a_crash_a_hang_a_dead_worker_and_exhausted_memory_are_each_one_failed_line(folder, tmp_path):
    from scan_faults import FAULTY

    for name in ("crash", "hang", "stuck", "die", "hog"):
        (folder / f"{name}.onnx").write_bytes(_add())
    report = tmp_path / "scan.jsonl"
    started = time.monotonic()
    # A limit a healthy model keeps on a busy machine, with its first imports in a fresh worker.
    result = opspec.scan([folder], report, jobs=2, timeout=4.0, memory=1 << 30, steps=FAULTY)
    assert time.monotonic() - started < 120
    found = _by_name(read_report(report))
    assert len(found) == 9
    failures = {name: (record["failure"], record["message"]) for name, record in found.items()
                if record["status"] == "failed"}
    assert failures.pop("garbage.onnx")[0] == "unreadable"
    assert failures == {"crash.onnx": ("crash", "ValueError: a step failed"),
                        "hang.onnx": ("timeout", "no answer within 4 s"),
                        "stuck.onnx": ("timeout", "no answer within 4 s (its worker was stopped)"),
                        "die.onnx": ("crash", "the worker process analysing the model died"),
                        "hog.onnx": ("memory", "the analysis needs more than the worker's memory of 1,024 MiB")}
    assert {found[name]["status"] for name in ("ok.onnx", "mixed.onnx", "custom.onnx")} == {"ok", "problems"}
    assert list(found["ok.onnx"]["timings"]) == ["load", "check", "infer", "cost", "fault"]  # a step of one's own
    assert result.summary.failures == {"timeout": 2, "crash": 2, "unreadable": 1, "memory": 1} or \
        sorted(result.summary.failures.items()) == [("crash", 2), ("memory", 1), ("timeout", 2), ("unreadable", 1)]


def test_ctrl_c_leaves_whole_lines_and_a_second_run_finishes(tmp_path):
    from scan_faults import FAULTY

    models = tmp_path / "slow"
    models.mkdir()
    for index in range(12):  # two lines come, then the scan waits until the interrupt is sent
        kind = "slow" if index < 2 else "wait"
        (models / f"{kind}{index:02}.onnx").write_bytes(_add(name=f"g{index}"))
    report = tmp_path / "scan.jsonl"
    # Ctrl-C as in a terminal, also where the tests run with SIGINT ignored (started in the background)
    script = ("import signal, sys, opspec; signal.signal(signal.SIGINT, signal.default_int_handler); "
              "sys.path.insert(0, sys.argv[3]); from scan_faults import FAULTY; "
              "opspec.scan([sys.argv[1]], sys.argv[2], jobs=1, steps=FAULTY)")
    process = subprocess.Popen([sys.executable, "-c", script, str(models), str(report), str(TESTS)],
                               start_new_session=True, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not report.exists() or report.read_bytes().count(b"\n") < 2):
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the scan and its workers
    _, errors = process.communicate(timeout=60)
    assert process.returncode != 0, errors.decode()
    data = report.read_bytes()
    assert data.endswith(b"\n")
    written = [json.loads(line) for line in data.splitlines()]
    assert 2 <= len(written) < 12
    (models / "release").touch()
    again = opspec.scan([models], report, jobs=2, steps=FAULTY)
    assert len(again.skipped) == len(written) and len(again.records) == 12 - len(written)
    assert sorted(record["path"] for record in read_report(report)) == sorted(map(str, models.glob("*.onnx")))


def test_the_command_prints_the_summary_and_fails_on_problems(folder, tmp_path, capsys):
    report = tmp_path / "scan.jsonl"
    assert main(["scan", str(folder), "--report", str(report), "--jobs", "2"]) == 1
    out = capsys.readouterr().out
    assert "4 models analysed" in out and "input-type" in out
    assert main(["scan", str(folder / "ok.onnx"), "--report", str(tmp_path / "ok.jsonl")]) == 0
    assert main(["scan", str(tmp_path / "nowhere")]) == 2
    assert "no such file or folder" in capsys.readouterr().err
    assert main(["scan", str(folder), "--runtime", "elsewhere"]) == 2


def _html_scan(folder: Path, tmp_path: Path) -> Path:
    page = tmp_path / "scan.html"
    opspec.scan([folder], tmp_path / "scan.jsonl", jobs=2, html=page)
    return page


def test_the_page_is_self_contained(folder, tmp_path):
    text = _html_scan(folder, tmp_path).read_text()
    assert "http://" not in text and "https://" not in text and " src=" not in text and "<link" not in text
    assert text.count("<tr data-status=") == 4


def test_the_page_sorts_and_filters_in_a_browser(folder, tmp_path):
    from browser import Browser, find_chromium

    executable = find_chromium()
    if executable is None:
        pytest.skip("no chromium on PATH")
    page = _html_scan(folder, tmp_path)
    browser = Browser(executable)
    try:
        browser.open(page.as_uri(), 1200)
        browser.wait_for("document.getElementById('shown').textContent.startsWith('4 of 4')")
        names = "[...document.querySelectorAll('#models tbody tr')].filter(r => !r.hidden)" \
                ".map(r => r.cells[0].textContent.split('/').pop())"
        browser.evaluate("document.querySelectorAll('#models th')[0].click()")
        assert browser.evaluate(names) == ["custom.onnx", "garbage.onnx", "ok.onnx", "mixed.onnx"]
        browser.evaluate("document.querySelectorAll('#models th')[0].click()")
        assert browser.evaluate(names) == ["mixed.onnx", "ok.onnx", "garbage.onnx", "custom.onnx"]
        browser.evaluate("document.querySelectorAll('#models th')[2].click()")  # problems, as numbers
        assert browser.evaluate(names)[0] == "garbage.onnx"
        browser.evaluate("(() => { const s = document.getElementById('status'); s.value = 'problems'; "
                         "s.dispatchEvent(new Event('change')); })()")
        assert sorted(browser.evaluate(names)) == ["custom.onnx", "mixed.onnx"]
        browser.evaluate("(() => { const f = document.getElementById('filter'); f.value = 'INPUT-type'; "
                         "f.dispatchEvent(new Event('input')); })()")
        assert browser.evaluate(names) == ["mixed.onnx"]
        assert browser.evaluate("document.getElementById('shown').textContent") == "1 of 4 models shown"
    finally:
        browser.close()


def test_ray_gives_the_pools_lines(folder, tmp_path):
    from scan_faults import FAULTY

    ray = pytest.importorskip("ray")
    pool = opspec.scan([folder], runtime="onnxruntime", jobs=2)
    faults = tmp_path / "faults"
    faults.mkdir()
    (faults / "crash.onnx").write_bytes(_add(name="crash"))
    (faults / "fine.onnx").write_bytes(_add())
    # Ray's workers import the fault steps from the tests' folder.
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join([str(TESTS), *sys.path])}})
    try:
        on_ray = opspec.scan([folder], runtime="onnxruntime", ray="local")
        faulty = opspec.scan([faults], ray="local", steps=FAULTY)
    finally:
        ray.shutdown()
    failures = {name: (record.get("failure"), record.get("message")) for name, record in _by_name(faulty.records).items()}
    assert failures == \
        {"crash.onnx": ("crash", "ValueError: a step failed"),
         "fine.onnx": (None, None)}

    def lines(result):
        return sorted((comparable(record) for record in result.records), key=lambda record: record["path"])

    assert lines(on_ray) == lines(pool) and len(lines(pool)) == 4
