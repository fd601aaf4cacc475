"""``opspec.scan``: every model under some paths checked, inferred and (when asked) held against a
runtime, in parallel, one JSON line per model::

    result = opspec.scan(["models/"], report="scan.jsonl")
    print(result.summary.statuses)
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

from opspec.batch.discover import model_files, task_of
from opspec.batch.records import Failure, ScanOptions, Task, failed_record
from opspec.batch.report import ReportWriter, read_report
from opspec.batch.summary import Summary, summarize

#: A worker's default share of memory when none is given: the machine's memory over the workers,
#: but never less than this many bytes.
MIN_WORKER_MEMORY = 2 << 30


@dataclass(frozen=True)
class ScanResult:
    """What one scan did: the lines it wrote (one per model analysed, in the order they finished),
    the models it skipped (their content already in the report) and its summary."""

    records: tuple[dict[str, Any], ...]
    skipped: tuple[str, ...]
    summary: Summary


def scan(paths: Iterable[str | os.PathLike[str]], report: str | os.PathLike[str] | None = None, *,
         jobs: int | None = None, runtime: str | None = None, read_external: bool = False,
         timeout: float = ScanOptions.timeout, memory: int | None = None, ray: str | None = None,
         html: str | os.PathLike[str] | None = None, steps: tuple[Any, ...] = (), cost: bool = True,
         on_record: Callable[[dict[str, Any]], None] | None = None) -> ScanResult:
    """Analyse every model the paths name (files, folders searched for ``.onnx`` files, globs).

    Each model is loaded, checked (its inference with it), with ``runtime``
    (``onnxruntime[:PROVIDER]``) held against that runtime's kernel table, and with ``cost``
    costed (``opspec cost``'s totals); external data is read only with ``read_external``. ``report`` (a JSON-lines file) gets one line per model as
    it finishes; models whose SHA-256 is in it already are skipped. ``jobs`` worker processes
    (default: every core) each may take ``timeout`` seconds per model and map ``memory`` bytes
    (default: the machine's memory shared among them); a model past either is one failed line,
    as is one that crashes its worker. ``steps`` replaces the analysis (see
    :data:`~opspec.batch.steps.STEPS`; functions of a module, which workers import). ``ray`` (``auto``, ``ray://HOST:PORT`` or ``local``) runs
    the models as Ray tasks instead. ``html`` writes the whole report as a page. ``on_record`` is
    called with each line as it comes. Workers are fresh interpreters, which import the
    calling script again: a script that scans from its top level keeps that under
    ``if __name__ == "__main__":``, as with any process pool.

    Raises ValueError for a path naming nothing or an unknown runtime, and OSError when the
    report cannot be written.
    """
    from opspec.batch.local import run_local

    started = time.monotonic()
    if runtime is not None:
        from opspec.runtime.checker.runtime_support import parse_target

        parse_target(runtime)
    jobs = jobs if jobs is not None else (os.cpu_count() or 1)
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    if timeout <= 0:
        raise ValueError(f"timeout must be positive, got {timeout:g}")
    options = ScanOptions(runtime, read_external, timeout, memory if memory is not None else default_memory(jobs),
                          tuple(steps), cost)
    files = model_files(paths)
    known = {record.get("sha256") for record in read_report(report)} if report is not None else set()
    records: list[dict[str, Any]] = []
    skipped: list[str] = []
    writer = ReportWriter(report) if report is not None else None

    def finished(record: dict[str, Any]) -> None:
        if writer is not None:
            writer.write(record)
        records.append(record)
        if on_record is not None:
            on_record(record)

    def tasks() -> Iterator[Task]:
        for path in files:
            try:
                task = task_of(path)
            except OSError as error:
                finished(failed_record(Task(path, "", 0), Failure.UNREADABLE, f"cannot read {path}: "
                                                                              f"{error.strerror or error}"))
                continue
            if task.sha256 in known:
                skipped.append(path)
                continue
            yield task

    try:
        if ray is not None:
            from opspec.batch.on_ray import run_on_ray

            run_on_ray(tasks(), options, ray, finished)
        else:
            run_local(tasks(), options, jobs, finished)
    finally:
        if writer is not None:
            writer.close()
    if html is not None:
        write_html(read_report(report) if report is not None else records, html)
    return ScanResult(tuple(records), tuple(skipped), summarize(records, len(skipped), time.monotonic() - started))


def default_memory(jobs: int) -> int | None:
    """Bytes of address space each of ``jobs`` workers may map by default (None: unknown)."""
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    return max(MIN_WORKER_MEMORY, total // jobs)


def write_html(records: Iterable[dict[str, Any]], path: str | os.PathLike[str]) -> None:
    """The report's lines as one self-contained page at ``path``."""
    from opspec.batch.html_report import render
    from opspec.runtime.atomic_file import write_output

    write_output(path, render(records).encode())


__all__ = ["MIN_WORKER_MEMORY", "ScanResult", "default_memory", "scan", "write_html"]
