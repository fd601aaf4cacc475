"""opspec benchmarks: import cost, lookup latency, generation speed, inference throughput.

Run with ``make bench`` (or ``.venv/bin/python benchmarks/run.py [--only NAME,...]``).
Results print as Markdown and are written to ``benchmarks/results.md``; onnx (and
onnxruntime, when installed) are measured side by side in the same run.
"""
from __future__ import annotations

import argparse
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PYTHON = sys.executable
PACKAGE_DIRS = ("opspec", "codegen", "runtime", "generated")


def _process_ms(code: str) -> float:
    started = time.perf_counter()
    subprocess.run([PYTHON, "-c", code], check=True)
    return (time.perf_counter() - started) * 1000


def bench_import(runs: int = 40) -> list[str]:
    """Fresh-process cost of importing and doing one lookup, over a bare interpreter."""
    programs = {
        "baseline": "pass",
        "opspec": "import opspec; opspec.get_schema('Add')",
        "opspec.onnxruntime": "import opspec.onnxruntime as o; o.get_schema('FastGelu', domain='com.microsoft')",
        "onnx": "import onnx.defs; onnx.defs.get_schema('Add')",
    }
    # Byte-compile the source tree as an installer would (an editable install does not, and
    # PYTHONDONTWRITEBYTECODE may stop imports from caching it), then warm the file cache.
    subprocess.run([PYTHON, "-m", "compileall", "-q", *(str(REPO / d) for d in PACKAGE_DIRS)], check=True)
    for code in programs.values():
        _process_ms(code)
    samples: dict[str, list[float]] = {name: [] for name in programs}
    for _ in range(runs):  # interleaved, so machine noise hits all alike
        for name, code in programs.items():
            samples[name].append(_process_ms(code))
    base = statistics.median(samples["baseline"])
    rows = ["| program | median ms | over `python -c pass` |", "|---|---:|---:|"]
    for name, values in samples.items():
        median = statistics.median(values)
        rows.append(f"| `{programs[name]}` | {median:.1f} | {median - base:+.1f} |")
    return rows


def bench_lookup() -> list[str]:
    """Warm ``get_schema`` latency, opspec and onnx."""
    import onnx.defs

    import opspec
    import opspec.onnxruntime

    rows = ["| call | ns per call |", "|---|---:|"]
    for label, call in (
        ("opspec.get_schema('Add')", lambda: opspec.get_schema("Add")),
        ("opspec.get_schema('Add', 13)", lambda: opspec.get_schema("Add", 13)),
        ("opspec.onnxruntime.get_schema('FastGelu', domain='com.microsoft')",
         lambda: opspec.onnxruntime.get_schema("FastGelu", domain="com.microsoft")),
        ("onnx.defs.get_schema('Add')", lambda: onnx.defs.get_schema("Add")),
        ("onnx.defs.get_schema('Add', 13)", lambda: onnx.defs.get_schema("Add", 13)),
    ):
        call()
        best = min(timeit.repeat(call, number=200_000, repeat=5)) / 200_000
        rows.append(f"| `{label}` | {best * 1e9:.0f} |")
    return rows


def _op_files(source: Path) -> list[Path]:
    """The op files of a tree and of the op sets layered over it (each file names its ``op:``)."""
    return [path for path in sorted(source.rglob("*.yaml"))
            if any(line.startswith("op: ") for line in path.read_text(encoding="utf-8").splitlines()[:3])]


def _scaled_tree(factor: int, target: Path) -> int:
    """Copy the built-in opdefs (layered op sets included) with every op repeated ``factor`` times
    under new names."""
    source = REPO / "opdefs"
    shutil.copytree(source, target)
    count = 0
    for path in _op_files(source):
        text = path.read_text(encoding="utf-8")
        for copy in range(factor):
            name = path.stem if copy == 0 else f"{path.stem}Copy{copy}"
            destination = target / path.relative_to(source).parent / f"{name}.yaml"
            destination.write_text(text.replace(f"op: {path.stem}\n", f"op: {name}\n", 1), encoding="utf-8")
            count += 1
    return count


