"""Models analysed on a Ray cluster (``pip install opspec[ray]``), in batches of Ray tasks.

Each task runs the same guarded analysis as a local worker (:mod:`.guard`) on a batch of models
sized as the local pool sizes them (:class:`~.local.BatchSize`), so a model's line is the same
wherever it ran. Ray's own memory monitor stands in for the local workers' address-space limit
(which would break a Ray worker's shared object store). A batch whose worker dies, which Ray stops
for memory, or which is still running well past its models' time limits (then cancelled) is tried
again one model per task; a single model failing so is one failed line. Tasks are never retried
by Ray itself.
"""
from __future__ import annotations

import logging
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from opspec.batch.guard import analyse_batch
from opspec.batch.local import POLL, BatchSize, batches
from opspec.batch.records import Failure, ScanOptions, Task, failed_record

#: The address that starts a Ray instance on this machine instead of joining a cluster.
LOCAL = "local"

Record = dict[str, Any]
Batch = tuple[Task, ...]


class RayUnavailable(RuntimeError):
    """Ray is not installed."""


def run_on_ray(tasks: Iterable[Task], options: ScanOptions, address: str, on_record: Callable[[Record], None]) -> None:
    """Analyse ``tasks`` on the Ray cluster at ``address`` (``auto``, ``ray://HOST:PORT``, or
    :data:`LOCAL`; a Ray already started in this process is used as it is), handing each model's
    line to ``on_record`` as its batch comes back."""
    try:
        import ray
    except ImportError:
        raise RayUnavailable("Ray is not installed: pip install 'opspec[ray]'") from None
    if not ray.is_initialized():
        ray.init(address=None if address == LOCAL else address, log_to_driver=False, logging_level=logging.ERROR)
    remote = ray.remote(num_cpus=1, max_retries=0)(analyse_batch)
    slots = max(1, int(ray.cluster_resources().get("CPU", 1)))
    # Options go to the cluster once, not with every task.
    shared = ray.put(options)
    size = BatchSize()
    queue = batches(tasks, size)
    alone: deque[Batch] = deque()  # models of a failed batch, one per task
    # Models whose worker died under them alone once: a worker may have been handed the next task
    # before it died, so one more try tells the culprit from the model that came after it.
    died_once: set[Task] = set()
    running: dict[Any, tuple[Batch, float]] = {}
    try:
        while True:
            while len(running) < slots and (batch := alone.popleft() if alone else next(queue, None)) is not None:
                running[remote.remote(batch, shared)] = (batch, time.monotonic())
            if not running:
                return
            ready, _ = ray.wait(list(running), num_returns=1, timeout=POLL)
            for ref in ready:
                batch, _ = running.pop(ref)
                records = _outcome(ray, ref, batch)
                if isinstance(records, list):
                    size.seen(records)
                    for record in records:
                        on_record(record)
                elif len(batch) > 1:
                    alone.extend((task,) for task in batch)
                elif records.worker_died and batch[0] not in died_once:
                    died_once.add(batch[0])
                    alone.append(batch)
                else:
                    on_record(failed_record(batch[0], records.failure, records.message))
            now = time.monotonic()
            for ref in [ref for ref, (batch, started) in running.items() if now - started > len(batch) * options.deadline]:
                batch, _ = running.pop(ref)
                ray.cancel(ref, force=True)
                if len(batch) > 1:
                    alone.extend((task,) for task in batch)
                else:
                    on_record(failed_record(batch[0], Failure.TIMEOUT, f"no answer within {options.timeout:g} s "
                                                                       "(its worker was stopped)"))
    except BaseException:  # Ctrl-C among them: tasks still running are cancelled
        for ref in running:
            ray.cancel(ref, force=True)
        raise


@dataclass(frozen=True)
class _NoLines:
    """Why a task brought no lines back; ``worker_died`` when its worker process went away."""

    failure: Failure
    message: str
    worker_died: bool = False


def _outcome(ray: Any, ref: Any, batch: Batch) -> list[Record] | _NoLines:
    """The lines a task brought back, or why it brought none."""
    errors = ray.exceptions
    try:
        records: list[Record] = ray.get(ref)
        return records
    except errors.OutOfMemoryError:
        return _NoLines(Failure.MEMORY, "Ray stopped the analysis: the node ran short of memory")
    except errors.RayTaskError as error:
        cause = error.cause if error.cause is not None else error
        return _NoLines(Failure.CRASH, f"{type(cause).__name__}: {cause}")
    except errors.RayError as error:  # the worker died, the task was cancelled or lost
        return _NoLines(Failure.CRASH, f"the Ray worker analysing the model failed: {type(error).__name__}", True)


__all__ = ["LOCAL", "RayUnavailable", "run_on_ray"]
