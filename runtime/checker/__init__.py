"""``opspec check``'s checks of a model's fields and stored data (the graph's structure,
schemas and inference are checked by :mod:`opspec.runtime.inference`)."""
from opspec.runtime.checker.model import check_model_fields
from opspec.runtime.checker.problems import ModelProblem

__all__ = ["ModelProblem", "check_model_fields"]
