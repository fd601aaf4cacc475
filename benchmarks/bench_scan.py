"""``opspec scan`` at scale: the field generator's malformed models and the real-model set in one run.

Models: ``--fuzz`` models (default 3,000) made by ``tests/ir_field_mutations.py`` from the node
suite's and the exported test models (seed as ``tests/test_fuzz_ir_fields.py``; written once to
``.build/fuzz3000``), and the real-model set's models (``OPSPEC_REAL_SET``, default
``.build/real_set``; ``benchmarks/real_set.py`` builds it). Each run writes a fresh report; a model
is lost when no line names it. Measured: wall time and CPU time (the scan's process and its
workers) of the local pool with one worker and with two (parallel efficiency: time with one /
(2 x time with two)), the same scan as Ray tasks on a local Ray instance of two CPUs (lines compared
with the pool's, timings left out), models per second, the median time of one model and the peak
memory of a worker. The best of ``--repeat`` runs counts.

    .venv/bin/python benchmarks/bench_scan.py [--fuzz N] [--repeat N] [--no-ray] [--markdown]
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / ".build" / "bench_scan"
REAL_SET = Path(os.environ.get("OPSPEC_REAL_SET", REPO / ".build" / "real_set"))


def fuzz_models(count: int) -> Path:
    """``count`` malformed models in ``.build/fuzz<count>`` (made once; kept for later runs)."""
    folder = REPO / ".build" / f"fuzz{count}"
    if len(list(folder.glob("*.onnx"))) == count:
        return folder
    sys.path.insert(0, str(REPO / "tests"))
    from ir_field_mutations import mutated_models
    from test_fuzz_ir_fields import SEED, seed_models

    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for case, model, _ in mutated_models(SEED, count, seed_models()):
        (folder / f"{case:05}.onnx").write_bytes(model.SerializeToString())
    return folder


@dataclass(frozen=True)
class Run:
    """One scan: its lines, wall seconds and CPU seconds (None where its workers are not ours)."""

    records: list[dict[str, Any]]
    wall: float
    cpu: float | None


def scan_once(paths: list[str], name: str, jobs: int, ray: str | None = None) -> Run:
    import opspec

    report = OUT / f"{name}.jsonl"
    report.unlink(missing_ok=True)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    own = time.process_time()
    started = time.perf_counter()
    result = opspec.scan(paths, report, jobs=jobs, ray=ray)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    workers = (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
    cpu = None if ray else time.process_time() - own + workers
    return Run(list(result.records), wall, cpu)


def best(paths: list[str], name: str, jobs: int, repeat: int, ray: str | None = None) -> Run:
    runs = [scan_once(paths, name, jobs, ray) for _ in range(repeat)]
    return min(runs, key=lambda run: run.wall)


def lost(run: Run, expected: set[str]) -> int:
    return len(expected - {record["path"] for record in run.records})


def comparable_lines(run: Run) -> list[dict[str, Any]]:
    from opspec.batch.records import comparable

    return sorted((comparable(record) for record in run.records), key=lambda record: record["path"])


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "?"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fuzz", type=int, default=3000, help="malformed models to scan (default 3000)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each scan; the fastest counts")
    parser.add_argument("--no-ray", action="store_true", help="leave out the scan on Ray")
    parser.add_argument("--markdown", action="store_true", help="print the results as a Markdown table")
    args = parser.parse_args(argv)
    from opspec.batch.discover import model_files

    OUT.mkdir(parents=True, exist_ok=True)
    fuzz = fuzz_models(args.fuzz)
    real = sorted(str(path) for path in REAL_SET.glob("*.onnx"))
    paths = [str(fuzz), *real]
    expected = set(model_files(paths))
    print(f"{len(expected):,} models: {args.fuzz:,} malformed, {len(real)} real ({REAL_SET}); "
          f"{os.cpu_count()} cores; load average {load()}", file=sys.stderr)
    two = best(paths, "pool2", 2, args.repeat)
    one = best(paths, "pool1", 1, args.repeat)
    on_ray = None
    if not args.no_ray:
        try:
            import ray
        except ImportError:
            print("ray is not installed: the scan on Ray is left out", file=sys.stderr)
        else:
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
            try:
                on_ray = best(paths, "ray", 2, args.repeat, ray="local")
            finally:
                ray.shutdown()
    assert one.cpu is not None and two.cpu is not None
    seconds = [sum(record["timings"].values()) for record in two.records]
    peaks: dict[int, int] = {}
    for record in two.records:
        worker = record.get("worker", {})
        peaks[worker.get("pid", 0)] = max(peaks.get(worker.get("pid", 0), 0), worker.get("peak_rss", 0))
    statuses: dict[str, int] = {}
    for record in two.records:
        statuses[record["status"]] = statuses.get(record["status"], 0) + 1
    rows = [
        ("models", f"{len(expected):,} ({args.fuzz:,} malformed + {len(real)} real)"),
        ("outcome (2 workers)", ", ".join(f"{count:,} {status}" for status, count in statuses.items())),
        ("lost models (1 worker / 2 workers / Ray)",
         f"{lost(one, expected)} / {lost(two, expected)} / {lost(on_ray, expected) if on_ray else '-'}"),
        ("wall s, 1 worker", f"{one.wall:.1f} (CPU {one.cpu:.1f})"),
        ("wall s, 2 workers", f"{two.wall:.1f} (CPU {two.cpu:.1f})"),
        ("parallel efficiency on 2 cores (wall 1 worker / (2 x wall 2 workers))", f"{one.wall / (2 * two.wall):.2f}"),
        ("cores the scan got (CPU s / wall s), 1 worker / 2 workers",
         f"{one.cpu / one.wall:.2f} / {two.cpu / two.wall:.2f}"),
        ("CPU s with 1 worker / CPU s with 2 workers", f"{one.cpu / two.cpu:.2f}"),
        ("models/s, 2 workers", f"{len(two.records) / two.wall:.1f}"),
        ("per-model median ms (steps' wall time)", f"{statistics.median(seconds) * 1000:.1f}"),
        ("slowest model s", f"{max(seconds):.2f}"),
        ("peak memory per worker MiB", ", ".join(f"{peak / 2**20:.0f}" for peak in sorted(peaks.values()))),
    ]
    if on_ray is not None:
        same = comparable_lines(on_ray) == comparable_lines(two)
        rows += [("wall s, Ray (local, 2 CPUs)", f"{on_ray.wall:.1f}"),
                 ("Ray lines equal the pool's", "yes" if same else "NO")]
    rows.append(("load average after", load()))
    if args.markdown:
        print("| measure | value |\n|---|---|")
        for label, value in rows:
            print(f"| {label} | {value} |")
    else:
        width = max(len(label) for label, _ in rows)
        for label, value in rows:
            print(f"{label:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
