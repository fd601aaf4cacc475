"""Inference side by side: opspec, onnx (C++), onnxruntime's symbolic inference and
onnx-shape-inference, each engine in a process of its own, on weight-heavy and weight-light models."""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

#: Interleaved rounds for opspec and onnx; each round is a fresh process with CALLS warm calls.
ROUNDS, CALLS = 3, 3
#: The slower peers run one round of one warm call, within this many seconds.
SLOW_PEERS, SLOW_TIMEOUT = ("onnxruntime", "onnx-shape-inference"), 900


def run_worker(engine: str, path: Path, calls: int, timeout: float | None = None) -> dict[str, Any] | None:
    """One engine on one model in a fresh process (None when it fails or times out)."""
    try:
        done = subprocess.run([sys.executable, str(HERE / "infer_worker.py"), engine, str(path), str(calls)],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0:
        return None
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def best_of(engines: tuple[str, ...], path: Path) -> dict[str, dict[str, Any]]:
    """Each engine's best warm time (and the conversion time of that round) over interleaved
    rounds, with ``warm_cpu`` the best CPU time of any round."""
    best: dict[str, dict[str, Any]] = {}
    for _ in range(ROUNDS):  # interleaved, so a busy moment of the shared machine hits both alike
        for engine in engines:
            result = run_worker(engine, path, CALLS)
            if result is None:
                continue
            cpu = min(result["warm_cpu"], best[engine]["warm_cpu"]) if engine in best else result["warm_cpu"]
            if engine not in best or result["warm"] < best[engine]["warm"]:
                best[engine] = result
            best[engine]["warm_cpu"] = cpu
    return best


#: Fresh processes per engine for the spread table (one warm call after a cold one in each).
SPREAD_PROCESSES = 10


def spread(engines: tuple[str, ...], path: Path, processes: int = SPREAD_PROCESSES) -> dict[str, list[float]]:
    """Per engine, the CPU seconds of one warm call in each of ``processes`` fresh processes,
    the engines interleaved: how much a time moves from one process to the next."""
    times: dict[str, list[float]] = {engine: [] for engine in engines}
    for _ in range(processes):
        for engine in engines:
            result = run_worker(engine, path, 1)
            if result is not None:
                times[engine].append(result["warm_cpu"])
    return times


def _spread_row(label: str, times: dict[str, list[float]]) -> str:
    cells = []
    for engine in ("onnx", "opspec"):
        values = sorted(times.get(engine, []))
        cells.append("- | - | -" if not values else
                     f"{values[0] * 1000:,.0f} | {statistics.median(values) * 1000:,.0f} | {values[-1] * 1000:,.0f}")
    return f"| {label} | {len(times.get('opspec', []))} | {' | '.join(cells)} |"


def _cpu_ratio(ours: dict[str, Any] | None, theirs: dict[str, Any] | None) -> str:
    return f"{theirs['warm_cpu'] / ours['warm_cpu']:.2f}x" if ours and theirs else "-"


def _cpu(result: dict[str, Any] | None) -> str:
    return "-" if result is None else f"{result['warm_cpu'] * 1000:,.0f} ms"


def _cell(result: dict[str, Any] | None, nodes: int) -> str:
    if result is None:
        return "-"
    return f"{result['warm'] * 1000:,.0f} ms ({nodes / result['warm'] / 1000:,.0f}k/s)"


def _convert(result: dict[str, Any] | None) -> str:
    return "-" if result is None or result["convert"] is None else f"{result['convert'] * 1000:,.0f} ms"


def bench_infer() -> list[str]:
    import workloads

    cases = {
        "transformer (486 layers), weight-heavy": lambda: workloads.models.transformer(486),
        "transformer (486 layers), weight-light": lambda: workloads.weight_light(workloads.models.transformer(486)),
        "elementwise chain, weight-light": lambda: workloads.models.elementwise_chain(100_000),
        "elementwise chain after a 100 MB embedding, weight-heavy": lambda: workloads.embedded_chain(100_000),
    }
    rows = ["| model | nodes | file MB | onnx | onnx: serialize + parse | opspec | opspec: copy | opspec / onnx "
            "| onnx CPU | opspec CPU | opspec / onnx, CPU "
            "| onnxruntime symbolic | onnx-shape-inference | onnx-shape-inference: to onnx_ir |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    spreads: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        for index, (label, build) in enumerate(cases.items()):
            path, nodes = workloads.write(Path(folder), f"model{index}", build)
            if "weight-light" in label:
                spreads.append(_spread_row(label, spread(("opspec", "onnx"), path)))
            best = best_of(("opspec", "onnx"), path)
            peers = {peer: run_worker(peer, path, 1, SLOW_TIMEOUT) for peer in SLOW_PEERS}
            ours, theirs = best.get("opspec"), best.get("onnx")
            ratio = f"{theirs['warm'] / ours['warm']:.2f}x" if ours and theirs else "-"
            rows.append(f"| {label} | {nodes:,} | {path.stat().st_size / 1e6:,.1f} | {_cell(theirs, nodes)} "
                        f"| {_convert(theirs)} | {_cell(ours, nodes)} | {_convert(ours)} | {ratio} "
                        f"| {_cpu(theirs)} | {_cpu(ours)} | {_cpu_ratio(ours, theirs)} "
                        f"| {_cell(peers['onnxruntime'], nodes)} | {_cell(peers['onnx-shape-inference'], nodes)} "
                        f"| {_convert(peers['onnx-shape-inference'])} |")
    rows += ["", f"Each cell: the best warm call (after one cold call in the same process) of {ROUNDS} rounds "
             f"of {CALLS} calls, every round a fresh process per engine, opspec and onnx interleaved; "
             f"onnxruntime and onnx-shape-inference: one round of one warm call (`-` when over "
             f"{SLOW_TIMEOUT} s or failing). Wall-clock time of the whole API call, the model already in "
             "memory as an `onnx.ModelProto`: onnx's `infer_shapes(model, data_prop=True)` includes "
             "serializing the model and parsing the result, opspec's includes copying it (the input is never "
             "changed), onnx-shape-inference's includes `onnx_ir.from_proto`; those conversions are also "
             "shown alone (best of 3). Nothing is reused across calls: each call infers the whole model "
             "(within one call opspec reuses a node's result for a later identical node, and does not read the "
             "attributes or input data of a node whose op's rule has not been seen to look at them). CPU columns: "
             "the best "
             "process CPU time (`time.process_time`) of the same warm calls, which a busy shared machine "
             "inflates less than wall-clock time.",
             "", "How much one warm call moves from one fresh process to the next (CPU ms; the engines "
             "interleaved, one cold and one warm call per process):", "",
             "| model | processes | onnx min | onnx median | onnx max | opspec min | opspec median | opspec max |",
             "|---|---:|---:|---:|---:|---:|---:|---:|", *spreads,
             "", f"Load average at the end of this run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (on a "
             "shared machine every engine is slowed alike within interleaved rounds; compare the ratios). "
             "cProfile summaries (top 30 by own time) are in `benchmarks/profiles/` "
             "(`benchmarks/profile_infer.py TAG`): `before-*` and `after-*` around the engine's first speed work, "
             "`pernode-before-*` and `pernode-after-*` around the per-node work, `engine2-before-*` and "
             "`engine2-after-*` around reading attributes and input data only when a rule looks, and the "
             "single-pass write-back, `engine3-before-*` and `engine3-after-*` around the quickest path for nodes "
             "keyed on input types alone."]
    return rows


BENCHMARK = ("infer", "Inference throughput", bench_infer)
