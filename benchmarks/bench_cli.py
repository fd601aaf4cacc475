"""``opspec infer IN -o OUT`` against ``opspec.infer_shapes_path`` and onnx's ``infer_shapes_path``
on a 1M-node chain: wall and CPU time and peak memory of each, a process of its own, interleaved."""
from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

ROUNDS = 3
NODES = 1_000_000


#: Appended to each program: its peak resident memory, on stderr (see ``infer_worker.peak_mb``).
_REPORT_PEAK = "; from infer_worker import peak_mb; print(peak_mb(), file=sys.stderr)"


def _cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _measure(code: str, arguments: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak resident MB of one fresh process running ``code``."""
    cpu = _cpu_of_children()
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code + _REPORT_PEAK, *arguments], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, check=True, env={**os.environ, "PYTHONPATH": str(HERE)})
    seconds = time.perf_counter() - started
    return seconds, _cpu_of_children() - cpu, float(done.stderr.strip().splitlines()[-1])


def bench_cli() -> list[str]:
    import workloads

    with tempfile.TemporaryDirectory() as folder:
        source, _ = workloads.write(Path(folder), "chain", lambda: workloads.models.elementwise_chain(NODES))
        target = str(Path(folder) / "out.onnx")
        programs = {  # what `opspec infer` runs is `opspec.cli.main` with its arguments
            "`opspec infer IN -o OUT`": "import sys; from opspec.cli import main; main(['infer', *sys.argv[1:2], '-o', "
                                        "sys.argv[2]])",
            "`opspec infer IN -o OUT --format json`": "import sys; from opspec.cli import main; "
                                                      "main(['infer', *sys.argv[1:2], '-o', sys.argv[2], "
                                                      "'--format', 'json'])",
            "`opspec.infer_shapes_path(IN, OUT, data_prop=True)`":
                "import sys, opspec; opspec.infer_shapes_path(sys.argv[1], sys.argv[2], data_prop=True)",
            "`onnx.shape_inference.infer_shapes_path(IN, OUT, data_prop=True)`":
                "import sys, onnx.shape_inference as s; s.infer_shapes_path(sys.argv[1], sys.argv[2], data_prop=True)",
        }
        best: dict[str, tuple[float, float, float]] = {}
        for _ in range(ROUNDS):  # interleaved
            for label, code in programs.items():
                seconds, cpu, peak = _measure(code, [str(source), target])
                known = best.get(label, (seconds, cpu, peak))
                best[label] = (min(seconds, known[0]), min(cpu, known[1]), min(peak, known[2]))
    api = best["`opspec.infer_shapes_path(IN, OUT, data_prop=True)`"]
    rows = ["| program | seconds | CPU seconds | peak MB | time / opspec API | CPU / opspec API "
            "| memory / opspec API |", "|---|---:|---:|---:|---:|---:|---:|"]
    for label, (seconds, cpu, peak) in best.items():
        rows.append(f"| {label} | {seconds:.2f} | {cpu:.2f} | {peak:,.0f} | {seconds / api[0]:.2f}x "
                    f"| {cpu / api[1]:.2f}x | {peak / api[2]:.2f}x |")
    rows += ["", f"A {NODES:,}-node elementwise chain file; each program a fresh process (interpreter start, "
             "imports, reading and writing the file included), best of "
             f"{ROUNDS} interleaved rounds, each column's best apart; CPU seconds are the child's user + system "
             "time (`getrusage`), peak MB its peak resident memory (`VmHWM`). The command prints a one-line "
             "summary in place of its table for models over 1,000 values (`--values` lists them); with "
             "`--format json` it lists every value, written as it comes. Profiles: "
             "`benchmarks/profile_cli.py` (`benchmarks/profiles/cli-*.txt`)."]
    return rows


BENCHMARK = ("cli", "The command line against the API on a 1M-node model", bench_cli)
