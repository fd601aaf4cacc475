"""Problems found at nodes, and how an exception from a rule becomes one.

A Python exception in a rule other than a node error is a bug in the rule: by default it
is reported as the node's error (naming the node); with :data:`RAISE_RULE_BUGS` set (the
environment variable ``OPSPEC_DEBUG``, as the test suite does) it propagates, so it can be seen.
"""
from __future__ import annotations

import os
from enum import Enum

from opspec.runtime.constraints import Violation
from opspec.runtime.contract import InferenceError
from opspec.runtime.inference.typeops import TypeConflict
from opspec.runtime.shape import ShapeError

RAISE_RULE_BUGS = bool(os.environ.get("OPSPEC_DEBUG"))
#: The exceptions by which a rule reports a problem with the node (anything else is a bug).
NODE_PROBLEMS = (InferenceError, ShapeError, TypeConflict)


class Severity(Enum):
    """How much a problem weighs."""

    #: The model is wrong: the node fails whenever its graph runs (or never matches its schema).
    ERROR = "error"
    #: The node would fail, but it lies in a graph that may never run (an If's branch): the
    #: model is wrong only for inputs that take that branch, and may well never get them.
    NOTE = "note"


class NodeError:
    """One problem found at one node; ``violations`` are the broken attribute constraints
    it stands for (empty for any other problem).

    ``of_form`` says that the node does not match its schema (its inputs and outputs, their
    types, its attributes): such a node is wrong wherever it is, even in a graph that never
    runs. Any other problem was found in the values the node would compute, and is one only
    if it runs, so in a graph that may not run it is a :attr:`Severity.NOTE`.
    """

    __slots__ = ("index", "name", "op_type", "domain", "message", "violations", "severity", "of_form")

    def __init__(self, index: int, name: str, op_type: str, domain: str, message: str,
                 violations: tuple[Violation, ...] = (), severity: Severity = Severity.ERROR,
                 of_form: bool = False) -> None:
        self.index, self.name, self.op_type, self.domain, self.message = index, name, op_type, domain, message
        self.violations = violations
        self.severity = severity
        self.of_form = of_form

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
        return isinstance(other, NodeError) and str(self) == str(other) and self.severity is other.severity

    def __hash__(self) -> int:
        return hash(str(self))

    @property
    def is_error(self) -> bool:
        """Whether the problem makes the model wrong (not a :attr:`Severity.NOTE`)."""
        return self.severity is Severity.ERROR


def rule_failure(error: BaseException) -> str:
    """An exception from a rule as one line: its message, plus the kind when unexpected."""
    text = str(error) or type(error).__name__
    if isinstance(error, NODE_PROBLEMS):
        return text
    return f"inference failed ({type(error).__name__}: {text})"


__all__ = ["NODE_PROBLEMS", "NodeError", "RAISE_RULE_BUGS", "Severity", "rule_failure"]
