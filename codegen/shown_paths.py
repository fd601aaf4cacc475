"""How the files of an opdefs tree are named: in locations, and when shown to a person.

A location names a tree's file relative to the folder that holds the tree
(``opdefs/ai.onnx/math/Add.yaml``), for a layered op set the folder that holds the tree it
layers over (``opdefs/onnxruntime/com.microsoft/...``): so every tree of one run names its
files alike, and generated files, which quote these names, do not depend on where
generation ran. A file outside that folder (the built-in type sets a user's tree inherits)
is named by its path as found.

When printed for a person, a location's path is one that opens from the folder the command
ran in: relative to it when the file is inside it, else absolute (:func:`readable`).
"""
from __future__ import annotations

import os
from pathlib import Path

from opspec.codegen.diagnostics import Diagnostic

#: Marks a folder inside a tree as an op set of its own (see :func:`opspec.codegen.load.layered_trees`).
LAYER_FILE = "layer.yaml"


def names_base(root: Path) -> Path:
    """The folder a tree's locations are relative to: the one holding the tree, or for a layered
    op set (a folder with a ``layer.yaml``), the one holding the tree it layers over. Absolute."""
    root = Path(os.path.abspath(root))
    return root.parent.parent if os.path.lexists(root / LAYER_FILE) else root.parent


class Namer:
    """Names the files of the tree at ``root`` as its locations do (see the module's docstring)."""

    def __init__(self, root: Path) -> None:
        self._base = str(names_base(root)).rstrip(os.sep) + os.sep  # "/" stays "/"

    def __call__(self, path: Path | str) -> str:
        text = str(path)
        full = os.path.abspath(text)
        return full[len(self._base):].replace(os.sep, "/") if full.startswith(self._base) else text


def readable_path(path: str, base: Path, cwd: Path | None = None) -> str:
    """A location's ``path`` (relative to ``base``, or absolute) as it opens from ``cwd`` (the current
    folder): relative to it when the file is inside it, else absolute."""
    full = Path(os.path.abspath(Path(base) / path))
    here = Path(os.path.abspath(cwd if cwd is not None else os.getcwd()))
    try:
        return full.relative_to(here).as_posix()
    except ValueError:
        return str(full)


def readable(diagnostic: Diagnostic, root: Path, cwd: Path | None = None) -> Diagnostic:
    """``diagnostic`` of the tree at ``root`` (or of a tree layered over it) with its path as it opens
    from ``cwd``."""
    where = diagnostic.location
    return Diagnostic(where._replace(path=readable_path(where.path, names_base(root), cwd)), diagnostic.message,
                      diagnostic.severity)


__all__ = ["LAYER_FILE", "Namer", "names_base", "readable", "readable_path"]
