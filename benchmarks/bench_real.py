"""Inference per call on real exported models (the set of ``real_set.py``): opspec beside onnx.

Each model is saved once with its ``value_info`` stripped (as a tool calling inference after a
rewrite sees it); then per model and engine a fresh process (``infer_worker.py``) loads it and
times ``infer_shapes(model, data_prop=True)`` on the ``onnx.ModelProto``: one warm-up call, then
the median CPU time of 5 warm calls. A further process counts how many of opspec's nodes ran their rule (the
rest were answered from the per-call memo of identical nodes, or passed their input's type on).
The set is made on first use into ``OPSPEC_REAL_SET`` (default ``.build/real_set``), which needs the
``bench`` extra (torch, transformers, skl2onnx, onnxmltools, ...).
"""
from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PYTHON = sys.executable
CALLS = 5
#: Calls of the long run on the smallest model that gives the fixed cost once the interpreter is warm.
STEADY_CALLS = 300
#: Where the set is made and kept between runs.
SET_DIR = Path(os.environ.get("OPSPEC_REAL_SET", REPO / ".build" / "real_set"))

#: Counts opspec's rule runs on one model: how many nodes the memo (or a pass-through) answered.
_COUNT_RULES = """
import sys, onnx, opspec
from opspec.runtime.inference.rule_runner import RuleRunner
runs = 0
original = RuleRunner._infer_node
def counted(self, *args, **kwargs):
    global runs
    runs += 1
    return original(self, *args, **kwargs)
RuleRunner._infer_node = counted
model = onnx.load(sys.argv[1], load_external_data=False)
opspec.infer_shapes(model, data_prop=True)
def nodes(graph):
    total = 0
    for node in graph.node:
        total += 1
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                total += nodes(attribute.g)
            for sub in attribute.graphs:
                total += nodes(sub)
    return total
print(runs, nodes(model.graph))
"""


def _made_set() -> list[dict[str, Any]]:
    """The set's manifest entries of models that were made (making the set first if need be)."""
    manifest = SET_DIR / "manifest.json"
    if not manifest.is_file():
        subprocess.run([PYTHON, str(HERE / "real_set.py"), str(SET_DIR)], check=True)
    models = json.loads(manifest.read_text(encoding="utf-8"))["models"]
    return [m for m in models if m["error"] is None and m["file"]]


def _stripped(entry: dict[str, Any]) -> Path:
    """The model with its value_info removed (made once, beside the set)."""
    import onnx

    folder = SET_DIR / "stripped"
    folder.mkdir(exist_ok=True)
    path = folder / entry["file"]
    if not path.is_file():
        model = onnx.load(str(SET_DIR / entry["file"]), load_external_data=False)
        del model.graph.value_info[:]
        with tempfile.NamedTemporaryFile(dir=folder, delete=False) as partial:
            partial.write(model.SerializeToString())
        os.replace(partial.name, path)
    return path


def _worker(engine: str, path: Path, calls: int = CALLS) -> dict[str, Any]:
    printed = subprocess.run([PYTHON, str(HERE / "infer_worker.py"), engine, str(path), str(calls)],
                             check=True, capture_output=True, text=True).stdout
    result: dict[str, Any] = json.loads(printed.strip().splitlines()[-1])
    return result


def _rule_runs(path: Path) -> tuple[int, int]:
    printed = subprocess.run([PYTHON, "-c", _COUNT_RULES, str(path)], check=True, capture_output=True,
                             text=True).stdout.split()
    return int(printed[0]), int(printed[1])


