"""What every ``opspec`` subcommand shares: exit codes and the one-line user error."""
from __future__ import annotations

#: Exit codes: the command did its work and found nothing wrong; it found problems in
#: its input (a model or an opdefs tree); the input could not be read or the command
#: line is wrong (argparse uses 2 for usage errors too); opspec itself failed.
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class UserError(Exception):
    """A problem with the command line or its input files, reported in one line (exit 2)."""


def plural(count: int, word: str) -> str:
    """``1 error``, ``2 errors``, ``100,000 nodes``: counts for people, grouped by thousands as
    every count the command line prints."""
    return f"{count:,} {word}{'' if count == 1 else 's'}"


__all__ = ["EXIT_FAILED", "EXIT_INTERNAL", "EXIT_OK", "EXIT_USAGE", "UserError", "plural"]
