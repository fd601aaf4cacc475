"""Steps that fail on purpose, for the scan's tests: a model whose file name says so crashes the
analysis, hangs it, kills its worker, blocks the worker's alarm and hangs, exhausts memory or
takes a while, or waits for the test to let it go. A module of its own, so that worker processes import the steps by name."""
from __future__ import annotations

import os
import signal
import time
from typing import Any

from opspec.batch.steps import STEPS, Analysis, Step


def _fault(analysis: Analysis) -> dict[str, Any]:
    name = os.path.basename(analysis.task.path)
    if name.startswith("crash"):
        raise ValueError("a step failed")
    if name.startswith("hang"):
        while True:
            pass
    if name.startswith("stuck"):  # as a C call that never returns: the alarm cannot reach it
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        while True:
            time.sleep(0.05)
    if name.startswith("die"):
        os.kill(os.getpid(), signal.SIGKILL)
    if name.startswith("hog"):
        held = bytearray(8 << 30)
        return {"held": len(held)}
    if name.startswith("slow"):
        time.sleep(0.4)
    if name.startswith("wait"):  # until the test lets it go (a file "release" beside it), a minute at most
        release = os.path.join(os.path.dirname(analysis.task.path), "release")
        deadline = time.monotonic() + 60
        while not os.path.exists(release) and time.monotonic() < deadline:
            time.sleep(0.05)
    return {}


#: The standard steps, then the fault.
FAULTY = (*STEPS, Step("fault", _fault))
