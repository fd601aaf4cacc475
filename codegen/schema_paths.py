"""Where the JSON Schemas of the opdefs format are, and the modeline that names one.

The schemas ship inside the package (``opspec/opdefs/schema/``), so an editor with a YAML
language server finds them from an installed wheel as from a source checkout. A file
names its schema in its first line; the path is relative to the file (the way the
language server reads it), to a ``schema/`` folder of the tree that holds the file when
it has one, else to the installed package's.
"""
from __future__ import annotations

import os
from pathlib import Path

from opspec.codegen.vocabulary import builtin_opdefs

#: The kinds of opdefs file, each with a schema ``<kind>.schema.json``.
KINDS = ("op", "domain", "types", "layer")
SCHEMA_FOLDER = "schema"


def schema_folder() -> Path:
    """The folder of the installed JSON Schemas."""
    return builtin_opdefs() / SCHEMA_FOLDER


def schema_file(kind: str, near: Path | None = None) -> Path:
    """The schema of ``kind`` for a file at ``near``: its tree's own copy, else the installed one."""
    name = f"{kind}.schema.json"
    if near is not None:
        for folder in Path(os.path.abspath(near)).parents:
            if (folder / SCHEMA_FOLDER / name).is_file():
                return folder / SCHEMA_FOLDER / name
    return schema_folder() / name


def modeline(kind: str, path: Path) -> str:
    """The first line of an opdefs file at ``path`` of ``kind``, naming its JSON Schema."""
    target = schema_file(kind, path)
    try:
        reference = Path(os.path.relpath(target, Path(os.path.abspath(path)).parent)).as_posix()
    except ValueError:  # another drive: only an absolute address reaches it
        reference = target.resolve().as_uri()
    return f"# yaml-language-server: $schema={reference}"


__all__ = ["KINDS", "modeline", "schema_file", "schema_folder"]
