"""The scan's report: one JSON line per model, appended whole as each model finishes.

A line is written with one call while Ctrl-C is held back, so an interrupted scan leaves only
whole lines; a line torn by a harder stop (the process killed mid-write) is dropped when the
report is opened again. A later scan reads the report's content hashes to skip those models.
"""
from __future__ import annotations

import json
import os
import signal
import stat
from contextlib import contextmanager
from types import TracebackType
from typing import Any, Iterator


def read_report(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The whole lines of the report at ``path`` (none when it does not exist), each a model's."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return []
    records = []
    for line in data.split(b"\n"):
        try:
            record = json.loads(line)
        except ValueError:  # empty, or torn by a stop mid-write
            continue
        if isinstance(record, dict) and isinstance(record.get("path"), str):
            records.append(record)
    return records


class ReportWriter:
    """Appends lines to the report at ``path``, after dropping a torn last line."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        if os.path.isdir(self.path):
            raise IsADirectoryError(f"{self.path} is a folder")
        self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            _drop_torn_line(self._fd)
        except BaseException:
            os.close(self._fd)
            raise

    def write(self, record: dict[str, Any]) -> None:
        """Append ``record`` as one line, whole."""
        data = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        with _interrupts_held():
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view):]

    def close(self) -> None:
        os.close(self._fd)

    def __enter__(self) -> ReportWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()


def _drop_torn_line(fd: int) -> None:
    """Cut a regular file back to its last newline (a pipe or a device is left as it is)."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_size == 0:
        return
    end = info.st_size
    step = 1 << 16
    while end > 0:
        start = max(0, end - step)
        chunk = os.pread(fd, end - start, start)
        if chunk.endswith(b"\n") and end == info.st_size:
            return
        cut = chunk.rfind(b"\n")
        if cut >= 0:
            os.truncate(fd, start + cut + 1)
            return
        end = start
    os.truncate(fd, 0)


@contextmanager
def _interrupts_held() -> Iterator[None]:
    """Ctrl-C waits until the block ends (in the main thread, where the platform allows)."""
    mask = getattr(signal, "pthread_sigmask", None)
    if mask is None:
        yield
        return
    previous = mask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        mask(signal.SIG_SETMASK, previous)


__all__ = ["ReportWriter", "read_report"]
