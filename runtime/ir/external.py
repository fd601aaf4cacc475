"""Tensor data stored in files beside a model (``data_location: EXTERNAL``).

Only files inside the model's own folder are read: a location that is absolute, climbs
out with ``..``, or resolves (through symlinks) to somewhere outside the folder is
refused with a message, and nothing is opened. Reads are bounded by the caller's limit,
so a hostile offset or length cannot make inference read a large file.
"""
from __future__ import annotations

import os
import stat
from typing import Any

from opspec.runtime.ir.codes import DataLocation


class ExternalData:
    """Reads external tensor data under one folder; collects why a tensor was refused."""

    __slots__ = ("folder", "read", "refusals")

    def __init__(self, folder: str | os.PathLike[str] | None, read: bool = True) -> None:
        #: None for a model given as bytes or a message: it has no folder, so nothing is read,
        #: and each tensor whose data would have been read is refused with the reason.
        self.folder = os.path.realpath(folder) if folder is not None else None
        #: One message per refused tensor, naming the tensor and its location.
        self.refusals: list[str] = []
        #: False: locations are still checked, but no file is opened (the data stays unknown, as for a
        #: tensor too large to read).
        self.read = read

    def inlined(self, tensor: Any, max_bytes: int) -> Any | None:
        """A copy of ``tensor`` with its external bytes as ``raw_data``; None when it is not
        external, is larger than ``max_bytes``, or its file cannot or may not be read."""
        if tensor.data_location != DataLocation.EXTERNAL:
            return None
        entries = {entry.key: entry.value for entry in tensor.external_data}
        location = entries.get("location", "")
        path = self._path(tensor.name, location)
        if path is None:
            return None
        try:
            offset = int(entries.get("offset", "0") or 0)
            length = int(entries["length"]) if entries.get("length") else None
        except ValueError:
            self.refusals.append(f"tensor '{tensor.name}': offset or length of '{location}' is not a number")
            return None
        if offset < 0 or (length is not None and length < 0):
            self.refusals.append(f"tensor '{tensor.name}': negative offset or length for '{location}'")
            return None
        if not self.read or (length is not None and length > max_bytes):
            return None
        data = self._read(tensor.name, location, path, offset, max_bytes + 1 if length is None else length)
        if data is None or len(data) > max_bytes:
            return None
        copy = type(tensor)()
        copy.CopyFrom(tensor)
        copy.ClearField("external_data")
        copy.data_location = 0
        copy.raw_data = data
        return copy

    def location_problem(self, name: str, location: str) -> str | None:
        """Why tensor ``name``'s external ``location`` may not be read (None when it may);
        nothing is opened."""
        return self._resolve(name, location)[1]

    def _path(self, name: str, location: str) -> str | None:
        """The file's real path if it lies inside the folder; otherwise record why not."""
        path, problem = self._resolve(name, location)
        if problem is not None:
            self.refusals.append(problem)
        return path

    def _resolve(self, name: str, location: str) -> tuple[str | None, str | None]:
        """(the file's real path, None) when it lies inside the folder, else (None, why not)."""
        if not location:
            return None, f"tensor '{name}': external data without a location"
        if "\0" in location or os.path.isabs(location) or location.startswith(("/", "\\")) or ":" in location:
            return None, (f"tensor '{name}': external data location '{location}' is not relative to the model's "
                          "folder; not read")
        parts = location.replace("\\", "/").split("/")
        if ".." in parts:
            return None, f"tensor '{name}': external data location '{location}' leaves the model's folder; not read"
        if self.folder is None:
            return None, (f"tensor '{name}': external data '{location}' is not read: the model was not given as a "
                          "file path, so it has no folder")
        path = os.path.realpath(os.path.join(self.folder, location))
        if os.path.commonpath([path, self.folder]) != self.folder:
            return None, (f"tensor '{name}': external data location '{location}' leads outside the model's folder "
                          "(through a link); not read")
        return path, None

    def _read(self, name: str, location: str, path: str, offset: int, length: int) -> bytes | None:
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                self.refusals.append(f"tensor '{name}': external data location '{location}' is not a file")
                return None
            with open(path, "rb") as handle:
                handle.seek(offset)
                return handle.read(length)
        except OSError as error:
            self.refusals.append(f"tensor '{name}': cannot read external data '{location}': "
                                 f"{error.strerror or error}")
            return None


__all__ = ["ExternalData"]
