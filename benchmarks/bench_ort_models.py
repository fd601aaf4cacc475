"""Values known on models written by onnxruntime's tools: opspec beside onnx, onnxruntime's symbolic
shape inference and onnx-shape-inference, every value held against onnxruntime's run.

Each engine infers the same model (a fresh copy each); every node output is then classified
against onnxruntime's CPU run at two settings of the input symbols (see tests/value_oracle.py):
exact (type and every dim right, as numbers or expressions of the inputs' symbols), symbolic
(right, with fresh symbols of the engine's own), wrong (a stated type, rank or dim a run
contradicts), partial (the rest). An engine that raises scores its input model unchanged.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

import onnx  # noqa: E402

import ort_models  # noqa: E402
import peers  # noqa: E402
from value_oracle import Score, real_values, score  # noqa: E402


def _opspec(model: onnx.ModelProto) -> onnx.ModelProto:
    import opspec

    return opspec.infer_shapes(model, data_prop=True)


ENGINES: dict[str, Callable[[onnx.ModelProto], onnx.ModelProto]] = {
    "opspec": _opspec, **peers.TEST_PEERS, "onnx-shape-inference": peers.onnx_shape_inference,
}


def _symbols(model: onnx.ModelProto) -> set[str]:
    return {d.dim_param for value in model.graph.input for d in value.type.tensor_type.shape.dim if d.dim_param}


def measure() -> tuple[list[str], dict[str, dict[str, Score]], dict[str, dict[str, str]]]:
    """Per model and engine, the score; per model and engine, why an engine failed (if it did)."""
    scores: dict[str, dict[str, Score]] = {}
    failures: dict[str, dict[str, str]] = {}
    names = []
    for name, (build, settings, feeds) in ort_models.catalogue().items():
        model = build()
        real = real_values(model, settings, feeds)
        names.append(name)
        for engine, infer in ENGINES.items():
            copy = onnx.ModelProto()
            copy.CopyFrom(model)
            try:
                inferred: Any = infer(copy)
            except Exception as error:  # noqa: BLE001 - an engine that gives up scores what it had
                failures.setdefault(name, {})[engine] = f"{type(error).__name__}: {str(error)[:80]}"
                inferred = model
            scores.setdefault(name, {})[engine] = score(inferred, real, _symbols(model), settings)
    return names, scores, failures


DESCRIPTION = (
    "The models of `tests/ort_models.py`, built with onnxruntime's own tools; each engine infers a fresh "
    "copy (onnx and onnx-shape-inference with their symbolic/data-propagating options, onnxruntime's "
    "symbolic shape inference with auto_merge), and every node output is held against onnxruntime's CPU "
    'run at two or more settings of the input symbols: exact or symbolic counts a type and every dim that'
    ' hold in every run, wrong a stated type, rank or dim that a run contradicts; † marks an engine that '
    'raised (it scores the model as given).'
)


def table() -> list[str]:
    names, scores, failures = measure()
    engines = list(ENGINES)
    rows = [DESCRIPTION, "",
            "| model | values | " + " | ".join(f"{e} exact+symbolic (wrong)" for e in engines) + " |",
            "|---|---:|" + "---:|" * len(engines)]
    totals = {engine: Score() for engine in engines}
    for name in names:
        cells = []
        for engine in engines:
            s = scores[name][engine]
            totals[engine] = totals[engine] + s
            mark = " †" if engine in failures.get(name, {}) else ""
            cells.append(f"{s.exact + s.symbolic}{mark} ({s.wrong})")
        rows.append(f"| {name} | {scores[name][engines[0]].total} | " + " | ".join(cells) + " |")
    total = totals[engines[0]].total
    rows.append(f"| **all** | {total} | " + " | ".join(
        f"**{t.exact + t.symbolic}** ({t.wrong}), {100 * (t.exact + t.symbolic) / max(total, 1):.1f}%"
        for t in totals.values()) + " |")
    notes = [f"- † {engine} on {name}: {why}" for name, by_engine in failures.items() for engine, why in by_engine.items()]
    return rows + ([""] + notes if notes else [])


if __name__ == "__main__":
    print("\n".join(table()))


BENCHMARK = ("ort_models", "Values known on models written by onnxruntime's tools", table)
