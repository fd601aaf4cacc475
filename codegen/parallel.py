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


def forked_map(function: Callable[[Item], Result], items: Sequence[Item], min_items: int | None = None,
               workers: int | None = None, runs: int | None = None,
               lost: Callable[[int, list[Result]], None] | None = None) -> list[Result]:
    """``[function(item) for item in items]``, computed by up to ``workers`` processes.

    Item ``i`` goes to process ``i % workers`` (neighbouring items often cost alike, so the
    shares come out even); with ``runs``, runs of that many neighbouring items go to each process
    in turn, and each process starts at its own place in the list (so at any moment the processes
    work on items far apart, such as files of different folders). An exception in a forked process
    is raised again here; a share whose result (or exception) cannot be pickled, or whose process
    died, is computed again in this one, and then ``lost`` is given the process id and the share's
    results (to clear up what the lost process may have left).
    """
    count = min(workers or worker_count(), len(items) // max(MIN_ITEMS if min_items is None else min_items, 1) + 1)
    if count < 2 or not hasattr(os, "fork") or sys.platform == "win32":
        return [function(item) for item in items]
    with collector_paused():
        return _forked(function, items, _shares(len(items), count, runs), lost)


def _shares(length: int, count: int, runs: int | None) -> list[list[int]]:
    """The positions of the items each of ``count`` processes computes, in the order it computes them."""
    if runs is None:
        return [list(range(share, length, count)) for share in range(count)]
    pieces = [range(start, min(start + runs, length)) for start in range(0, length, runs)]
    shares = []
    for share in range(count):
        mine = pieces[share::count]
        turn = share * len(mine) // count
        shares.append([position for piece in mine[turn:] + mine[:turn] for position in piece])
    return shares


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


def _forked(function: Callable[[Item], Result], items: Sequence[Item], shares: list[list[int]],
            lost: Callable[[int, list[Result]], None] | None) -> list[Result]:
    children: list[tuple[list[int], int, int]] = []  # (share, pid, read end of its pipe)
    for share in shares[1:]:
        reader, writer = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: compute its share, send it, and leave without running any cleanup
            os.close(reader)
            _send(writer, lambda: [function(items[position]) for position in share])
        os.close(writer)
        children.append((share, pid, reader))
    results: list[Result | None] = [None] * len(items)
    for position in shares[0]:
        results[position] = function(items[position])
    failure: BaseException | None = None
    for share, pid, reader in children:
        with os.fdopen(reader, "rb") as pipe:
            payload = pipe.read()
        os.waitpid(pid, 0)
        try:
            ok, value = pickle.loads(payload)
        except Exception:  # noqa: BLE001 - the child died or sent something unreadable: do its share here
            ok, value = True, [function(items[position]) for position in share]
            if lost is not None:
                lost(pid, value)
        if not ok:
            failure = failure or value
            continue
        for position, result in zip(share, value):
            results[position] = result
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
