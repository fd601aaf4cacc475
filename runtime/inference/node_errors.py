"""Problems found at nodes, and how an exception from a rule becomes one.

A Python exception in a rule other than a node error is a bug in the rule: by default it
is reported as the node's error (naming the node); with :data:`RAISE_RULE_BUGS` set (the
environment variable ``OPSPEC_DEBUG``, as the test suite does) it propagates, so it can be seen.
"""
from __future__ import annotations

import os

from opspec.runtime.constraints import Violation
from opspec.runtime.contract import InferenceError
from opspec.runtime.inference.typeops import TypeConflict
from opspec.runtime.shape import ShapeError

RAISE_RULE_BUGS = bool(os.environ.get("OPSPEC_DEBUG"))
#: The exceptions by which a rule reports a problem with the node (anything else is a bug).
NODE_PROBLEMS = (InferenceError, ShapeError, TypeConflict)


class NodeError:
    """One problem found at one node; ``violations`` are the broken attribute constraints
    it stands for (empty for any other problem)."""

    __slots__ = ("index", "name", "op_type", "domain", "message", "violations")

    def __init__(self, index: int, name: str, op_type: str, domain: str, message: str,
                 violations: tuple[Violation, ...] = ()) -> None:
        self.index, self.name, self.op_type, self.domain, self.message = index, name, op_type, domain, message
        self.violations = violations

    @property
    def where(self) -> str:
        """``node 'conv1' (Conv, domain 'ai.onnx')``; unnamed nodes go by their position."""
        who = f"node '{self.name}'" if self.name else f"node #{self.index}"
        return f"{who} ({self.op_type}, domain '{self.domain or 'ai.onnx'}')"

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"

    def __repr__(self) -> str:
        return f"NodeError({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NodeError) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))


def rule_failure(error: BaseException) -> str:
    """An exception from a rule as one line: its message, plus the kind when unexpected."""
    text = str(error) or type(error).__name__
    if isinstance(error, NODE_PROBLEMS):
        return text
    return f"inference failed ({type(error).__name__}: {text})"


__all__ = ["NODE_PROBLEMS", "NodeError", "RAISE_RULE_BUGS", "rule_failure"]
