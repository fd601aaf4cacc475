"""What makes ``opspec infer`` and ``opspec check`` fit for CI: the gate options
(``--fail-on-unknown``, ``--quiet``), the one-line summary for logs, and progress on a
terminal for long runs."""
from __future__ import annotations

import argparse
import sys
import threading
import time
from types import TracebackType
from typing import Any, Callable, TextIO

from opspec.cli_common import ExitCode, plural

#: Seconds of work before progress appears (short runs stay silent).
PROGRESS_AFTER = 2.0


def add_gate_options(command: argparse.ArgumentParser, runtime: bool = False) -> None:
    """``--quiet`` and ``--fail-on-unknown`` (for ``check``, which predicts a ``runtime``, it also
    covers nodes whose kernel the prediction could not tell)."""
    command.add_argument("-q", "--quiet", action="store_true",
                         help="print only problems (nothing at all for a clean model)")
    also = (", or (with --runtime) a node whose types are too little known to tell whether a kernel takes it"
            if runtime else "")
    command.add_argument("--fail-on-unknown", action="store_true",
                         help=f"exit 1 when an op has no schema or no inference rule{also}, as for a node error")


def gate_status(errors: int, unknown_ops: int, ops_without_rule: int, fail_on_unknown: bool) -> int:
    """The exit status: node errors fail; ops nobody knows fail only when asked."""
    if errors or (fail_on_unknown and (unknown_ops or ops_without_rule)):
        return ExitCode.FAILED
    return ExitCode.OK


def summary_line(model: str, nodes: int, values: int, errors: int, unknown_ops: int, ops_without_rule: int) -> str:
    """One line for a CI log: the model, its size and every count a gate looks at."""
    return (f"{model}: {plural(nodes, 'node')}, {plural(values, 'value')}; {plural(errors, 'error')}, "
            f"{plural(unknown_ops, 'unknown op')}, {plural(ops_without_rule, 'op')} without a rule")


class Progress:
    """A line on stderr while work lasts longer than :data:`PROGRESS_AFTER` seconds.

    Shown only when both stdout and stderr are terminals (never into a pipe, a file or a
    JSON document); the line is erased when the work ends. ``what`` is the text, or a function
    giving it afresh each second (for work that counts what it has done).
    """

    def __init__(self, what: str | Callable[[], str], enabled: bool = True, stream: TextIO | None = None,
                 after: float = PROGRESS_AFTER) -> None:
        self._what = what
        self._stream = stream or sys.stderr
        self._after = after
        self._enabled = enabled and _is_terminal(self._stream) and _is_terminal(sys.stdout)
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._shown = False

    def __enter__(self) -> Progress:
        if self._enabled:
            self._thread = threading.Thread(target=self._run, name="opspec-progress", daemon=True)
            self._thread.start()
        return self

    def _run(self) -> None:
        started = time.monotonic()
        if self._done.wait(self._after):
            return
        while not self._done.is_set():
            what = self._what() if callable(self._what) else self._what
            self._stream.write(f"\ropspec: {what} ({time.monotonic() - started:.0f} s)\033[K")
            self._stream.flush()
            self._shown = True
            self._done.wait(1.0)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        if self._shown:
            self._stream.write("\r\033[K")
            self._stream.flush()


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


__all__ = ["PROGRESS_AFTER", "Progress", "add_gate_options", "gate_status", "summary_line"]
