"""Profiles of inference on the scaling benchmark's wide, deep and shape-heavy models, kept as
text in benchmarks/profiles/.

``.venv/bin/python benchmarks/profile_scaling.py TAG [CASE,...] [--instructions]`` writes
``profiles/scale-TAG-<case>.txt``: the best-of-3 wall and CPU time of opspec and of onnx
(interleaved, same process: a quick reading, not the benchmark), then cProfile's top 30 by
total time of one opspec run. Cases: wide, deep, symbolic, rank. With ``--instructions``
it also counts the instructions one warm call of each engine executes, which a busy machine
does not change: valgrind's callgrind runs a process making three calls and one making one
(each after a first call, hash seed fixed, collector off), and half the difference is one
call's count.
"""
from __future__ import annotations

import cProfile
import gc
import io
import os
import pstats
import re
import subprocess
import sys
import tempfile
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


def _engines() -> dict[str, Callable[[Any], Any]]:
    import onnx.shape_inference

    import opspec

    return {"opspec": lambda m: opspec.infer_shapes(m, data_prop=True),
            "onnx": lambda m: onnx.shape_inference.infer_shapes(m, data_prop=True)}


def _calls(engine: str, path: str, calls: int) -> None:
    """One first call of ``engine`` on the model at ``path``, then ``calls`` more (what callgrind counts)."""
    import onnx

    model = onnx.load(path)
    infer = _engines()[engine]
    infer(model)
    gc.collect()
    gc.disable()  # a collector pass would land in one process's count and not in the other's
    for _ in range(calls):
        infer(model)


def _instructions(engine: str, path: str, calls: int) -> int:
    """The instructions a process making ``calls`` warm calls executes, as callgrind counts them."""
    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={folder}/out",
                               sys.executable, __file__, "--calls", engine, path, str(calls)],
                              capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"}, check=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"callgrind gave no count: {done.stderr[-500:]}")
    return int(found.group(1))


def instructions_per_call(model: Any) -> dict[str, int]:
    """Per engine: the instructions of one warm call on ``model`` (three calls less one, halved)."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.onnx")
        Path(path).write_bytes(model.SerializeToString())
        return {engine: (_instructions(engine, path, 3) - _instructions(engine, path, 1)) // 2
                for engine in ("opspec", "onnx")}


def main() -> None:
    if sys.argv[1:2] == ["--calls"]:
        _calls(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return
    import workloads
    from bench_scaling import high_rank_input, many_symbolic_inputs

    count_instructions = "--instructions" in sys.argv
    sys.argv = [argument for argument in sys.argv if argument != "--instructions"]
    tag = sys.argv[1] if len(sys.argv) > 1 else "current"
    cases: dict[str, Callable[[], Any]] = {
        "wide": lambda: workloads.wide(10_000), "deep": lambda: workloads.deep(100_000),
        "symbolic": lambda: many_symbolic_inputs(20_000, 10), "rank": lambda: high_rank_input(200_000)}
    chosen = sys.argv[2].split(",") if len(sys.argv) > 2 else list(cases)
    engines = _engines()
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
        out.write(f"# onnx / opspec time: {onnx_wall / ours_wall:.2f}x wall, {onnx_cpu / ours_cpu:.2f}x CPU\n")
        if count_instructions:
            counted = instructions_per_call(model)
            out.write(f"# instructions per warm call (callgrind): opspec {counted['opspec']:,}, onnx {counted['onnx']:,}"
                      f" ({counted['onnx'] / counted['opspec']:.2f}x)\n")
        out.write("\n")
        pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(30)
        (HERE / "profiles" / f"scale-{tag}-{name}.txt").write_text(out.getvalue())
        print(out.getvalue().split("\n\n")[0], flush=True)


if __name__ == "__main__":
    main()
