"""What a scan knows of one model: the task handed to a worker and the line it gives back."""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any


class Status(str, Enum):
    """A model's outcome: nothing found, problems found, or no answer (see :class:`Failure`)."""

    OK = "ok"
    PROBLEMS = "problems"
    FAILED = "failed"


class Failure(str, Enum):
    """Why a model has no answer."""

    UNREADABLE = "unreadable"  # not an ONNX model opspec can read
    CRASH = "crash"  # the analysis raised, or its worker process died
    TIMEOUT = "timeout"  # longer than the per-model time limit
    MEMORY = "memory"  # more memory than a worker may use


@dataclass(frozen=True)
class Task:
    """One model file to analyse, named by its path and the SHA-256 of its bytes."""

    path: str
    sha256: str
    size: int


@dataclass(frozen=True)
class ScanOptions:
    """What every model of a scan is asked, and the limits each runs under."""

    #: ``onnxruntime[:PROVIDER]``: also predict whether the model loads and runs there (None: no).
    runtime: str | None = None
    #: Read small tensors stored in external data files beside a model (never done otherwise).
    read_external: bool = False
    #: Seconds one model may take.
    timeout: float = 300.0
    #: Bytes of address space a local worker process may map (None: no limit).
    memory: int | None = None
    #: The analysis (:class:`~.steps.Step` values, in order; empty: the standard ``STEPS``).
    steps: tuple[Any, ...] = ()
    #: Also estimate what the model costs (``opspec cost``'s totals).
    cost: bool = True

    @property
    def deadline(self) -> float:
        """Seconds after which a model still running has its worker stopped: its time limit
        and a margin for the worker's own alarm to fire first."""
        return self.timeout * 1.5 + 2.0


def failed_record(task: Task, failure: Failure, message: str, timings: dict[str, float] | None = None) -> dict[str, Any]:
    """The line of a model that has no answer."""
    return {"path": task.path, "sha256": task.sha256, "bytes": task.size, "status": Status.FAILED.value,
            "failure": failure.value, "message": message, "timings": timings or {}}


#: Members of a line that depend on the run rather than on the model (left out when two reports
#: of the same models are compared).
RUN_DEPENDENT = ("timings", "worker")


def comparable(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` without what depends on the run (timings, the worker it ran in)."""
    return {key: value for key, value in record.items() if key not in RUN_DEPENDENT}


__all__ = ["Failure", "RUN_DEPENDENT", "ScanOptions", "Status", "Task", "comparable", "failed_record"]
