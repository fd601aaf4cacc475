"""Opset conversion, opspec beside onnx's version converter, every result proven by running.

Each case is converted to each target opset by both converters and judged by
``tests/convert_cases.py``: ``ok`` when the result is at the target opset, passes
``onnx.checker``'s full check, runs in onnxruntime with the original's outputs on the same
seeded inputs and opspec's inference of it agrees with them; ``wrong`` when a converter
returns a model that fails any of these; otherwise it refused.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

#: The targets of the node suite's cases (the opsets runtimes and SDKs commonly stop at).
NODE_SUITE_TARGETS = (13, 17, 21)


def _table(table, title: str, targets: list[int]) -> list[str]:
    rows = [f"**{title}**", "", "| direction | target opset | cases | opspec ok | onnx ok | opspec wrong | onnx wrong |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    totals: dict = {}
    for direction in ("up", "down"):
        for target in targets:
            ours = table.counts.get(("opspec", direction, target))
            theirs = table.counts.get(("onnx", direction, target))
            if ours is None:
                continue
            cases = sum(ours.values())
            rows.append(f"| {direction} | {target} | {cases} | {ours['ok']} | {theirs['ok']} | {ours['wrong']} | "
                        f"{theirs['wrong']} |")
            total = totals.setdefault(direction, [0, 0, 0, 0, 0])
            for index, value in enumerate((cases, ours["ok"], theirs["ok"], ours["wrong"], theirs["wrong"])):
                total[index] += value
    for direction, (cases, ours, theirs, ours_wrong, theirs_wrong) in totals.items():
        rows.append(f"| **{direction}, all** | | {cases} | **{ours}** | **{theirs}** | {ours_wrong} | {theirs_wrong} |")
    return rows + [""]


def _timing(models: list, target: int, converters: dict) -> dict[str, float]:
    """Milliseconds each converter takes for every model, the best of three rounds."""
    best = {}
    for name, convert in converters.items():
        rounds = []
        for _ in range(3):
            started = time.perf_counter()
            for case in models:
                convert(case.model, target)
            rounds.append((time.perf_counter() - started) * 1000)
        best[name] = min(rounds)
    return best


def bench_convert() -> list[str]:
    import onnx

    from convert_cases import (NEWEST, OLDEST, model_cases, node_suite_cases, onnx_convert, opspec_convert, score,
                               standard_opset)

    converters = {"opspec": opspec_convert, "onnx": onnx_convert}
    started = time.perf_counter()
    models = list(model_cases())
    every = list(range(OLDEST, NEWEST + 1))
    model_table = score(models, lambda case: [t for t in every if t != standard_opset(case.model)], converters)
    nodes = list(node_suite_cases())
    node_table = score(nodes, lambda case: [t for t in NODE_SUITE_TARGETS if t != standard_opset(case.model)],
                       converters)
    seconds = time.perf_counter() - started
    rows = [
        f"`benchmarks/bench_convert.py` (onnx {onnx.__version__}, onnxruntime judging), {seconds:.0f} s. A conversion is",
        "**ok** when the converted model is at the target opset, passes `onnx.checker.check_model(full_check=True)`,",
        "runs in onnxruntime with the original's outputs on the same seeded inputs (rtol 1e-3 for floats, exact",
        "otherwise) and opspec's inference of it agrees with them; **wrong** when a converter returns a model that",
        "fails any of these (onnx's converter sometimes returns a model still at its old opset, or one the checker",
        "or onnxruntime rejects); otherwise the converter refused. opspec's refusals name each node and why.",
        "",
        f"Models written as exporters write them (`tests/models.py`, `tests/exporter_models.py`), {len(models)} "
        f"model-opset pairs built at opsets 9 to 23, each converted to every opset from {OLDEST} to {NEWEST}:",
        "",
        *_table(model_table, "Exported-style models", every),
        f"onnx's node conformance cases that onnxruntime runs ({len(nodes)} models, each at the opset it is "
        f"written for), converted to opsets {', '.join(map(str, NODE_SUITE_TARGETS))}:",
        "",
        *_table(node_table, "Node conformance suite", list(NODE_SUITE_TARGETS)),
    ]
    timing = _timing(models, NEWEST, converters)
    rows += [f"Speed, same run: converting all {len(models)} exported-style models up to opset {NEWEST} (both converters "
             f"succeed on each), best of 3: " + ", ".join(f"{name} {ms:.0f} ms" for name, ms in timing.items()) + ".", ""]
    wrong = [entry for entry in model_table.wrong + node_table.wrong if entry[0] == "opspec"]
    rows.append(f"opspec wrong results: {len(wrong)}." + "".join(f" {case} {source}->{target}: {detail}."
                                                                 for _, case, source, target, detail in wrong[:10]))
    return rows


BENCHMARK = ("convert", "Opset conversion (`opspec convert`) beside onnx's version converter", bench_convert)
