"""What every ``opspec`` subcommand shares: exit codes and the one-line user error."""
from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """How an ``opspec`` command ends."""

    OK = 0  # it did its work and found nothing wrong
    FAILED = 1  # it found problems in its input (a model or an opdefs tree)
    USAGE = 2  # the input could not be read or the command line is wrong (argparse's code too)
    INTERNAL = 3  # opspec itself failed
    INTERRUPTED = 130  # stopped by Ctrl-C (128 + SIGINT, as shells report it)


class UserError(Exception):
    """A problem with the command line or its input files, reported in one line (exit 2)."""


def plural(count: int, word: str) -> str:
    """``1 error``, ``2 errors``, ``100,000 nodes``: counts for people, grouped by thousands as
    every count the command line prints."""
    return f"{count:,} {word}{'' if count == 1 else 's'}"


__all__ = ["ExitCode", "UserError", "plural"]
