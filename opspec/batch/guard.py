"""One model's analysis inside a worker, kept to that model: an exception, a time limit passed
or memory exhausted becomes the model's failed line, and the worker goes on to the next.

A hang the time limit cannot interrupt (inside a C call) and a worker that dies are the
scheduler's to notice (:mod:`.local`, :mod:`.on_ray`).
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
from typing import Any

from opspec.batch.records import Failure, ScanOptions, Task, failed_record
from opspec.batch.steps import analyse


class _OutOfTime(BaseException):
    """Raised into the analysis when its time is up (not an ``Exception``: no handler inside
    the analysis may swallow it)."""


def _out_of_time(signum: int, frame: Any) -> None:
    raise _OutOfTime


def limit_memory(limit: int | None) -> None:
    """Keep this process's address space under ``limit`` bytes (None: as it is); an allocation
    beyond it raises MemoryError. Never raises a limit already lower."""
    if limit is None:
        return
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    wanted = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
    if soft == resource.RLIM_INFINITY or wanted < soft:
        resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))


def start_worker(options: ScanOptions) -> None:
    """A local worker's start: Ctrl-C left to the scan (which stops its workers), its memory
    limit, and the checker imported before the first model."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_end_with, args=(os.getppid(),), name="opspec-scan-parent", daemon=True).start()
    limit_memory(options.memory)
    import opspec.runtime.checker.whole  # noqa: F401 - imported once, not timed in a model's line
    import opspec.runtime.defs  # noqa: F401


def _end_with(parent: int) -> None:
    """End this worker once the scan that started it is gone (killed, it cannot stop its workers)."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


def analyse_guarded(task: Task, options: ScanOptions) -> dict[str, Any]:
    """:func:`~.steps.analyse`, with any failure as the model's failed line."""
    timed = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
    previous = signal.signal(signal.SIGALRM, _out_of_time) if timed else None
    if timed:
        signal.setitimer(signal.ITIMER_REAL, options.timeout)
    try:
        record = analyse(task, options)
    except _OutOfTime:
        record = failed_record(task, Failure.TIMEOUT, f"no answer within {options.timeout:g} s")
    except MemoryError:
        limit = f" of {options.memory / 2**20:,.0f} MiB" if options.memory else ""
        record = failed_record(task, Failure.MEMORY, f"the analysis needs more than the worker's memory{limit}")
    except RecursionError:
        record = failed_record(task, Failure.CRASH, "RecursionError: nesting deeper than the analysis follows")
    except Exception as error:  # noqa: BLE001 - any other failure is this model's, reported in its line
        record = failed_record(task, Failure.CRASH, f"{type(error).__name__}: {error}")
    finally:
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    record["worker"] = {"pid": os.getpid(), "peak_rss": peak_rss()}
    return record


def analyse_batch(tasks: tuple[Task, ...], options: ScanOptions) -> list[dict[str, Any]]:
    """:func:`analyse_guarded` of each task in turn."""
    return [analyse_guarded(task, options) for task in tasks]


def peak_rss() -> int:
    """The most memory this process has held, in bytes (0 where the platform does not say)."""
    try:
        import resource
    except ImportError:
        return 0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


__all__ = ["analyse_batch", "analyse_guarded", "limit_memory", "peak_rss", "start_worker"]
