"""How every command reads and writes models: a path, or ``-`` for standard input and output.

The one rule for outputs: ``-o OUT`` replaces OUT when it exists (in one step: a failure
leaves it as it was, so OUT may be the input itself); a device, a pipe or an open descriptor
is written as it is; a symbolic link keeps pointing at the file it names, which is replaced;
a directory is refused. When the model goes to standard output (``-o -``, ``-o /dev/stdout``),
the command's report goes to standard error, so the two never mix.
"""
from __future__ import annotations

import os
import sys
from typing import Any, BinaryIO, Callable, TextIO

from opspec.cli_common import UserError

#: The path that stands for standard input (as a model to read) or standard output (as ``-o``).
STANDARD_STREAM = "-"


def load(path: str) -> Any:
    """The model at ``path``, or read from standard input for ``-``; a user error when it is not one."""
    from opspec.runtime.ir import ModelLoadError, load_model

    if path != STANDARD_STREAM:
        try:
            return load_model(path).model
        except ModelLoadError as error:
            raise UserError(str(error)) from None
    data = _read_standard_input()
    try:
        return load_model(data).model
    except ModelLoadError as error:
        raise UserError(str(error).replace(f"<bytes of length {len(data)}>", "<stdin>", 1)) from None


def _read_standard_input() -> bytes:
    if sys.stdin is None or sys.stdin.isatty():
        raise UserError("the model '-' is read from standard input, which is a terminal: "
                        "redirect a file (< model.onnx) or pipe one in")
    return sys.stdin.buffer.read()


def source_path(path: str) -> str | None:
    """The file a model was read from, whose folder holds its external data (None: standard input)."""
    return None if path == STANDARD_STREAM else path


def shown_name(path: str) -> str:
    """How a model path is named in reports."""
    return "<stdin>" if path == STANDARD_STREAM else path


def check_output(path: str) -> None:
    """Refuse an output that cannot be written, before any work is done."""
    from opspec.runtime.atomic_file import TargetKind, write_target

    if path == STANDARD_STREAM:
        if sys.stdout is None or sys.stdout.isatty():
            raise UserError("-o - writes the model to standard output, which is a terminal: "
                            "redirect it (> out.onnx) or pipe it")
        return
    try:
        target = write_target(path)
    except OSError as error:
        raise UserError(f"cannot write {path}: {error.strerror or error}") from None
    if target.kind is TargetKind.IN_PLACE:
        if not os.access(target.path, os.W_OK):
            raise UserError(f"cannot write {path}: permission denied")
        return
    folder = os.path.dirname(os.path.abspath(target.path))
    if not os.path.isdir(folder):
        raise UserError(f"cannot write {path}: no such folder {folder}")
    exists = os.path.exists(target.path)
    if not os.access(folder, os.W_OK) or (exists and not os.access(target.path, os.W_OK)):
        raise UserError(f"cannot write {path}: permission denied")


def report_stream(output: str | None) -> TextIO:
    """Where a command's report goes: standard error when the model goes to standard output
    (``-``, or a path naming what standard output is open on, such as ``/dev/stdout``)."""
    if output == STANDARD_STREAM or (output is not None and _is_standard_output(output)):
        return sys.stderr
    return sys.stdout


def _is_standard_output(path: str) -> bool:
    try:
        named, opened = os.stat(path), os.fstat(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # nothing there yet, or no real standard output
        return False
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)


def write(save: Callable[[str | BinaryIO], Any], model: Any, source: str, output: str) -> list[tuple[str, str]]:
    """Write ``model`` (read from ``source``) to ``output`` by ``save``, which takes a path or a
    binary stream, after its external data is made reachable from the output's folder (see
    :mod:`opspec.cli_external_data`; its warnings go to standard error). Returns the data files
    copied beside the output, as (from, to)."""
    from opspec.cli_external_data import apply, plan

    to_stdout = output == STANDARD_STREAM
    relocation = plan(model, source_path(source), None if to_stdout or _is_stream(output) else output)
    for warning in relocation.warnings:
        print(f"opspec: warning: {warning}", file=sys.stderr)
    apply(model, relocation)
    try:
        if to_stdout:
            sys.stdout.flush()
            save(sys.stdout.buffer)
            sys.stdout.buffer.flush()
        else:
            save(output)
    except BrokenPipeError:
        raise
    except OSError as error:
        raise UserError(f"cannot write {shown_output(output)}: {error.strerror or error}") from None
    return list(relocation.copies)


def _is_stream(output: str) -> bool:
    """Whether ``output`` is written as it is (a device, a pipe, a descriptor): it has no folder
    of its own for external data to go to."""
    from opspec.runtime.atomic_file import TargetKind, write_target

    return write_target(output).kind is TargetKind.IN_PLACE


def shown_output(output: str) -> str:
    """How an output is named in reports."""
    return "<stdout>" if output == STANDARD_STREAM else output


__all__ = ["STANDARD_STREAM", "check_output", "load", "report_stream", "shown_name", "shown_output", "source_path",
           "write"]
