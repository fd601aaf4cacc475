"""``python -m opspec``: the same as the ``opspec`` command."""
import sys

from opspec.cli import main

sys.exit(main())
