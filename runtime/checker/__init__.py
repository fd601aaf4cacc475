"""``opspec check``: a model's fields and stored data, its graphs' structure, and every node
against its schema, its attribute constraints and its inference rule."""
from opspec.runtime.checker.model import check_model_fields
from opspec.runtime.checker.problems import ModelProblem
from opspec.runtime.checker.whole import CheckResult, check_model

__all__ = ["CheckResult", "ModelProblem", "check_model", "check_model_fields"]
