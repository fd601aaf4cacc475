"""Checking a large model: ``opspec check`` beside ``onnx.checker.check_model(full_check=True)``."""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

#: Interleaved rounds; each checker's best round counts.
ROUNDS = 5


def _models():
    """The inference benchmark's encoder (20,019 nodes) as an exporter writes it (graph outputs
    typed, as onnx.checker requires, no value_info) and with every value's type declared."""
    import models

    import opspec

    inferred = opspec.infer_shapes(models.transformer(541))
    exported = models.transformer(541)
    for output, typed in zip(exported.graph.output, inferred.graph.output):
        output.CopyFrom(typed)
    return {"transformer encoder, as exported": exported, "the same, every value declared in value_info": inferred}


def _best(function, data: bytes, best: tuple[float, float]) -> tuple[float, float]:
    """The better of ``best`` and one call, as (wall-clock, CPU) seconds, each its own minimum."""
    started, cpu = time.perf_counter(), time.process_time()
    function(data)
    return min(best[0], time.perf_counter() - started), min(best[1], time.process_time() - cpu)


def bench_check() -> list[str]:
    import onnx
    import onnx.checker

    from opspec.runtime.checker import check_model
    from opspec.runtime.ir import load_model

    def opspec_check(data: bytes) -> None:
        checked = check_model(load_model(data).model)  # from the bytes, as the command line reads a file
        assert not checked.problems, checked.problems[:3]

    def onnx_check(data: bytes) -> None:
        onnx.checker.check_model(onnx.ModelProto.FromString(data), full_check=True)

    rows = ["| model | nodes | opspec check s | onnx.checker full_check s | onnx / opspec | opspec CPU s "
            "| onnx CPU s | onnx / opspec, CPU |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for label, model in _models().items():
        data = model.SerializeToString()
        mine = theirs = (float("inf"), float("inf"))
        for _ in range(ROUNDS):  # interleaved, so a busy moment of the machine hits both alike
            mine = _best(opspec_check, data, mine)
            theirs = _best(onnx_check, data, theirs)
        rows.append(f"| {label} | {len(model.graph.node):,} | {mine[0]:.3f} | {theirs[0]:.3f} | {theirs[0] / mine[0]:.2f}x "
                    f"| {mine[1]:.3f} | {theirs[1]:.3f} | {theirs[1] / mine[1]:.2f}x |")
    rows += ["", f"Best of {ROUNDS} interleaved rounds (wall-clock and process CPU time, each its own best), each "
             "parsing the model from its bytes. opspec's time covers its "
             "field, data and structure checks, every node against its schema and attribute constraints, and "
             "inference with data propagation, comparing every declared type with the inferred one."]
    return rows


BENCHMARK = ("check", "Checking a model (`opspec check`)", bench_check)
