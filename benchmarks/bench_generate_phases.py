"""Where the time of `opspec generate` goes on the built-in tree x10: the command's phases, each
with its wall time and the CPU time of the parent process, from fresh processes writing into fresh
folders. The phases in which the parent works alone (all but compiling and rendering, which the
forked processes share) are its serial part. ``.venv/bin/python benchmarks/run.py --only generate_phases``."""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from run import _scaled_tree

#: Fresh processes (and output folders); the median of each phase is reported.
RUNS = 5

#: Runs the command with a few of its functions wrapped to note when they start and end (in the
#: parent process only), then prints the notes as JSON on stderr.
_WRAPPED = r'''
import json, os, sys, time
started, cpu, notes, me = time.perf_counter(), time.process_time(), [], os.getpid()
def note(label):
    if os.getpid() == me:
        notes.append((label, time.perf_counter() - started, time.process_time() - cpu))
def wrap(owner, name):
    function = getattr(owner, name)
    def wrapped(*args, **kwargs):
        note("> " + name)
        try:
            return function(*args, **kwargs)
        finally:
            note("< " + name)
    setattr(owner, name, wrapped)
import opspec.cli as cli
import opspec.codegen.compiler as compiler, opspec.codegen.staging as staging
for owner, name in ((compiler, "compile_trees"), (compiler, "_plan"), (compiler, "_outcome"),
                    (staging.Stage, "run"), (staging.Stage, "commit")):
    wrap(owner, name)
main = cli.main
def noted():
    status = main()
    note("main returned")
    print(json.dumps(notes), file=sys.stderr)
    return status
cli.main = noted
sys.argv = ["opspec", "generate", "--opdefs", sys.argv[1], "--out", sys.argv[2]]
cli.run()
'''

#: The phases: (name, the note it starts at, the note it ends at, whether the parent works alone).
_PHASES = (("start and imports", None, "> compile_trees", True),
           ("planning (the trees walked, the built-in rules read)", "> compile_trees", "last < _plan", True),
           ("compiling (forked)", "last < _plan", "> _outcome", False),
           ("outcomes, render jobs, worked-example registry", "> _outcome", "> run", True),
           ("rendering and staging (forked)", "> run", "< run", False),
           ("commit (sync, renames, sync)", "> commit", "< commit", True),
           ("after commit, until the process has ended", "< commit", None, True))


def _times(notes: list[list[Any]], total: float) -> dict[str, tuple[float, float]]:
    """Each phase's wall and parent CPU seconds, from the notes of one run."""
    def at(label: str | None) -> tuple[float, float]:
        if label is None:
            return 0.0, 0.0
        last = label.startswith("last ")
        found = [(float(wall), float(cpu)) for name, wall, cpu in notes if name == label.removeprefix("last ")]
        return found[-1] if last else found[0]

    times = {}
    for name, start, end, _ in _PHASES:
        (wall0, cpu0), (wall1, cpu1) = at(start), at(end)
        if end is None:
            wall1, cpu1 = total, at("main returned")[1]
        times[name] = (wall1 - wall0, cpu1 - cpu0)
    return times


def bench_generate_phases() -> list[str]:
    runs: list[dict[str, tuple[float, float]]] = []
    with tempfile.TemporaryDirectory() as scratch:  # removed when every run is done
        tree = Path(scratch) / "opdefs"
        _scaled_tree(10, tree)
        for run in range(RUNS):
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", _WRAPPED, str(tree), str(Path(scratch) / f"out{run}")],
                                  check=True, capture_output=True, text=True, cwd=scratch)
            total = time.perf_counter() - started
            runs.append(_times(json.loads(done.stderr.strip().splitlines()[-1]), total))
    rows = ["| phase | wall seconds | parent CPU seconds |", "|---|---:|---:|"]
    serial = [0.0, 0.0]
    for name, _, _, alone in _PHASES:
        wall = statistics.median(times[name][0] for times in runs)
        cpu = statistics.median(times[name][1] for times in runs)
        rows.append(f"| {name} | {wall:.3f} | {cpu:.3f} |")
        if alone:
            serial = [serial[0] + wall, serial[1] + cpu]
    rows.append(f"| **the parent alone (sum of the phases not forked)** | **{serial[0]:.3f}** | **{serial[1]:.3f}** |")
    load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    rows += ["", f"Median of {RUNS} runs of `opspec generate --opdefs TREE --out FRESH_FOLDER` on the built-in "
                 f"tree x10, each in a fresh process timed from outside (the last phase includes the interpreter's "
                 f"start, which the first phase does not). Load average at the end: {load} (above the core "
                 f"count, wall times grow and the CPU seconds are the figures to compare)."]
    return rows


BENCHMARK = ("generate_phases", "Where the time of `opspec generate` goes (built-in tree x10)", bench_generate_phases)
