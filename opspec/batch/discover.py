"""Which files a scan reads: the ``.onnx`` files under the paths it is given."""
from __future__ import annotations

import glob
import hashlib
import os
import stat
from typing import Iterable, Iterator

from opspec.batch.records import Task

#: The suffix of the model files a folder is searched for.
SUFFIX = ".onnx"
#: Bytes read at a time when a file is hashed.
CHUNK = 1 << 20


class NothingToScan(ValueError):
    """A path that names no file, folder or glob match."""


def model_files(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """Every model file the paths name, each once, in order: a file as it is (whatever its
    suffix), a folder's ``.onnx`` files at any depth (links to folders are not followed), a
    glob's matches as a file or folder each. Raises :class:`NothingToScan` for a path that
    names nothing."""
    found: dict[str, None] = {}
    for path in (os.fspath(given) for given in paths):
        matches = [path] if os.path.lexists(path) else sorted(glob.glob(path, recursive=True))
        if not matches:
            raise NothingToScan(f"{path}: no such file or folder, and no file matches it")
        for match in matches:
            found.update(dict.fromkeys(_under(match)))
    return list(found)


def _under(path: str) -> Iterator[str]:
    if os.path.isdir(path):
        for folder, subfolders, files in os.walk(path):
            subfolders.sort()
            yield from (os.path.join(folder, name) for name in sorted(files) if name.endswith(SUFFIX)
                        and _is_file(os.path.join(folder, name)))
    elif _is_file(path):
        yield path


def _is_file(path: str) -> bool:
    """A regular file (a link to one counts): never a device, a pipe or a socket."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def task_of(path: str) -> Task:
    """The task for the file at ``path``: its SHA-256 and size, from its bytes (external data,
    in files of its own, is not part of it). Raises OSError when it cannot be read."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return Task(path, digest.hexdigest(), size)


__all__ = ["NothingToScan", "SUFFIX", "model_files", "task_of"]
