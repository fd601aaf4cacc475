"""One problem ``opspec check`` reports about a model's structure or data, with a stable code."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelProblem:
    """Where a problem is (the model, a graph, a node, a tensor), what is wrong, and its kind.

    ``code`` names the kind of problem and never changes between releases, so scripts can
    filter on it (the codes are listed in the checker's documentation).
    """

    where: str
    message: str
    code: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


__all__ = ["ModelProblem"]
