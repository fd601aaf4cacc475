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
import itertools
import stat
import sys
from pathlib import Path
from typing import Iterable, Mapping, Sequence, Union

#: A file's path: text, or a path object.
PathText = Union[str, "os.PathLike[str]"]
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


def write_all_atomically(files: Mapping[Path, bytes],
                         statuses: Mapping[Path, os.stat_result | None] | None = None) -> None:
    """Put each file's bytes at its path, each replaced whole or not at all, as one batch.

    Every temporary file is written first: a failure there removes them all and leaves every
    target as it was. Then :func:`replace_all` puts them in place. The folders must exist.
    ``statuses`` may give what ``os.lstat`` said of a target (None: it does not exist) when the
    caller has asked already.
    """
    mask = file_mask()
    staged: list[tuple[str, Path]] = []
    try:
        for target, data in files.items():
            status = statuses[target] if statuses is not None and target in statuses else status_of(target)
            staged.append((staged_copy(target, data, status, mask), target))
    except BaseException:
        discard(temporary for temporary, _ in staged)
        raise
    replace_all(staged)


def staged_copy(target: PathText, data: Content, status: os.stat_result | None, mask: int) -> str:
    """A new temporary file beside ``target`` holding ``data``, with the permissions of the file it
    will replace (``status``, from ``os.lstat``; None: there is none) under the file creation mask
    ``mask`` (see :func:`file_mask`), ready for :func:`replace_all`; its name is returned."""
    return _temporary_copy(target, data, _permissions(status, mask), not _SYNC_WAITS, mask)


def one_sync_waits() -> bool:
    """Whether one ``sync()`` makes every written file and rename durable (see :func:`replace_all`)."""
    return _SYNC_WAITS


#: How a file in a folder of one's own is opened: write only, created or emptied, never through a link.
_REWRITE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) \
    | getattr(os, "O_BINARY", 0)


def own_copy(path: PathText, data: Content) -> str:
    """``data`` written at ``path`` in a folder no other writer uses (a staging folder made for one
    run, see :mod:`opspec.codegen.staging`), with the permissions of a new file; where one sync does
    not wait for every write, synced to disk. A failure removes the file. Its name is returned."""
    descriptor = os.open(path, _REWRITE, 0o666)
    try:
        try:
            _write_all(descriptor, data)
            if not _SYNC_WAITS:
                os.fsync(descriptor)
        finally:
            os.close(descriptor)
    except BaseException:
        _remove(str(path))
        raise
    return str(path)


def replace_all(staged: Sequence[tuple[str, PathText]]) -> None:
    """Rename each staged temporary file (see :func:`staged_copy`) over its target, in order, after
    the data reach the disk (one file-system sync where that waits for the writes); then the renames
    too (one more such sync, else each folder's). A failure removes the temporary files not renamed yet."""
    renamed = 0
    try:
        if _SYNC_WAITS and staged:
            os.sync()
        for temporary, target in staged:
            os.replace(temporary, target)
            renamed += 1
    except BaseException:
        discard(temporary for temporary, _ in staged[renamed:])
        raise
    if _SYNC_WAITS:
        if staged:
            os.sync()
        return
    for folder in sorted({os.path.dirname(target) for _, target in staged}):
        _sync_folder(folder)


def discard(temporaries: Iterable[str]) -> None:
    """Remove temporary files (those already gone are passed over)."""
    for temporary in temporaries:
        _remove(temporary)


#: Numbers the temporary files a process creates (with the process id, a name no other writer picks).
_NUMBERS = itertools.count()
#: How a temporary file is opened: write only, created here and now (never an existing file or link).
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def _temporary_copy(target: PathText, data: Content, mode: int, sync: bool, mask: int | None = None) -> str:
    """A new temporary file beside ``target`` holding ``data`` (bytes, or pieces of them in
    order; synced to disk if asked), with ``mode`` (set when the file is created if the file
    creation mask ``mask`` gives it, else afterwards)."""
    created = mask is not None and mode == 0o666 & ~mask
    descriptor, temporary = _created(target, 0o666 if created else 0o600)
    try:
        try:
            _write_all(descriptor, data)
            if sync:
                os.fsync(descriptor)
            if not created:
                if hasattr(os, "fchmod"):
                    os.fchmod(descriptor, mode)
                else:
                    os.chmod(temporary, mode)
        finally:
            os.close(descriptor)
    except BaseException:
        _remove(temporary)
        raise
    return temporary


def _created(target: PathText, mode: int) -> tuple[int, str]:
    """An open descriptor and the name of a new file beside ``target`` (no file of that name existed)."""
    prefix = _temporary_prefix(target, os.getpid())
    while True:
        temporary = f"{prefix}{next(_NUMBERS)}.tmp"
        try:
            return os.open(temporary, _CREATE, mode), temporary
        except FileExistsError:
            continue


def _temporary_prefix(target: PathText, pid: int) -> str:
    """How the names of the temporary files process ``pid`` makes for ``target`` begin (a number and
    ``.tmp`` follow)."""
    folder, name = os.path.split(target)
    return os.path.join(folder, f".{name[:100]}.{pid}.")


def discard_left_by(pid: int, targets: Iterable[PathText]) -> None:
    """Remove the temporary files a process that is gone, ``pid``, may have made for ``targets``."""
    prefixes: dict[str, set[str]] = {}
    for target in targets:
        folder, prefix = os.path.split(_temporary_prefix(target, pid))
        prefixes.setdefault(folder, set()).add(prefix)
    for folder, wanted in prefixes.items():
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            stem = name[:-4]
            if name.endswith(".tmp") and stem[:stem.rfind(".") + 1] in wanted:
                _remove(os.path.join(folder, name))


def _write_all(descriptor: int, data: Content) -> None:
    """Write ``data`` (bytes, or pieces of them in order) whole."""
    for piece in (data,) if isinstance(data, (bytes, bytearray, memoryview)) else data:
        write_whole(descriptor, piece)


def write_whole(descriptor: int, piece: bytes | bytearray | memoryview) -> None:
    """Write all of ``piece`` (a short write is continued; a failing one raises :class:`OSError`)."""
    view = memoryview(piece).cast("B")
    while view:
        view = view[os.write(descriptor, view):]


def _remove(temporary: str) -> None:
    try:
        os.unlink(temporary)
    except OSError:
        pass


def status_of(path: str | os.PathLike[str]) -> os.stat_result | None:
    """What ``os.lstat`` says of ``path`` (a link is not followed); None when nothing is there."""
    try:
        return os.lstat(path)
    except OSError:
        return None


def _mode_for(target: Path, mask: int | None = None) -> int:
    """The permissions of the regular file being replaced, else the default for new files
    (under the file creation mask ``mask``, read from the process when not given)."""
    return _permissions(status_of(target), mask)


def _permissions(status: os.stat_result | None, mask: int | None = None) -> int:
    """The permissions a file replacing one with ``status`` (from ``os.lstat``; None: there is
    none) gets: those of a regular file, else the default for new files under ``mask``."""
    if status is not None and stat.S_ISREG(status.st_mode):
        return stat.S_IMODE(status.st_mode)
    return 0o666 & ~(file_mask() if mask is None else mask)


def file_mask() -> int:
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


def _sync_folder(folder: PathText) -> None:
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
