"""Profiles of ``opspec infer IN -o OUT`` and ``opspec.infer_shapes_path`` on a chain file,
kept as text in benchmarks/profiles/.

``.venv/bin/python benchmarks/profile_cli.py TAG [NODES]`` writes ``profiles/cli-TAG.txt``:
for each program, its CPU seconds and peak resident memory in a fresh process (no profiler),
the peak of Python's own allocations (``tracemalloc``; protobuf's message memory is not
counted there), and cProfile's top 25 by cumulative time of one run. A quick reading for
finding where time and memory go, not the benchmark (``benchmarks/run.py --only cli``).
"""
from __future__ import annotations

import contextlib
import cProfile
import io
import json
import os
import pstats
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

#: Each program's call, as code run with the model path and the output path as ``sys.argv[1:3]``.
PROGRAMS = {
    "cli": "from opspec.cli import main; main(['infer', sys.argv[1], '-o', sys.argv[2]])",
    "api": "import opspec; opspec.infer_shapes_path(sys.argv[1], sys.argv[2], data_prop=True)",
}

_MEASURE = ("import sys, time, resource, contextlib, io; started = time.process_time()\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    {code}\n"
            "from infer_worker import peak_mb\n"
            "print(time.process_time() - started, peak_mb(), file=sys.stderr)")


def _fresh_process(code: str, source: Path, target: Path) -> tuple[float, float]:
    """CPU seconds (imports included) and peak resident MB of ``code`` run in a process of its own."""
    done = subprocess.run([sys.executable, "-c", _MEASURE.format(code=code), str(source), str(target)],
                          stderr=subprocess.PIPE, text=True, check=True, env={**os.environ, "PYTHONPATH": str(HERE)})
    seconds, peak = done.stderr.split()[-2:]
    return float(seconds), float(peak)


def _in_process(code: str, source: Path, target: Path) -> Callable[[], None]:
    def run() -> None:
        saved = sys.argv
        sys.argv = ["-", str(source), str(target)]
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(code, "<program>", "exec"), {"sys": sys})  # our own fixed programs above
        finally:
            sys.argv = saved
    return run


def main() -> None:
    import workloads

    tag = sys.argv[1] if len(sys.argv) > 1 else "current"
    nodes = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    out = io.StringIO()
    with tempfile.TemporaryDirectory() as folder:
        source, _ = workloads.write(Path(folder), "chain", lambda: workloads.models.elementwise_chain(nodes))
        target = Path(folder) / "out.onnx"
        out.write(f"# {nodes:,}-node elementwise chain ({source.stat().st_size:,} bytes)\n")
        for name, code in PROGRAMS.items():
            seconds, peak = _fresh_process(code, source, target)
            out.write(f"# {name}: `{code}`\n#   fresh process: {seconds:.2f} CPU s, peak {peak:,.0f} MB resident\n")
        for name, code in PROGRAMS.items():
            run = _in_process(code, source, target)
            run()  # imports, schemas and rules loaded
            tracemalloc.start()
            run()
            python_peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            profile = cProfile.Profile()
            profile.enable()
            run()
            profile.disable()
            out.write(f"\n## {name}: Python allocations at peak {python_peak / 2**20:,.0f} MB (tracemalloc)\n")
            stats = io.StringIO()
            pstats.Stats(profile, stream=stats).sort_stats("cumulative").print_stats(25)
            out.write(stats.getvalue())
    text = out.getvalue()
    (HERE / "profiles" / f"cli-{tag}.txt").write_text(text.replace(str(HERE.parent), "."))
    print(json.dumps([line for line in text.splitlines() if line.startswith("#")], indent=1))


if __name__ == "__main__":
    main()
