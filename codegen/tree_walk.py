"""Finding an opdefs tree's files, with one policy for symbolic links.

A link that leads outside the tree (the folder being compiled, or the tree a layered op
set sits in) is refused with a located error, whether it names a file or a folder: a
tree's files are the ones inside it. A link inside the tree is followed, and every folder
is walked at most once, so a link back to a parent cannot loop. Folders are walked with an
explicit stack, so no nesting depth reaches Python's recursion limit.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Escape:
    """A link at ``path`` that leads outside the tree, to ``target``."""

    path: Path
    target: str

    @property
    def message(self) -> str:
        return f"symbolic link leads outside the opdefs tree (to {self.target}); copy the file into the tree instead"


def escape(path: Path, boundary: Path) -> Escape | None:
    """How ``path`` leaves ``boundary`` (a resolved folder) through a link, if it does.

    A link that cannot be resolved (a loop) is left to the reader, which reports it.
    """
    try:
        target = path.resolve()
    except (OSError, RuntimeError):
        return None
    return None if target.is_relative_to(boundary) else Escape(path, str(target))


def files_under(folder: Path, suffix: str, boundary: Path) -> tuple[list[str], list[Escape]]:
    """The paths (as text) of the files named ``*suffix`` under ``folder``, sorted as paths sort (part
    by part), and the links that leave ``boundary``.

    Each real file and folder counts once: folders and files reached without a link come
    first, and a link to something already found adds nothing.
    """
    found: dict[str, tuple[bool, str]] = {}  # real path -> (reached through a link, path)
    escapes: list[Escape] = []
    walked: set[Path] = set()
    plain: list[str] = [str(folder)]
    linked_folders: list[str] = []
    while plain or linked_folders:
        current, through_link = (plain.pop(), False) if plain else (linked_folders.pop(0), True)
        real = _real(Path(current))
        if real is None or real in walked:
            continue
        walked.add(real)
        real_text = str(real)
        try:
            entries = sorted(os.scandir(current), key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            link = entry.is_symlink()
            linked = through_link or link
            if link and (outside := escape(Path(entry.path), boundary)) is not None:
                escapes.append(outside)
                continue
            if _is_folder(entry) and not entry.name.endswith(suffix):  # a folder named like a file: read, refused
                (linked_folders if linked else plain).append(entry.path)
            elif entry.name.endswith(suffix):
                # a plain entry of a resolved folder is that folder's entry: no look at the disk
                key = str(_real(Path(entry.path)) or entry.path) if link else os.path.join(real_text, entry.name)
                if key not in found or (found[key][0] and not linked):
                    found[key] = (linked, entry.path)
    return sorted((path for _, path in found.values()), key=lambda path: path.split(os.sep)), escapes


def _real(path: Path) -> Path | None:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return None


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # follows a link (one inside the tree, by now)
    except OSError:
        return False
