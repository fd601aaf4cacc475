"""Load a package made by `opspec generate --out DIR` into a registry of its own."""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

from opspec.runtime.registry import Registry


def load_package(folder: Path) -> Registry:
    """A fresh registry holding only the generated package in ``folder``."""
    sys.path.insert(0, str(folder.parent))
    try:
        registry = Registry()
        registry.add_package(importlib.import_module(folder.name))
    finally:
        sys.path.remove(str(folder.parent))
    return registry
