"""Results sent by a forked process to its parent while they are computed.

The forked process writes each run of results as one frame (its length in 8 bytes, then a
pickle) as soon as the run is done, so that pickling is spread over its work instead of
delaying its end; the parent reads and unpickles the frames in a thread while it computes a
share of its own. A process that dies, or sends something that cannot be read, leaves a
stream cut short: the frames read before the cut stay good.
"""
from __future__ import annotations

import copyreg
import io
import os
import pickle
import struct
import threading
from types import MappingProxyType
from typing import Any, Callable

from opspec.runtime.atomic_file import write_whole

_LENGTH = struct.Struct("<Q")


def _read_only(mapping: dict[object, object]) -> MappingProxyType[object, object]:
    return MappingProxyType(mapping)


def _unwrapped(proxy: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    return _read_only, (dict(proxy),)


#: How results are pickled: as usual, and a read-only mapping (the schema records hold them) as the
#: dict it wraps, wrapped again when read.
_DISPATCH: dict[type, Any] = {**copyreg.dispatch_table, MappingProxyType: _unwrapped}


def pickled(value: object) -> bytes:
    """``value`` pickled, read-only mappings included."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _DISPATCH
    pickler.dump(value)
    return buffer.getvalue()


def send_frame(writer: int, value: object) -> None:
    """Write ``value`` to the pipe ``writer`` as one frame (raises if it cannot be pickled)."""
    payload = pickled(value)
    write_whole(writer, _LENGTH.pack(len(payload)) + payload)


class FrameReader:
    """Reads every frame of the pipe ``reader`` in a thread of its own, until the pipe ends or a
    frame is cut short or unreadable; :meth:`frames` waits for that and closes the pipe."""

    def __init__(self, reader: int) -> None:
        self._reader = reader
        self._frames: list[Any] = []
        self._thread = threading.Thread(target=self._read_all, daemon=True)
        self._thread.start()

    def _read_all(self) -> None:
        while (header := self._read_exactly(_LENGTH.size)) is not None:
            payload = self._read_exactly(_LENGTH.unpack(header)[0])
            if payload is None:
                return
            try:
                self._frames.append(pickle.loads(payload))
            except Exception:  # noqa: BLE001 - an unreadable frame cuts the stream there
                return

    def _read_exactly(self, size: int) -> bytes | None:
        pieces: list[bytes] = []
        left = size
        while left:
            piece = os.read(self._reader, min(left, 1 << 20))
            if not piece:
                return None
            pieces.append(piece)
            left -= len(piece)
        return b"".join(pieces)

    def frames(self) -> list[Any]:
        """Every frame read, once the stream has ended."""
        self._thread.join()
        os.close(self._reader)
        return self._frames


__all__ = ["FrameReader", "pickled", "send_frame"]
