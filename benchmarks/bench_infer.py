"""Inference throughput: opspec, onnx (C++) and onnxruntime's symbolic inference, same models."""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


#: Rounds over all engines; each engine's best round counts.
ROUNDS = 3


def _rate(function, model, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        function(model)
        best = min(best, time.perf_counter() - started)
    return len(model.graph.node) / best


def _without_reuse(function):
    """Run ``function`` with the engine's reuse of results from identical nodes turned off."""
    from opspec.runtime.inference import walk

    def run(model):
        saved, walk.MEMO_LIMIT = walk.MEMO_LIMIT, 0
        try:
            return function(model)
        finally:
            walk.MEMO_LIMIT = saved

    return run


def _engines():
    import onnx.shape_inference

    import opspec

    engines = {
        "opspec (data_prop)": lambda m: opspec.infer_shapes(m, data_prop=True),
        "opspec (data_prop, no result reuse)": _without_reuse(lambda m: opspec.infer_shapes(m, data_prop=True)),
        "opspec": lambda m: opspec.infer_shapes(m),
        "onnx (data_prop)": lambda m: onnx.shape_inference.infer_shapes(m, data_prop=True),
    }
    try:
        from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

        engines["onnxruntime symbolic"] = lambda m: SymbolicShapeInference.infer_shapes(m, auto_merge=True)
    except ImportError:
        pass
    try:
        import onnx_ir
        from onnx_shape_inference import infer_symbolic_shapes

        engines["onnx-shape-inference"] = lambda m: infer_symbolic_shapes(onnx_ir.from_proto(m), warn_on_missing=False)
    except ImportError:
        pass
    return engines


def bench_infer() -> list[str]:
    import models

    cases = {
        "transformer encoder, symbolic B and S": models.transformer(486),
        "elementwise chain": models.elementwise_chain(100_000),
    }
    engines = _engines()
    rows = ["| model | nodes | " + " | ".join(f"{name} nodes/s" for name in engines)
            + " | opspec / onnx, data_prop |",
            "|---|---:|" + "---:|" * len(engines) + "---:|"]
    for label, model in cases.items():
        rates = {name: 0.0 for name in engines}
        for round_ in range(ROUNDS):  # interleaved, so a busy moment of the machine hits every engine alike
            for name, engine in engines.items():
                if round_ == 0 or not ("onnxruntime" in name or "onnx-shape" in name):  # the slow peers run once
                    rates[name] = max(rates[name], _rate(engine, model, 1))
        ratio = rates["opspec (data_prop)"] / rates["onnx (data_prop)"]
        rows.append(f"| {label} | {len(model.graph.node):,} | " + " | ".join(f"{r:,.0f}" for r in rates.values())
                    + f" | {ratio:.2f}x |")
    if "onnxruntime symbolic" not in engines:
        rows.append("\n(onnxruntime is not installed: `pip install onnxruntime sympy` to include it)")
    return rows


BENCHMARK = ("infer", "Inference throughput", bench_infer)
