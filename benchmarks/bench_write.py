"""Writing a generation's files: the rendering processes sending the text back and one process
writing every file, against the rendering processes staging them (each file's temporary made
where it is rendered) with the parent then putting them in place. ``.venv/bin/python benchmarks/run.py --only write``."""
from __future__ import annotations

import os
import resource
import shutil
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Callable

from run import _scaled_tree

#: Fresh folders written per way of writing, interleaved; the best run of each is reported.
RUNS = 5


def _cpu() -> float:
    """CPU seconds (user and system) of this process and of the processes it waited for."""
    return sum(usage.ru_utime + usage.ru_stime
               for usage in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)))


def _ways(files: dict[str, bytes]) -> dict[str, Callable[[Path], None]]:
    from opspec.codegen import staging
    from opspec.codegen.render import Job, run_jobs
    from opspec.runtime.atomic_file import status_of, write_all_atomically

    texts = [(path, content.decode("utf-8")) for path, content in files.items()]
    jobs: list[Job] = [partial(dict, [(path, text)]) for path, text in texts]

    def one_process(out: Path) -> None:  # the rendering processes send the text; then one batch here
        stage = staging.Stage(out, check=False, force=False)
        rendered = run_jobs(jobs)
        targets = {out / path: text.encode("utf-8") for path, text in rendered.items()}
        statuses = {target: status_of(target) for target in targets}
        for target in targets:
            staging._inside(out, target.relative_to(out).as_posix(), stage.root, stage.resolved, False)
        for folder in sorted({target.parent for target in targets}):
            folder.mkdir(parents=True, exist_ok=True)
        write_all_atomically(targets, statuses)

    def staged(runs: int | None) -> Callable[[Path], None]:
        def write(out: Path) -> None:
            saved, staging._RUN = staging._RUN, runs
            try:
                stage = staging.Stage(out, check=False, force=False)
                stage.commit(stage.run(jobs))
            finally:
                staging._RUN = saved
        return write

    return {"rendering processes send the text, one process writes every file": one_process,
            f"rendering processes stage their files (runs of {staging._RUN}, from both ends)": staged(staging._RUN),
            "rendering processes stage their files (taken in turn, one by one)": staged(None)}


def bench_write() -> list[str]:
    """The 8,329 files of the built-in tree x10, already rendered, written into fresh folders."""
    from opspec.codegen.generate import build
    from opspec.codegen.parallel import collector_paused, worker_count

    with tempfile.TemporaryDirectory() as folder:
        tree = Path(folder) / "opdefs"
        _scaled_tree(10, tree)
        with collector_paused():
            files = build(tree, with_protos=False, out=Path(folder) / "out").files
        ways = _ways(files)
        best: dict[str, tuple[float, float]] = {}
        for run in range(RUNS):
            for name, write in ways.items():
                out = Path(folder) / f"out{run}"
                shutil.rmtree(out, ignore_errors=True)
                os.sync()
                cpu, started = _cpu(), time.perf_counter()
                with collector_paused():
                    write(out)
                seconds, cpu = time.perf_counter() - started, _cpu() - cpu
                best[name] = min(best.get(name, (seconds, cpu)), (seconds, cpu))
                shutil.rmtree(out, ignore_errors=True)
    rows = ["| way of writing | files | wall seconds | CPU seconds |", "|---|---:|---:|---:|"]
    rows += [f"| {name} | {len(files)} | {seconds:.2f} | {cpu:.2f} |" for name, (seconds, cpu) in best.items()]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    rows += ["", f"Best of {RUNS} runs of each, interleaved, each into a fresh folder (the rendering itself is not "
                 f"timed: each job, run in the forked processes, hands over a rendered file). {worker_count()} processes may run; load average at "
                 f"the end: {load:.1f}."]
    return rows


BENCHMARK = ("write", "Writing a generation's files", bench_write)
