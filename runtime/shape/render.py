"""Text rendering of dims and shapes for messages and debugging."""
from __future__ import annotations

from typing import Any, Optional, Tuple


def format_dim(d: Any) -> str:
    """Render one dim: ``"?"`` when unknown, otherwise ``str(d)`` (``3``, ``2*N``)."""
    return "?" if d is None else str(d)


def format_shape(s: Optional[Tuple[Any, ...]]) -> str:
    """Render a shape like a Python tuple (``"(2, N, ?)"``, ``"(3,)"``) or ``"<unknown rank>"``."""
    if s is None:
        return "<unknown rank>"
    if len(s) == 1:
        return f"({format_dim(s[0])},)"
    return "(" + ", ".join([format_dim(d) for d in s]) + ")"
