"""Models analysed on a Ray cluster (``pip install opspec[ray]``), one Ray task per model.

Each task runs the same guarded analysis as a local worker (:mod:`.guard`), so a model's line is
the same wherever it ran. Ray's own memory monitor stands in for the local workers' address-space
limit (which would break a Ray worker's shared object store): a task it kills for memory is a
failed line, as is a task whose worker dies, and one still running well past its time limit is
cancelled. Tasks are never retried.
"""
from __future__ import annotations

import logging
import time
from typing import Any, Callable, Iterable

from opspec.batch.guard import analyse_guarded
from opspec.batch.local import POLL
from opspec.batch.records import Failure, ScanOptions, Task, failed_record

#: The address that starts a Ray instance on this machine instead of joining a cluster.
LOCAL = "local"

Record = dict[str, Any]


class RayUnavailable(RuntimeError):
    """Ray is not installed."""


def run_on_ray(tasks: Iterable[Task], options: ScanOptions, address: str, on_record: Callable[[Record], None]) -> None:
    """Analyse ``tasks`` on the Ray cluster at ``address`` (``auto``, ``ray://HOST:PORT``, or
    :data:`LOCAL`; a Ray already started in this process is used as it is), handing each model's
    line to ``on_record`` as it comes back."""
    try:
        import ray
    except ImportError:
        raise RayUnavailable("Ray is not installed: pip install 'opspec[ray]'") from None
    if not ray.is_initialized():
        ray.init(address=None if address == LOCAL else address, log_to_driver=False, logging_level=logging.ERROR)
    remote = ray.remote(num_cpus=1, max_retries=0)(analyse_guarded)
    slots = max(1, int(ray.cluster_resources().get("CPU", 1)))
    # Options go to the cluster once, not with every task.
    shared = ray.put(options)
    queue = iter(tasks)
    running: dict[Any, tuple[Task, float]] = {}
    deadline = options.deadline
    try:
        while True:
            while len(running) < slots and (task := next(queue, None)) is not None:
                running[remote.remote(task, shared)] = (task, time.monotonic())
            if not running:
                return
            ready, _ = ray.wait(list(running), num_returns=1, timeout=POLL)
            for ref in ready:
                task, _started = running.pop(ref)
                on_record(_outcome(ray, ref, task))
            now = time.monotonic()
            for ref in [ref for ref, (_, started) in running.items() if now - started > deadline]:
                task, _ = running.pop(ref)
                ray.cancel(ref, force=True)
                on_record(failed_record(task, Failure.TIMEOUT, f"no answer within {options.timeout:g} s "
                                                               "(its worker was stopped)"))
    except BaseException:  # Ctrl-C among them: tasks still running are cancelled
        for ref in running:
            ray.cancel(ref, force=True)
        raise


def _outcome(ray: Any, ref: Any, task: Task) -> Record:
    """The line a task brought back, or its failure."""
    errors = ray.exceptions
    try:
        record: Record = ray.get(ref)
        return record
    except errors.OutOfMemoryError:
        return failed_record(task, Failure.MEMORY, "Ray stopped the analysis: the node ran short of memory")
    except errors.RayTaskError as error:
        cause = error.cause if error.cause is not None else error
        return failed_record(task, Failure.CRASH, f"{type(cause).__name__}: {cause}")
    except errors.RayError as error:  # the worker died, the task was cancelled or lost
        return failed_record(task, Failure.CRASH, f"the Ray worker analysing the model failed: {type(error).__name__}")


__all__ = ["LOCAL", "RayUnavailable", "run_on_ray"]
