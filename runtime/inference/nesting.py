"""Bounds on how deeply inference nests: calls of model-local functions and subgraphs.

Both are driven by the model, so both are bounded, and the bound is reported as one
located, short error instead of Python's recursion limit. The function bound is above
onnx's: its checker states a limit of 100 calls and onnx 1.23.2 infers a chain of 257.
The walk needs several Python frames per level, so the outermost level makes room for
the deepest nesting allowed (:func:`stack_room`) and gives the old limit back after.
"""
from __future__ import annotations

import re
import sys
from contextlib import contextmanager
from typing import Iterator

#: The longest chain of function calls inferred (a call of F0 whose body calls F1 ... is a chain).
MAX_CALL_DEPTH = 300
#: How deeply graphs may nest inside node attributes.
MAX_SUBGRAPH_DEPTH = 64
#: Python frames one level of nesting takes, with a margin (measured: at most 6).
_FRAMES_PER_LEVEL = 10
_MARGIN = 200


class CallChainTooDeep(BaseException):
    """Unwinds a chain of calls deeper than :data:`MAX_CALL_DEPTH` to its outermost call.

    A ``BaseException``: the handlers that turn a broken function body into the node's
    error must not stop it on the way."""

    def __init__(self, chain: list[str]) -> None:
        super().__init__(chain)
        self.chain = chain

    def message(self) -> str:
        shown = self.chain if len(self.chain) <= 6 else [*self.chain[:3], "...", *self.chain[-2:]]
        return (f"function calls nested deeper than {MAX_CALL_DEPTH} "
                f"({' -> '.join(shown)}); the model may be malformed or hostile")


def _frames() -> int:
    frame, count = sys._getframe(), 0
    while frame is not None:
        frame, count = frame.f_back, count + 1  # type: ignore[assignment]
    return count


@contextmanager
def stack_room() -> Iterator[None]:
    """Let the nesting below the current frame reach its bounds without a RecursionError."""
    needed = _frames() + (MAX_CALL_DEPTH + MAX_SUBGRAPH_DEPTH) * _FRAMES_PER_LEVEL + _MARGIN
    before = sys.getrecursionlimit()
    if needed > before:
        sys.setrecursionlimit(needed)
    try:
        yield
    finally:
        if needed > before and sys.getrecursionlimit() == needed:
            sys.setrecursionlimit(before)


_CALL_STEP = re.compile(r"node #\d+ \([^()]*\): in function '[^']*': ")


def short_chain(message: str, keep: int = 3) -> str:
    """An error from deep inside nested calls with the middle of its call path left out."""
    steps = list(_CALL_STEP.finditer(message))
    if len(steps) <= 2 * keep:
        return message
    left_out = len(steps) - 2 * keep
    return (message[:steps[keep].start()] + f"... ({left_out} more calls) ... "
            + message[steps[-keep].start():])
