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
import tempfile
from pathlib import Path
from typing import Iterable, Union

#: What :func:`write_atomically` writes: bytes, or pieces of them written one after another.
Content = Union[bytes, bytearray, memoryview, Iterable[Union[bytes, bytearray, memoryview]]]


def write_atomically(path: str | os.PathLike[str], data: Content) -> Path:
    """Put ``data`` (bytes, or pieces of them in order) at ``path`` in one step; return the path.
    Failures raise :class:`OSError`."""
    target = Path(path)
    folder = target.parent
    mode = _mode_for(target)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{target.name[:100]}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            for piece in (data,) if isinstance(data, (bytes, bytearray, memoryview)) else data:
                handle.write(piece)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    _sync_folder(folder)
    return target


def _mode_for(target: Path) -> int:
    """The permissions of the regular file being replaced, else the default for new files."""
    try:
        status = os.lstat(target)
    except OSError:
        status = None
    if status is not None and stat.S_ISREG(status.st_mode):
        return stat.S_IMODE(status.st_mode)
    return 0o666 & ~_umask()


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
