"""Models analysed on this machine's cores, on the standard library's process pool.

At most one model per worker is in flight, so a model's time is counted from when it was handed
out. A worker that dies (a crash below Python, a kill) breaks the pool: the models then in flight
are analysed again one at a time in a pool of their own, which tells the culprit (one failed line)
from its neighbours; the scan goes on in a new pool. A model still running well past its time
limit (the worker's own alarm did not fire: a hang inside a C call) has its workers killed.
"""
from __future__ import annotations

import multiprocessing
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Iterable

from opspec.batch.guard import analyse_guarded, start_worker
from opspec.batch.records import Failure, ScanOptions, Task, failed_record

#: How often the scheduler looks for models past their time (seconds).
POLL = 1.0

Record = dict[str, Any]


def run_local(tasks: Iterable[Task], options: ScanOptions, jobs: int, on_record: Callable[[Record], None]) -> None:
    """Analyse ``tasks`` on ``jobs`` worker processes, handing each model's line to ``on_record``
    (in this process, as each finishes)."""
    queue = iter(tasks)
    deadline = options.deadline
    executor = _pool(jobs, options)
    running: dict[Future[Record], tuple[Task, float]] = {}
    try:
        while True:
            while len(running) < jobs and (task := next(queue, None)) is not None:
                running[executor.submit(analyse_guarded, task, options)] = (task, time.monotonic())
            if not running:
                executor.shutdown(wait=True)
                return
            done, _ = wait(running, timeout=POLL, return_when=FIRST_COMPLETED)
            broken = False
            for future in done:
                task, _started = running.pop(future)
                record = _outcome(future, task)
                if record is None:
                    broken = True
                    running[future] = (task, _started)  # retried below with the others in flight
                else:
                    on_record(record)
            now = time.monotonic()
            overdue = [future for future, (_, started) in running.items() if now - started > deadline]
            if not broken and not overdue:
                continue
            for future in overdue:
                task, _ = running.pop(future)
                on_record(failed_record(task, Failure.TIMEOUT, f"no answer within {options.timeout:g} s "
                                                               "(its worker was stopped)"))
            _stop(executor)
            suspects = _settle(running, on_record)
            running.clear()
            for task in suspects:
                on_record(_alone(task, options, deadline))
            executor = _pool(jobs, options)
    except BaseException:  # Ctrl-C among them: workers still busy are stopped
        _stop(executor)
        raise


def _pool(jobs: int, options: ScanOptions) -> ProcessPoolExecutor:
    # Fresh interpreters (not forks of a process that may run threads), each under its memory limit.
    return ProcessPoolExecutor(jobs, multiprocessing.get_context("spawn"), initializer=start_worker,
                               initargs=(options,))


def _outcome(future: Future[Record], task: Task) -> Record | None:
    """The line ``future`` brought back, or None when its worker died."""
    try:
        return future.result()
    except BrokenProcessPool:
        return None
    except Exception as error:  # noqa: BLE001 - the worker's answer could not come back whole
        return failed_record(task, Failure.CRASH, f"{type(error).__name__}: {error}")


def _settle(running: dict[Future[Record], tuple[Task, float]], on_record: Callable[[Record], None]) -> list[Task]:
    """Once the pool is stopped: the lines of models that finished, and the models to try again."""
    suspects = []
    for future, (task, _) in running.items():
        record = _outcome(future, task) if future.done() and not future.cancelled() else None
        if record is None:
            suspects.append(task)
        else:
            on_record(record)
    return suspects


def _alone(task: Task, options: ScanOptions, deadline: float) -> Record:
    """``task`` analysed in a pool of its own: a worker that dies again is this model's failure."""
    executor = _pool(1, options)
    try:
        future = executor.submit(analyse_guarded, task, options)
        done, _ = wait([future], timeout=deadline)
        if not done:
            return failed_record(task, Failure.TIMEOUT, f"no answer within {options.timeout:g} s "
                                                        "(its worker was stopped)")
        record = _outcome(future, task)
        if record is None:
            return failed_record(task, Failure.CRASH, "the worker process analysing the model died")
        return record
    finally:
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


__all__ = ["POLL", "run_local"]