def bench_generate() -> list[str]:
    """Full generation (compile, render modules and docs, write) at 1x, 10x and 100x the built-in
    tree, each by the ``opspec generate`` command in a fresh process writing into a fresh folder:
    schemas per second of wall time, and CPU time beside it (of the command and the processes it
    forks), as the machine may be shared. Best of 3 runs for 1x and 10x, one run for 100x."""
    rows = ["| opdefs | ops | schemas | files | wall seconds | CPU seconds | schemas/s (wall) | schemas per CPU second |",
            "|---|---:|---:|---:|---:|---:|---:|---:|"]
    with tempfile.TemporaryDirectory() as scratch:  # removed when every run is done (see the note below)
        for factor, runs in ((1, 3), (10, 3), (100, 1)):
            folder = Path(scratch) / f"x{factor}"
            tree = folder / "opdefs"
            ops = _scaled_tree(factor, tree)
            results: list[tuple[float, float, str]] = []
            for run in range(runs):  # each into a fresh folder: every file is written
                out = folder / f"out{run}"
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                started = time.perf_counter()
                printed = subprocess.run([PYTHON, "-m", "opspec", "generate", "--opdefs", str(tree), "--out", str(out)],
                                         check=True, capture_output=True, text=True).stdout
                seconds = time.perf_counter() - started
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
                results.append((seconds, cpu, printed))
            seconds, cpu, printed = min(results)
            summary = printed.strip().splitlines()[-1]  # "generated 4 domains, 2,270 ops, 6,590 schemas; ..."
            schemas = sum(int(count.replace(",", "")) for count in re.findall(r"([\d,]+) schemas", summary))
            files = sum(len(names) for _, _, names in os.walk(folder / "out0"))
            rows.append(f"| built-in x{factor} | {ops} | {schemas} | {files} | {seconds:.2f} | {cpu:.2f} | "
                        f"{schemas / seconds:,.0f} | {schemas / cpu:,.0f} |")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    rows += ["", f"Each run is `opspec generate --opdefs TREE --out FRESH_FOLDER` in a fresh process, timed from "
                 f"outside it (interpreter start, imports and exit included); CPU seconds count the processes it "
                 f"forks. Load average at the end "
                 f"of the run: {load:.1f} on {_cpu_count()} cores (above the core count, wall time grows and CPU "
                 f"seconds are the figure to compare). Nothing is deleted until every run is done: shortly after many "
                 f"files were deleted, making a file can cost several times the kernel time (a kernel profile on "
                 f"ext4 shows its inode allocator passing over recently freed inodes), so a clean-up between runs "
                 f"would slow the next one."]
    return rows


BENCHMARKS = {
    "import": ("Import and first lookup in a fresh process", bench_import),
    "lookup": ("Warm schema lookup", bench_lookup),
    "generate": ("Generation (`opspec generate`)", bench_generate),
}


def _extra_benchmarks() -> None:
    """Benchmarks defined beside this file (``bench_*.py`` with a ``BENCHMARK`` entry; one without
    it, such as ``bench_runtime_support.py``, is a program of its own that ``make bench`` runs apart)."""
    sys.path.insert(0, str(HERE))
    for path in sorted(HERE.glob("bench_*.py")):
        module = __import__(path.stem)
        if hasattr(module, "BENCHMARK"):
            name, title, function = module.BENCHMARK
            BENCHMARKS[name] = (title, function)


def main() -> None:
    _extra_benchmarks()
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", help=f"comma-separated subset of: {', '.join(BENCHMARKS)}")
    parser.add_argument("--no-write", action="store_true",
                        help="do not update benchmarks/results.md (else only the measured sections change)")
    args = parser.parse_args()
    chosen = args.only.split(",") if args.only else list(BENCHMARKS)
    lines = [
        "# Benchmark results",
        "",
        f"Measured by `make bench` on {platform.machine()}, Python {platform.python_version()}, "
        f"{platform.system()} ({_cpu_count()} cores).",
        "",
    ]
    for name in chosen:
        title, function = BENCHMARKS[name]
        print(f"## {title}", flush=True)
        rows = function()
        print("\n".join(rows) + "\n", flush=True)
        lines += [f"## {title}", "", *rows, ""]
    if not args.no_write:
        (HERE / "results.md").write_text(_merged(HERE / "results.md", lines), encoding="utf-8")


def _sections(text: str) -> dict[str, str]:
    """The ``## `` sections of a results page by title (their text up to the next one)."""
    found: dict[str, str] = {}
    title = ""
    for line in text.splitlines(keepends=True):
        if line.startswith("## "):
            title = line[3:].strip()
        if title:
            found[title] = found.get(title, "") + line
    return found


def _merged(path: Path, lines: list[str]) -> str:
    """This run's page, keeping the sections of the previous one that it did not measure."""
    fresh = "\n".join(lines)
    old = _sections(path.read_text(encoding="utf-8")) if path.is_file() else {}
    new = _sections(fresh)
    head = fresh[:fresh.index("## ")] if new else fresh
    ordered = [new.get(title, text) for title, text in old.items()] + [t for n, t in new.items() if n not in old]
    return head + "".join(text if text.endswith("\n\n") else text.rstrip("\n") + "\n\n" for text in ordered).rstrip("\n") + "\n"


def _cpu_count() -> int:
    return os.cpu_count() or 1


if __name__ == "__main__":
    main()
