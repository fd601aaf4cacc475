"""Run independent pieces of work on every core, with the answer a serial run gives.

:func:`forked_map` splits a list of items among forked copies of the process (so the
work sees the parent's state as it is, with nothing to pickle but the results), the
parent taking its own share, and returns the results in the items' order: the output
does not depend on the number of processes. Where processes cannot be forked, for a
small list, or on one core, it runs in the process itself.
"""
from __future__ import annotations

import gc
import os
import sys
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence, TypeVar

from opspec.codegen.result_stream import FrameReader, send_frame

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
               lost: Callable[[int, list[Result]], None] | None = None,
               meanwhile: Callable[[], None] | None = None) -> list[Result]:
    """``[function(item) for item in items]``, computed by up to ``workers`` processes (one if there
    are fewer than ``min_items`` items, by default :data:`MIN_ITEMS`).

    Item ``i`` goes to process ``i % workers`` (neighbouring items often cost alike, so the
    shares come out even). With ``runs``, the items go in runs of that many neighbours, and the
    processes work on runs far apart (such as files of different folders): two processes take
    runs as they become free, one from each end of the list (so a process slowed down by others
    on the machine does less); more take every so many runs each, each from its own place.
    An exception in a forked process is raised again here; a share whose result (or exception)
    cannot be pickled, or whose process died, is computed again in this one, and then ``lost`` is
    given the process id and the share's results (to clear up what the lost process may have left).
    ``meanwhile`` is other work of this process, done once the others have started (before its own
    share; when two processes take runs as they become free, the other takes more of them).
    """
    count = min(workers or worker_count(), len(items) // max(MIN_ITEMS if min_items is None else min_items, 1) + 1)
    if count < 2 or not hasattr(os, "fork") or sys.platform == "win32":
        if meanwhile is not None:
            meanwhile()
        return [function(item) for item in items]
    with collector_paused():
        if runs is None:
            return _forked(function, items, [[range(share, len(items), count)] for share in range(count)], lost,
                           meanwhile)
        pieces = [range(start, min(start + runs, len(items))) for start in range(0, len(items), runs)]
        if count == 2 and len(pieces) <= _MAX_TOKENS:
            return _forked(function, items, [pieces, pieces[::-1]], lost, meanwhile, _tokens(len(pieces)))
        return _forked(function, items, _turns(pieces, count), lost, meanwhile)


#: At most this many runs are handed out one by one (their tokens must fit in a pipe's buffer).
_MAX_TOKENS = 4096


def _turns(pieces: list[range], count: int) -> list[list[range]]:
    """The runs each of ``count`` processes computes, every ``count``-th one, each process starting
    at its own place in the list."""
    shares = []
    for share in range(count):
        mine = pieces[share::count]
        turn = share * len(mine) // count
        shares.append(mine[turn:] + mine[:turn])
    return shares


def _tokens(count: int) -> int:
    """The read end of a pipe holding ``count`` tokens, each one run to compute (and no writer)."""
    reader, writer = os.pipe()
    try:
        os.write(writer, b"." * count)
    finally:
        os.close(writer)
    return reader


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector paused (and restored after, as it was): the work makes many objects
    and few reference cycles, and each of the collector's passes would walk every object.

    The objects made meanwhile join the oldest generation when it resumes, rather than being
    walked at once by the pass their number would set off (unless the process had frozen objects
    of its own, which are left frozen)."""
    collecting = gc.isenabled()
    frozen = gc.get_freeze_count()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            if not frozen:
                gc.freeze()  # the objects made meanwhile (and the older ones) out of the young generations ...
            gc.enable()
            if not frozen:
                gc.unfreeze()  # ... and back, into the oldest: collected by its passes, as any object


def _forked(function: Callable[[Item], Result], items: Sequence[Item], orders: list[list[range]],
            lost: Callable[[int, list[Result]], None] | None, meanwhile: Callable[[], None] | None = None,
            tokens: int | None = None) -> list[Result]:
    """Process ``k`` computes the runs of ``orders[k]`` in order (with ``tokens``, each once it has
    taken a token: the runs no process took are left to the others); this one is process 0. The
    others send each run's results as soon as it is done (see :mod:`.result_stream`)."""

    def runs(order: list[range]) -> Iterator[tuple[list[int], list[Result]]]:
        for piece in order:
            if tokens is not None and not os.read(tokens, 1):
                return
            yield list(piece), [function(items[position]) for position in piece]

    children: list[tuple[list[range], int, FrameReader]] = []
    try:
        writers = []
        for order in orders[1:]:
            reader, writer = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child: compute its share, send it, and leave without running any cleanup
                os.close(reader)
                _send(writer, runs(order))
            os.close(writer)
            writers.append((order, pid, reader))
        children = [(order, pid, FrameReader(reader)) for order, pid, reader in writers]  # threads after forks
        results: list[Result | None] = [None] * len(items)
        computed = [False] * len(items)
        if meanwhile is not None:
            meanwhile()
        for done, found in runs(orders[0]):
            _fill(results, computed, done, found)
        failure: BaseException | None = None
        dead = []
        for order, pid, stream in children:
            frames = stream.frames()
            os.waitpid(pid, 0)
            for ok, value in frames:
                if ok is None:  # the end of a whole share
                    break
                if not ok:
                    failure = failure or value
                    break
                _fill(results, computed, *value)
            else:  # cut short: the child died or sent something unreadable; its runs not received are done here
                dead.append((order, pid))
    finally:
        if tokens is not None:
            os.close(tokens)
    for order, pid in dead:
        share = [position for piece in order for position in piece if not computed[position]]
        found = [function(items[position]) for position in share]
        _fill(results, computed, share, found)
        if lost is not None:
            lost(pid, found)
    if failure is not None:
        raise failure
    return results  # type: ignore[return-value]  # every slot is filled


def _fill(results: list[Any], computed: list[bool], done: list[int], found: list[Any]) -> None:
    for position, result in zip(done, found):
        results[position] = result
        computed[position] = True


def _send(writer: int, share: Iterator[tuple[list[int], list[Any]]]) -> None:
    """In a forked child: send ``(True, run)`` for each run of ``share``, then ``(None, None)``, or
    ``(False, exception)`` when computing one fails, and exit (at once when something cannot be
    pickled: the parent then does the rest of the share itself)."""
    status = 0
    try:
        while True:
            try:
                run = next(share)
            except StopIteration:
                send_frame(writer, (None, None))
                break
            except BaseException as error:  # noqa: BLE001 - every failure goes back to the parent
                send_frame(writer, (False, error))
                break
            send_frame(writer, (True, run))
    except BaseException:  # noqa: BLE001 - nothing may escape a forked child
        status = 1
    finally:
        os._exit(status)
