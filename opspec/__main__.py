"""``python -m opspec``: the same as the ``opspec`` command."""
from opspec.cli import run

run()
