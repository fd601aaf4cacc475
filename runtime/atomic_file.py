"""Replace a file all at once, or not at all.

The bytes go to a temporary file in the target's own folder (so the final rename stays on
one file system), which is flushed and synced to disk, then renamed over the target. If
anything fails on the way (a full disk, a quota, a file size limit, an interrupted
process), the temporary file is removed and the target is exactly as it was: writing a
result over its own input (``opspec infer m.onnx -o m.onnx``) can never leave half a model.

A target that is a symbolic link is replaced by the file, not followed: the link itself
becomes a regular file holding the new bytes, and what it pointed at is left untouched.
The new file gets the permissions a newly created file would get (or those of the file it
replaces, when there was one).
"""
from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Iterable, Mapping, Union

#: What :func:`write_atomically` writes: bytes, or pieces of them written one after another.
Content = Union[bytes, bytearray, memoryview, Iterable[Union[bytes, bytearray, memoryview]]]


def write_atomically(path: str | os.PathLike[str], data: Content) -> Path:
    """Put ``data`` (bytes, or pieces of them in order) at ``path`` in one step; return the path.
    Failures raise :class:`OSError`."""
    target = Path(path)
    temporary = _temporary_copy(target, data, _mode_for(target), sync=True)
    try:
        os.replace(temporary, target)
    except BaseException:
        _remove(temporary)
        raise
    _sync_folder(target.parent)
    return target


#: Whether one ``sync()`` makes every written file durable before it returns (Linux's does; POSIX
#: allows it to only schedule the writes, so elsewhere each file is synced on its own).
_SYNC_WAITS = sys.platform.startswith("linux") and hasattr(os, "sync")


def write_all_atomically(files: Mapping[Path, bytes]) -> None:
    """Put each file's bytes at its path, each replaced whole or not at all, as one batch.

    Every temporary file is written first: a failure there removes them all and leaves every
    target as it was. Then the data reach the disk (one file-system sync where that waits for
    the writes, else a sync per file), each temporary file is renamed over its target, and
    each folder is synced once. The folders must exist.
    """
    mask = _umask()
    temporaries: list[str] = []
    renamed = 0
    try:
        for target, data in files.items():
            temporaries.append(_temporary_copy(target, data, _mode_for(target, mask), sync=not _SYNC_WAITS))
        if _SYNC_WAITS:
            os.sync()
        for temporary, target in zip(temporaries, files):
            os.replace(temporary, target)
            renamed += 1
    except BaseException:
        for temporary in temporaries[renamed:]:
            _remove(temporary)
        raise
    for folder in sorted({target.parent for target in files}):
        _sync_folder(folder)


def _temporary_copy(target: Path, data: Content, mode: int, sync: bool) -> str:
    """A new temporary file beside ``target`` holding ``data`` (bytes, or pieces of them in
    order; synced to disk if asked), with ``mode``."""
    descriptor, temporary = tempfile.mkstemp(prefix=f".{target.name[:100]}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            for piece in (data,) if isinstance(data, (bytes, bytearray, memoryview)) else data:
                handle.write(piece)
            if sync:
                handle.flush()
                os.fsync(handle.fileno())
        os.chmod(temporary, mode)
    except BaseException:
        _remove(temporary)
        raise
    return temporary


def _remove(temporary: str) -> None:
    try:
        os.unlink(temporary)
    except OSError:
        pass


def _mode_for(target: Path, mask: int | None = None) -> int:
    """The permissions of the regular file being replaced, else the default for new files
    (under the file creation mask ``mask``, read from the process when not given)."""
    try:
        status = os.lstat(target)
    except OSError:
        status = None
    if status is not None and stat.S_ISREG(status.st_mode):
        return stat.S_IMODE(status.st_mode)
    return 0o666 & ~(_umask() if mask is None else mask)


def _umask() -> int:
    """The process's file creation mask (read from /proc where it can be, as setting it to
    read it changes it for every thread for a moment)."""
    try:
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (where the platform can sync a folder)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
