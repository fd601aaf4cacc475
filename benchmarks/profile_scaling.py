"""Profiles of inference on the scaling benchmark's wide, deep and shape-heavy models, kept as
text in benchmarks/profiles/.

``.venv/bin/python benchmarks/profile_scaling.py TAG [CASE,...]`` writes
``profiles/scale-TAG-<case>.txt``: the best-of-3 wall and CPU time of opspec and of onnx
(interleaved, same process: a quick reading, not the benchmark), then cProfile's top 30 by
total time of one opspec run. Cases: wide, deep, symbolic, rank.
"""
from __future__ import annotations

import cProfile
import io
import pstats
import sys
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def _times(function: Callable[[Any], Any], model: Any) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    function(model)
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    import onnx.shape_inference

    import opspec
    import workloads
    from bench_scaling import high_rank_input, many_symbolic_inputs

    tag = sys.argv[1] if len(sys.argv) > 1 else "current"
    cases: dict[str, Callable[[], Any]] = {
        "wide": lambda: workloads.wide(10_000), "deep": lambda: workloads.deep(100_000),
        "symbolic": lambda: many_symbolic_inputs(20_000, 10), "rank": lambda: high_rank_input(200_000)}
    chosen = sys.argv[2].split(",") if len(sys.argv) > 2 else list(cases)
    engines: dict[str, Callable[[Any], Any]] = {
        "opspec": lambda m: opspec.infer_shapes(m, data_prop=True),
        "onnx": lambda m: onnx.shape_inference.infer_shapes(m, data_prop=True)}
    for name in chosen:
        model = cases[name]()
        engines["opspec"](model)  # loads every schema and rule used
        best = {engine: (float("inf"), float("inf")) for engine in engines}
        for _ in range(3):  # interleaved, best of 3 each
            for engine, function in engines.items():
                wall, cpu = _times(function, model)
                best[engine] = (min(best[engine][0], wall), min(best[engine][1], cpu))
        profile = cProfile.Profile()
        profile.enable()
        engines["opspec"](model)
        profile.disable()
        out = io.StringIO()
        out.write(f"# {name}: best of 3, interleaved, same process\n")
        for engine, (wall, cpu) in best.items():
            out.write(f"# {engine}: {wall * 1000:.0f} ms wall, {cpu * 1000:.0f} ms CPU\n")
        (ours_wall, ours_cpu), (onnx_wall, onnx_cpu) = best["opspec"], best["onnx"]
        out.write(f"# onnx / opspec time: {onnx_wall / ours_wall:.2f}x wall, {onnx_cpu / ours_cpu:.2f}x CPU\n\n")
        pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(30)
        (HERE / "profiles" / f"scale-{tag}-{name}.txt").write_text(out.getvalue())
        print(out.getvalue().split("\n\n")[0], flush=True)


if __name__ == "__main__":
    main()
