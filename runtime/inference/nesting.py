"""Bounds on how deeply inference nests: calls of model-local functions and subgraphs.

Both are driven by the model, so both are bounded, and the bound is reported as one
located, short error instead of Python's recursion limit. The function bound is onnx's:
onnx 1.23.2 infers a chain of 257 calls and refuses one of 258. Python's recursion limit is
never raised: one level of nesting costs a few frames (a call three, a subgraph at most
eight), and before each level the walk makes sure that room is left below the limit
(:func:`out_of_stack`), so even a caller already deep in its own stack gets the same short
answer rather than a ``RecursionError``.
"""
from __future__ import annotations

import re
import sys

#: The longest chain of function calls inferred (a call of F0 whose body calls F1 ... is a chain).
MAX_CALL_DEPTH = 257
#: How deeply graphs may nest inside node attributes.
MAX_SUBGRAPH_DEPTH = 64
#: Frames kept free below the recursion limit for the innermost level: its walk, a rule
#: and the shape algebra under it.
STACK_ROOM = 120


class CallChainTooDeep(BaseException):
    """Unwinds a chain of calls deeper than the bound to its outermost call.

    A ``BaseException``: the handlers that turn a broken function body into the node's
    error must not stop it on the way."""

    def __init__(self, chain: list[str], bound: str = f"deeper than {MAX_CALL_DEPTH}") -> None:
        super().__init__(chain)
        self.chain = chain
        self.bound = bound

    def message(self) -> str:
        shown = self.chain if len(self.chain) <= 6 else [*self.chain[:3], "...", *self.chain[-2:]]
        return (f"function calls nested {self.bound} "
                f"({' -> '.join(shown)}); the model may be malformed or hostile")


#: How a level refused for want of stack is described.
TOO_DEEP_FOR_STACK = "too deeply for Python's stack"


def out_of_stack() -> bool:
    """Whether fewer than :data:`STACK_ROOM` frames are left below Python's recursion limit."""
    try:
        sys._getframe(sys.getrecursionlimit() - STACK_ROOM)
    except ValueError:  # the stack is not that deep
        return False
    return True


_STEP = re.compile(r"node #\d+ \([^()]*\): in (function '[^']*'|subgraph '[^']*'|a subgraph): ")


def short_chain(message: str, keep: int = 3) -> str:
    """An error from deep inside nested calls or subgraphs with the middle of its path left out."""
    steps = list(_STEP.finditer(message))
    if len(steps) <= 2 * keep + 1:  # leaving out one step would not make it shorter
        return message
    left_out = steps[keep:-keep]
    kind = "calls" if all(step.group(1).startswith("function") for step in left_out) else "levels"
    return (message[:steps[keep].start()] + f"... ({len(left_out)} more {kind}) ... "
            + message[steps[-keep].start():])
