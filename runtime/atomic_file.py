"""Replace a file all at once, or not at all.

The bytes go to a temporary file in the target's own folder (so the final rename stays on
one file system), which is flushed and synced to disk, then renamed over the target. If
anything fails on the way (a full disk, a quota, a file size limit, an interrupted
process), the temporary file is removed and the target is exactly as it was: writing a
result over its own input (``opspec infer m.onnx -o m.onnx``) can never leave half a model.

Two kinds of path are written. A file a program places in a folder it writes
(:func:`write_atomically`) is replaced whatever is there: a symbolic link is replaced by the
file, never followed, so nothing outside the folder is ever written. An output a user names
(:func:`write_output`, such as ``opspec infer -o OUT``) is written as what it is (see
:func:`write_target`): a regular file (or a name not taken yet) is replaced in one step; a
device, a pipe (FIFO) or an open descriptor (``/dev/stdout``, ``/dev/fd/N``) is opened and
written in place, never replaced by a file; a symbolic link is kept and the regular file it
points at is replaced beside itself; a directory or a socket is refused with :class:`OSError`.
The new file gets the permissions of the file it replaces, or those a newly created file would get.
"""
from __future__ import annotations

import errno
import itertools
import os
import re
import stat
import sys
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Iterable, Mapping, Sequence, Union

#: A file's path: text, or a path object.
PathText = Union[str, "os.PathLike[str]"]
#: What :func:`write_atomically` writes: bytes, or pieces of them written one after another.
Content = Union[bytes, bytearray, memoryview, Iterable[Union[bytes, bytearray, memoryview]]]


def write_atomically(path: str | os.PathLike[str], data: Content) -> Path:
    """Put ``data`` (bytes, or pieces of them in order) at ``path`` in one step, replacing whatever
    is there (a link is replaced, not followed); return the path. Failures raise :class:`OSError`."""
    target = Path(path)
    temporary = _temporary_copy(target, data, _mode_for(target), sync=True)
    try:
        os.replace(temporary, target)
    except BaseException:
        _remove(temporary)
        raise
    _sync_folder(target.parent)
    return target


def write_output(path: str | os.PathLike[str], data: Content) -> Path:
    """Put ``data`` at ``path``, an output a user named, as what it is (see :func:`write_target`):
    a regular file (or a new one) replaced in one step, a device, a pipe or an open descriptor
    written in place, a link kept while the file it points at is replaced; return the path.
    Failures raise :class:`OSError`."""
    where = write_target(path)
    if where.kind is TargetKind.IN_PLACE:
        _write_in_place(where.path, data)
    else:
        write_atomically(where.path, data)
    return Path(path)


class TargetKind(Enum):
    """How :func:`write_output` writes a path."""

    #: A regular file, or a name not taken yet: a new file replaces it in one step.
    REPLACED = "replaced"
    #: A device, a pipe or an open descriptor: opened and written as it is.
    IN_PLACE = "in place"


@dataclass(frozen=True)
class WriteTarget:
    """What writing a path means: ``path`` is the name written (for a symbolic link to a
    regular file, the file it points at; otherwise the path as given)."""

    kind: TargetKind
    path: str


#: A folder whose entries name the open descriptors of a process (Linux's, and the BSDs' /dev/fd).
_DESCRIPTOR_FOLDER = re.compile(r"/proc/(self|thread-self|\d+)(/task/\d+)?/fd|/dev/fd")
#: Links followed at most before a path is taken as a loop (as the kernel's own limit).
_MAX_LINKS = 40


def write_target(path: str | os.PathLike[str]) -> WriteTarget:
    """How ``path`` is written, found without opening it: raises :class:`OSError` for a
    directory or a socket (neither can hold a model), or a loop of links.

    A name not taken yet, or a regular file, is replaced. A device or a pipe (FIFO) is written
    in place, as is any path reaching a file through an open descriptor's name (``/dev/stdout``,
    ``/proc/self/fd/1``): what is open there is what the caller means, and a new file under
    that name would never reach it. A symbolic link to a regular file (or to a name not taken
    yet) is kept, and the file it points at is replaced beside itself.
    """
    name = os.fspath(path)
    status = status_of(name)
    if status is not None and stat.S_ISLNK(status.st_mode):
        if _through_descriptor(name):
            return _checked(name, _followed_status(name), in_place=True)
        return _checked(os.path.realpath(name), _followed_status(name), in_place=False)
    return _checked(name, status, in_place=False)


def _checked(name: str, status: os.stat_result | None, in_place: bool) -> WriteTarget:
    """The target for ``name``, whose (followed) status is ``status`` (None: nothing there)."""
    if status is None or stat.S_ISREG(status.st_mode):
        return WriteTarget(TargetKind.IN_PLACE if in_place and status is not None else TargetKind.REPLACED, name)
    if stat.S_ISDIR(status.st_mode):
        raise IsADirectoryError(errno.EISDIR, "it is a directory", name)
    if stat.S_ISSOCK(status.st_mode):
        raise OSError(errno.ENXIO, "it is a socket, which a file cannot be written to", name)
    return WriteTarget(TargetKind.IN_PLACE, name)  # a character or block device, a FIFO


def _followed_status(name: str) -> os.stat_result | None:
    """What ``os.stat`` says of ``name`` following links; None for a dangling link."""
    try:
        return os.stat(name)
    except FileNotFoundError:
        return None


def _through_descriptor(name: str) -> bool:
    """Whether the chain of links from ``name`` passes through the name of an open descriptor."""
    current = name
    for _ in range(_MAX_LINKS):
        folder = os.path.realpath(os.path.dirname(os.path.abspath(current)))
        if _DESCRIPTOR_FOLDER.fullmatch(folder):
            return True
        try:
            link = os.readlink(current)
        except OSError:  # not a link (any more): the chain ends here
            return False
        current = os.path.join(os.path.dirname(os.path.abspath(current)), link)
    raise OSError(errno.ELOOP, "too many levels of symbolic links", name)


#: How a device, a pipe or an open descriptor is opened to be written as it is (emptied when it
#: is a regular file reached through a descriptor's name, as a shell's ``>`` would).
_IN_PLACE = os.O_WRONLY | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def _write_in_place(name: str, data: Content) -> None:
    """Open ``name`` and write ``data`` to it (a FIFO waits for its reader, as any writer does)."""
    descriptor = os.open(name, _IN_PLACE)
    try:
        _write_all(descriptor, data)
    finally:
        os.close(descriptor)


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
