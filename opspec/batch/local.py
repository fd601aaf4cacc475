"""Models analysed on this machine's cores, on the standard library's process pool.

Models go to the workers in small batches (:func:`batches`), as many as take about
:data:`BATCH_SECONDS` by the times measured so far, so that handing work out and bringing lines
back costs little beside the analysis of a small model, while slow models go one by one (their
lines written as each finishes, their time limits kept closely); at most one batch per
worker is in flight, so a batch's time is counted from when it was handed out. A worker that dies
(a crash below Python, a kill) breaks the pool: the models then in flight are analysed again one
at a time in a pool of their own, which tells the culprit (one failed line) from its neighbours,
and the scan goes on in a new pool. A batch still running well past its models' time limits (a
worker's own alarm did not fire: a hang inside a C call) has its workers stopped the same way.
"""
from __future__ import annotations

import multiprocessing
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Iterable, Iterator

from opspec.batch.guard import analyse_batch, start_worker
from opspec.batch.records import Failure, ScanOptions, Task, failed_record

#: At most this many models, and at most this many bytes of model files, in one batch (a
#: larger model goes alone).
BATCH_MODELS = 16
BATCH_BYTES = 4 << 20
#: The analysis time a batch is made to take, by the mean time of the models analysed so far.
BATCH_SECONDS = 0.2
#: How often the scheduler looks for batches past their time (seconds).
POLL = 1.0

Record = dict[str, Any]
Batch = tuple[Task, ...]


class BatchSize:
    """How many models the next batch holds: one at first, then as many as take about
    :data:`BATCH_SECONDS` at the mean analysis time of the models seen (at most :data:`BATCH_MODELS`)."""

    def __init__(self) -> None:
        self.models = 1
        self._seconds = 0.0
        self._count = 0

    def seen(self, records: Iterable[Record]) -> None:
        for record in records:
            self._seconds += sum(record.get("timings", {}).values())
            self._count += 1
        mean = self._seconds / self._count if self._count else 0.0
        self.models = BATCH_MODELS if mean <= 0 else max(1, min(BATCH_MODELS, int(BATCH_SECONDS / mean)))


def batches(tasks: Iterable[Task], size: BatchSize, most_bytes: int = BATCH_BYTES) -> Iterator[Batch]:
    """``tasks`` in order, grouped into batches of ``size.models`` models (read as each batch
    starts) and at most ``most_bytes`` bytes (one model larger than that alone)."""
    batch: list[Task] = []
    held = 0
    for task in tasks:
        if batch and (len(batch) >= size.models or held + task.size > most_bytes):
            yield tuple(batch)
            batch, held = [], 0
        batch.append(task)
        held += task.size
    if batch:
        yield tuple(batch)


def run_local(tasks: Iterable[Task], options: ScanOptions, jobs: int, on_record: Callable[[Record], None]) -> None:
    """Analyse ``tasks`` on ``jobs`` worker processes, handing each model's line to ``on_record``
    (in this process, as each batch comes back)."""
    size = BatchSize()
    queue = batches(tasks, size)
    executor = _pool(jobs, options)
    running: dict[Future[list[Record]], tuple[Batch, float]] = {}
    try:
        while True:
            while len(running) < jobs and (batch := next(queue, None)) is not None:
                running[executor.submit(analyse_batch, batch, options)] = (batch, time.monotonic())
            if not running:
                executor.shutdown(wait=True)
                return
            done, _ = wait(running, timeout=POLL, return_when=FIRST_COMPLETED)
            broken = False
            for future in done:
                records = _outcome(future, running[future][0])
                if records is None:
                    broken = True  # its models are tried again below, with the others in flight
                    continue
                del running[future]
                size.seen(records)
                for record in records:
                    on_record(record)
            now = time.monotonic()
            overdue = any(now - started > len(batch) * options.deadline for batch, started in running.values())
            if not broken and not overdue:
                continue
            _stop(executor)
            suspects = _settle(running, on_record)
            running.clear()
            _one_by_one(suspects, options, on_record)
            executor = _pool(jobs, options)
    except BaseException:  # Ctrl-C among them: workers still busy are stopped
        _stop(executor)
        raise


def _pool(jobs: int, options: ScanOptions) -> ProcessPoolExecutor:
    # Fresh interpreters (not forks of a process that may run threads), each under its memory limit.
    return ProcessPoolExecutor(jobs, multiprocessing.get_context("spawn"), initializer=start_worker,
                               initargs=(options,))


def _outcome(future: Future[list[Record]], batch: Batch) -> list[Record] | None:
    """The lines ``future`` brought back, or None when its worker died."""
    try:
        return future.result()
    except BrokenProcessPool:
        return None
    except Exception as error:  # noqa: BLE001 - the worker's answer could not come back whole
        return [failed_record(task, Failure.CRASH, f"{type(error).__name__}: {error}") for task in batch]


def _settle(running: dict[Future[list[Record]], tuple[Batch, float]],
            on_record: Callable[[Record], None]) -> list[Task]:
    """Once the pool is stopped: the lines of batches that finished, and the models to try again."""
    suspects: list[Task] = []
    for future, (batch, _) in running.items():
        records = _outcome(future, batch) if future.done() and not future.cancelled() else None
        if records is None:
            suspects.extend(batch)
        else:
            for record in records:
                on_record(record)
    return suspects


def _one_by_one(tasks: list[Task], options: ScanOptions, on_record: Callable[[Record], None]) -> None:
    """``tasks`` analysed one at a time on one worker: a worker that dies or hangs is that model's
    failure (and a new worker takes the rest)."""
    executor: ProcessPoolExecutor | None = None
    try:
        for task in tasks:
            executor = executor or _pool(1, options)
            future = executor.submit(analyse_batch, (task,), options)
            done, _ = wait([future], timeout=options.deadline)
            records = _outcome(future, (task,)) if done else None
            if records is not None:
                on_record(records[0])
                continue
            on_record(failed_record(task, Failure.CRASH, "the worker process analysing the model died") if done else
                      failed_record(task, Failure.TIMEOUT, f"no answer within {options.timeout:g} s "
                                                           "(its worker was stopped)"))
            _stop(executor)
            executor = None
    finally:
        if executor is not None:
            _stop(executor)


def _stop(executor: ProcessPoolExecutor) -> None:
    """Stop ``executor`` now, killing workers still busy."""
    kill = getattr(executor, "kill_workers", None)  # Python 3.14
    if kill is not None:
        kill()
    else:  # before 3.14 the pool keeps its processes by pid here
        for process in list((getattr(executor, "_processes", None) or {}).values()):
            if process.is_alive():
                process.kill()
    executor.shutdown(wait=True, cancel_futures=True)


__all__ = ["BATCH_BYTES", "BATCH_MODELS", "BATCH_SECONDS", "POLL", "BatchSize", "batches", "run_local"]
