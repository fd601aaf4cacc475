"""Checking a large model: ``opspec check`` beside ``onnx.checker.check_model(full_check=True)``."""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

#: Interleaved rounds; each checker's best round counts.
ROUNDS = 3


def _seconds(function, model) -> float:
    started = time.perf_counter()
    function(model)
    return time.perf_counter() - started


def bench_check() -> list[str]:
    import models
    import onnx
    import onnx.checker

    from opspec.runtime.checker import check_model
    from opspec.runtime.ir import load_model

    import opspec

    model = opspec.infer_shapes(models.transformer(541))  # graph outputs with shapes, as onnx.checker wants them
    data = model.SerializeToString()

    def opspec_check(_):
        checked = check_model(load_model(data).model)  # from the bytes, as the command line reads a file
        assert not checked.problems, checked.problems[:3]

    def onnx_check(_):
        onnx.checker.check_model(onnx.ModelProto.FromString(data), full_check=True)

    best = {"opspec check": float("inf"), "onnx.checker (full_check)": float("inf")}
    for _ in range(ROUNDS):
        best["opspec check"] = min(best["opspec check"], _seconds(opspec_check, model))
        best["onnx.checker (full_check)"] = min(best["onnx.checker (full_check)"], _seconds(onnx_check, model))
    ratio = best["onnx.checker (full_check)"] / best["opspec check"]
    return ["| model | nodes | opspec check s | onnx.checker full_check s | onnx / opspec |",
            "|---|---:|---:|---:|---:|",
            f"| transformer encoder, symbolic B and S | {len(model.graph.node):,} | {best['opspec check']:.3f} | "
            f"{best['onnx.checker (full_check)']:.3f} | {ratio:.2f}x |",
            "",
            "The model is the inference benchmark's encoder with its values' types written in (onnx.checker "
            "wants shapes on graph outputs). Both parse the model from its bytes; opspec's time includes its field checks, structure checks, "
            "schema and attribute-constraint checks and inference with data propagation."]


BENCHMARK = ("check", "Checking a model (`opspec check`)", bench_check)
