"""Run independent pieces of work on every core, with the answer a serial run gives.

:func:`forked_map` splits a list of items among forked copies of the process (so the
work sees the parent's state as it is, with nothing to pickle but the results), the
parent taking its own share, and returns the results in the items' order: the output
does not depend on the number of processes. Where processes cannot be forked, for a
small list, or on one core, it runs in the process itself.
"""
from __future__ import annotations

import copyreg
import gc
import io
import os
import pickle
import sys
from contextlib import contextmanager
from types import MappingProxyType
from typing import Any, Callable, Iterator, Sequence, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

#: Fewer items than this are not worth a fork (a fork and a result pipe cost a few milliseconds).
MIN_ITEMS = 200


def worker_count() -> int:
    """How many processes may run at once: the cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def forked_map(function: Callable[[Item], Result], items: Sequence[Item], min_items: int = MIN_ITEMS,
               workers: int | None = None) -> list[Result]:
    """``[function(item) for item in items]``, computed by up to ``workers`` processes.

    Item ``i`` goes to process ``i % workers`` (neighbouring items often cost alike, so the
    shares come out even). An exception in a forked process is raised again here; a share whose
    result (or exception) cannot be pickled, or whose process died, is computed again in this one.
    """
    count = min(workers or worker_count(), len(items) // max(min_items, 1) + 1)
    if count < 2 or not hasattr(os, "fork") or sys.platform == "win32":
        return [function(item) for item in items]
    with collector_paused():
        return _forked(function, items, count)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector paused (and restored after, as it was): the work makes many objects
    and few reference cycles, and each of the collector's passes would walk every object."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def _forked(function: Callable[[Item], Result], items: Sequence[Item], count: int) -> list[Result]:
    children: list[tuple[int, int, int]] = []  # (share, pid, read end of its pipe)
    for share in range(1, count):
        reader, writer = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: compute its share, send it, and leave without running any cleanup
            os.close(reader)
            _send(writer, lambda: [function(item) for item in items[share::count]])
        os.close(writer)
        children.append((share, pid, reader))
    results: list[Result | None] = [None] * len(items)
    results[0::count] = [function(item) for item in items[0::count]]
    failure: BaseException | None = None
    for share, pid, reader in children:
        with os.fdopen(reader, "rb") as pipe:
            payload = pipe.read()
        os.waitpid(pid, 0)
        try:
            ok, value = pickle.loads(payload)
        except Exception:  # noqa: BLE001 - the child died or sent something unreadable: do its share here
            ok, value = True, [function(item) for item in items[share::count]]
        if not ok:
            failure = failure or value
            continue
        results[share::count] = value
    if failure is not None:
        raise failure
    return results  # type: ignore[return-value]  # every slot is filled


def _read_only(mapping: dict[object, object]) -> MappingProxyType[object, object]:
    return MappingProxyType(mapping)


def _unwrapped(proxy: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    return _read_only, (dict(proxy),)


#: How results are pickled: as usual, and a read-only mapping (the schema records hold them) as the
#: dict it wraps, wrapped again when read.
_DISPATCH: dict[type, Any] = {**copyreg.dispatch_table, MappingProxyType: _unwrapped}


def _pickled(value: object) -> bytes:
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _DISPATCH
    pickler.dump(value)
    return buffer.getvalue()


def _send(writer: int, compute: Callable[[], object]) -> None:
    """In a forked child: write ``(True, result)`` or ``(False, exception)`` to ``writer`` and exit
    (nothing at all when that cannot be pickled: the parent then does the share itself)."""
    status = 0
    try:
        try:
            outcome: tuple[bool, object] = (True, compute())
        except BaseException as error:  # noqa: BLE001 - every failure goes back to the parent
            outcome = (False, error)
        try:
            payload = _pickled(outcome)
        except Exception:  # noqa: BLE001 - see above
            payload = b""
        with os.fdopen(writer, "wb") as pipe:
            pipe.write(payload)
    except BaseException:  # noqa: BLE001 - nothing may escape a forked child
        status = 1
    finally:
        os._exit(status)