def measure() -> list[dict[str, Any]]:
    """Per model: its entry with the two engines' median warm call and opspec's rule runs."""
    rows = []
    for entry in _made_set():
        path = _stripped(entry)
        row = dict(entry)
        for engine in ("opspec", "onnx"):
            try:
                timing = _worker(engine, path)
                row[engine], row[f"{engine}_wall"] = timing["warm_cpu_median"], timing["warm_median"]
            except subprocess.CalledProcessError as error:
                row[engine] = None
                row[f"{engine}_error"] = (error.stderr or "").strip().splitlines()[-1:] or ["failed"]
        try:
            row["rule_runs"], row["all_nodes"] = _rule_runs(path)
        except subprocess.CalledProcessError:
            row["rule_runs"] = row["all_nodes"] = None
        print(f"  {entry['name']}: opspec {row['opspec']}, onnx {row['onnx']}", file=sys.stderr, flush=True)
        rows.append(row)
    if rows:  # the fixed cost again, over many calls: Python specializes code a function has run a few times
        smallest = min(rows, key=lambda r: r["nodes"])
        for engine in ("opspec", "onnx"):
            timing = _worker(engine, _stripped(smallest), STEADY_CALLS)
            smallest[f"{engine}_steady"] = (timing["warm_cpu"], timing["warm_cpu_median"])
    return rows


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:,.2f}"


def table(rows: list[dict[str, Any]]) -> list[str]:
    """The Markdown table: per model, then the geometric mean and the fixed cost per call."""
    lines = ["| model | made by | nodes | MB | onnx CPU ms | opspec CPU ms | onnx / opspec | opspec wall ms | nodes without a rule run |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    ratios = []
    for row in sorted(rows, key=lambda r: r["nodes"]):
        ratio = row["onnx"] / row["opspec"] if row["onnx"] and row["opspec"] else None
        if ratio is not None:
            ratios.append(ratio)
        share = "-" if not row.get("all_nodes") else f"{1 - row['rule_runs'] / row['all_nodes']:.0%}"
        lines.append(f"| {row['name']} | {row['tool']} | {row['nodes']:,} | {row['megabytes']:.1f} | "
                     f"{_ms(row['onnx'])} | {_ms(row['opspec'])} | "
                     f"{'-' if ratio is None else f'{ratio:.2f}x'} | {_ms(row.get('opspec_wall'))} | {share} |")
    geometric = math.exp(statistics.fmean(math.log(r) for r in ratios)) if ratios else float("nan")
    faster = sum(r >= 1 for r in ratios)
    smallest = min(rows, key=lambda r: r["nodes"]) if rows else None
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines += ["", f"**Geometric mean of onnx time / opspec time: {geometric:.2f}x** over {len(ratios)} models; "
                  f"opspec is faster on {faster} of them, and below 0.5x on {sum(r < 0.5 for r in ratios)}."]
    if smallest is not None:
        lines += ["", f"Fixed cost per call, as the time of the smallest model ({smallest['name']}, "
                      f"{smallest['nodes']} node(s)): opspec {_ms(smallest['opspec'])} ms, onnx "
                      f"{_ms(smallest['onnx'])} ms (the median of calls 2 to {CALLS + 1} of a fresh process, "
                      f"as in the table)."]
        if "opspec_steady" in smallest and "onnx_steady" in smallest:
            ours, theirs = smallest["opspec_steady"], smallest["onnx_steady"]
            lines += ["", f"The same, over {STEADY_CALLS} warm calls in one process (once Python has specialized "
                          f"the code it runs): opspec best {ours[0] * 1e6:,.0f} us, median {ours[1] * 1e6:,.0f} us; "
                          f"onnx best {theirs[0] * 1e6:,.0f} us, median {theirs[1] * 1e6:,.0f} us (CPU time)."]
    lines += ["", f"Each model is one of `benchmarks/real_set.py`'s (made here from configurations with random "
                  f"weights, nothing downloaded; the manifest records each tool's version), saved with its "
                  f"`value_info` stripped. Per model and engine, a fresh process loads it as an `onnx.ModelProto` "
                  f"and times `infer_shapes(model, data_prop=True)`: one warm-up call, then the median of {CALLS} "
                  f"warm calls, in CPU time of the process (the machine is shared; the wall-clock median of "
                  f"opspec's calls is shown beside it) (onnx's time includes serializing the model and parsing the result; "
                  f"opspec's includes copying it, as its input is never changed). The last column is the share "
                  f"of nodes (subgraphs included) that did not run their rule: answered from the per-call memo "
                  f"of identical nodes or passing their input's type on. Load average at the end: {load:.1f} on "
                  f"{os.cpu_count()} cores."]
    return lines


def bench_real() -> list[str]:
    return table(measure())


BENCHMARK = ("real", "Inference per call on real exported models", bench_real)
