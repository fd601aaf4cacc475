"""``check_model``: what ``opspec check`` checks, called the way ``onnx.checker.check_model`` is.

The checks are the command's own (:mod:`opspec.runtime.checker`); this module only chooses
which of its findings count, as onnx's arguments say, and raises them as one exception::

    try:
        opspec.check_model("model.onnx", full_check=True)
    except opspec.ValidationError as error:
        for problem in error.problems:
            print(problem)
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from opspec.runtime.onnx_compat import onnx_bases

if TYPE_CHECKING:
    from opspec.runtime.op_set import OpSet

#: Node problems a check without ``full_check`` reports: the node against its schema. The
#: others (input and output types, declared-vs-inferred conflicts, a rule rejecting the
#: node) come from type and shape inference, which ``full_check`` adds.
SCHEMA_CODES = frozenset({"node-arity", "attribute-unknown", "attribute-missing", "attribute-type",
                          "attribute-value", "unknown-op"})
#: Domains whose ops must all be known; an op of another domain that the op sets do not
#: define is skipped unless ``check_custom_domain`` is set (as onnx's checker does).
BUILT_IN_DOMAINS = frozenset({"", "ai.onnx", "ai.onnx.ml", "ai.onnx.training"})


# onnx's class joins the bases at run time (when onnx is loaded first), out of a type checker's sight
class ValidationError(ValueError, *onnx_bases("onnx.checker", "ValidationError")):  # type: ignore[misc]
    """A model that breaks the format or its op sets' schemas; ``problems`` says where and what.

    A subclass of ``onnx.checker.ValidationError`` too when onnx was imported before opspec.
    """

    def __init__(self, problems: list[Any]) -> None:
        self.problems = tuple(problems)
        count = f"{len(self.problems)} problem{'s' if len(self.problems) != 1 else ''}"
        super().__init__("\n".join([f"the model has {count}:", *map(str, self.problems)]))


def check_model(model: Any, full_check: bool = False, skip_opset_compatibility_check: bool = False,
                check_custom_domain: bool = False, *, op_set: OpSet | None = None) -> None:
    """Check ``model`` (an ``onnx.ModelProto``, an opspec ``ModelProto``, bytes or a path);
    raise :class:`ValidationError` listing every located problem, or return None.

    Without ``full_check`` the model's fields, its graphs' structure and each node against
    its schema are checked; ``full_check`` adds what type and shape inference finds. An op
    of a domain outside the standard ones that no op set defines passes unless
    ``check_custom_domain``. ``skip_opset_compatibility_check`` is accepted for onnx's
    signature and changes nothing: no such check is made. A path's external data must lie
    in the model's folder. The model is never changed. Unreadable input raises
    :class:`~opspec.runtime.ir.ModelLoadError`. ``op_set`` is what nodes are checked against
    (None: the installed op set).
    """
    from opspec.runtime.checker import check_model as check_everything
    from opspec.runtime.checker.codes import node_code
    from opspec.runtime.ir import load_model

    del skip_opset_compatibility_check
    path = model if isinstance(model, (str, os.PathLike)) else None
    checked = check_everything(load_model(model).model, path, op_set=op_set)
    nodes = [problem for problem in checked.nodes
             if (full_check or node_code(problem) in SCHEMA_CODES)
             and (check_custom_domain or node_code(problem) != "unknown-op" or problem.domain in BUILT_IN_DOMAINS)]
    problems = [*checked.structure, *nodes]
    if problems:
        raise ValidationError(problems)


__all__ = ["BUILT_IN_DOMAINS", "SCHEMA_CODES", "ValidationError", "check_model"]
