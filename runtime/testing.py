"""Running one inference rule by hand, as the graph walk runs it: the helper for rule tests.

::

    from opspec.runtime.testing import run_rule, t, vec

    ctx = run_rule("Reshape", 14, [t(2, 3), t(2, elem=INT64)], data=[None, vec(3, 2)])
    assert ctx.output_type(0) == t(3, 2)

:func:`run_rule` looks the schema up (the standard operators and onnxruntime's, as
inference sees them), builds the :class:`InferenceContext` the walk would build (the
rule's arguments with their declared defaults, output types pre-bound from the inputs'
type parameters) and calls the rule. Each takes an ``op_set`` (None: the installed one) to
look schemas and rules up in. Exceptions propagate, so a test sees a rule's
:class:`InferenceError` (or its bug) directly. For finer control, :func:`make_context`
builds the context without running anything and :func:`apply_rule` runs the rule on it.
"""
from __future__ import annotations

from typing import Any

from opspec.runtime.contract import Data, InferenceContext, TensorType
from opspec.runtime.contract.elements import FLOAT, INT32, INT64
from opspec.runtime.inference.resolve import bind_output, schema_entry
from opspec.runtime.op_set import OpSet, op_set_or_installed
from opspec.runtime.schema import OpSchema


def rule_args(schema: OpSchema, op_set: OpSet | None = None) -> dict[str, Any]:
    """The rule's arguments for ``schema`` as the walk passes them: declared defaults, then the schema's."""
    return dict(schema_entry(schema, op_set_or_installed(op_set).rules).args)


def make_context(schema: OpSchema, inputs: list[Any], attributes: dict[str, Any] | None = None, *,
                 prebind: bool = False, op_set: OpSet | None = None, **kwargs: Any) -> InferenceContext:
    """A context for ``schema``'s rule over ``inputs`` (value types, None for unknown).

    ``prebind`` gives outputs their type-parameter bindings as the walk does; ``kwargs``
    go to :class:`InferenceContext` (``data``, ``output_count``, ``symbols``, ...).
    """
    rules = op_set_or_installed(op_set).rules
    ctx = InferenceContext(schema, list(inputs), dict(attributes or {}), args=dict(schema_entry(schema, rules).args),
                           **kwargs)
    if prebind:
        plan = schema_entry(schema, rules).plan(ctx.input_count, ctx.output_count)
        for position, (sources, fixed) in enumerate(plan):
            ctx.set_output(position, bind_output(ctx.input_types, sources, fixed))
    return ctx


def apply_rule(ctx: InferenceContext, op_set: OpSet | None = None) -> InferenceContext:
    """Run the schema's rule on ``ctx`` (exceptions propagate) and return ``ctx``. The rule runs
    on its own, without the check of attribute constraints in front of it (that check has its
    own tests), so rule tests hold the rule's own refusals."""
    inference = ctx.schema.inference
    rule = op_set_or_installed(op_set).rules.lookup(inference.name) if inference is not None else None
    if rule is None:
        raise LookupError(f"{ctx.schema.name} has no inference rule")
    getattr(rule, "__wrapped__", rule)(ctx)
    return ctx


def run_rule(op: str, version: int | None, inputs: list[Any], attributes: dict[str, Any] | None = None, *,
             domain: str = "", prebind: bool = True, op_set: OpSet | None = None, **kwargs: Any) -> InferenceContext:
    """Run ``op``'s rule at opset ``version`` (None: the newest) on ``inputs``; return the context.

    Read the results with ``ctx.output_type(i)`` and ``ctx.output_data(i)``.
    """
    op_set = op_set_or_installed(op_set)
    schema = op_set.registry.get_schema(op, version, domain)
    return apply_rule(make_context(schema, inputs, attributes, prebind=prebind, op_set=op_set, **kwargs), op_set)


def t(*shape: Any, elem: int = FLOAT) -> TensorType:
    """A tensor type; ``t(None)`` has unknown rank."""
    return TensorType(elem, None if shape == (None,) else tuple(shape))


def vec(*values: Any) -> Data:
    """Known 1-D data."""
    return Data((len(values),), tuple(values))


__all__ = ["FLOAT", "INT32", "INT64", "apply_rule", "make_context", "rule_args", "run_rule", "t", "vec"]
