"""Profiles of inference on the speed benchmark's models, kept as text in benchmarks/profiles/.

``.venv/bin/python benchmarks/profile_infer.py TAG`` writes ``profiles/TAG-<model>.txt``: the
best-of-3 time of opspec and of onnx (interleaved, same run), then cProfile's top 30 by
total time of one opspec run.
"""
from __future__ import annotations

import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))


def _best(function, model, rounds: int = 3) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        function(model)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    import onnx.shape_inference

    import models
    import opspec

    tag = sys.argv[1] if len(sys.argv) > 1 else "current"
    cases = {"transformer": models.transformer(486), "chain": models.elementwise_chain(100_000)}
    ours = lambda m: opspec.infer_shapes(m, data_prop=True)  # noqa: E731
    theirs = lambda m: onnx.shape_inference.infer_shapes(m, data_prop=True)  # noqa: E731
    for name, model in cases.items():
        ours(model)  # loads every schema and rule used
        times = {"opspec": float("inf"), "onnx": float("inf")}
        for _ in range(3):  # interleaved, best of 3 each
            times["opspec"] = min(times["opspec"], _best(ours, model, 1))
            times["onnx"] = min(times["onnx"], _best(theirs, model, 1))
        profile = cProfile.Profile()
        profile.enable()
        ours(model)
        profile.disable()
        out = io.StringIO()
        nodes = len(model.graph.node)
        out.write(f"# {name}: {nodes} nodes; best of 3, interleaved, same process\n")
        for engine, seconds in times.items():
            out.write(f"# {engine}: {seconds * 1000:.0f} ms, {nodes / seconds:,.0f} nodes/s\n")
        out.write(f"# opspec / onnx: {times['onnx'] / times['opspec']:.2f}x\n\n")
        pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(30)
        (HERE / "profiles" / f"{tag}-{name}.txt").write_text(out.getvalue())
        print(out.getvalue().split("\n\n")[0])


if __name__ == "__main__":
    main()
