"""onnx's exception classes as extra bases, so ``except onnx...Error`` catches ours.

onnx is never imported for this: its classes are used only when the program has already
imported ``onnx`` (before importing opspec). Otherwise catch both, for example
``except (onnx.defs.SchemaError, opspec.SchemaError)``.
"""
from __future__ import annotations

import importlib
import sys


def onnx_bases(module: str, name: str) -> tuple[type, ...]:
    """``(onnx's class,)`` when onnx is already loaded and has it, else ``()``."""
    if "onnx" not in sys.modules:
        return ()
    try:
        found = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return ()
    return (found,) if isinstance(found, type) and issubclass(found, Exception) else ()
