"""Helpers shared by the rule tests: contexts built as the engine builds them, rules run by name."""
from __future__ import annotations

from typing import Any

import opspec
import opspec.onnxruntime
from opspec.runtime.contract import Data, InferenceContext, TensorType
from opspec.runtime.inference.engine import OpEntry, _bind
from opspec.runtime.rulebook import RULES

FLOAT, INT32, INT64 = 1, 6, 7


def rule_args(schema: Any) -> dict:
    """The rule's arguments for ``schema`` as the engine passes them: declared defaults, then the YAML's."""
    spec = RULES.spec(schema.inference.name)
    assert spec is not None, schema.inference.name
    args = spec.defaults()
    args.update(schema.inference.args)
    return args


def make_context(schema: Any, inputs: list, attributes: dict | None = None, *, prebind: bool = False,
                 **kwargs: Any) -> InferenceContext:
    """A context for ``schema``; ``prebind`` gives outputs their type-parameter bindings as the engine does."""
    ctx = InferenceContext(schema, list(inputs), dict(attributes or {}), args=rule_args(schema), **kwargs)
    if prebind:
        plan = OpEntry(0, schema).plan(len(ctx._inputs), ctx.output_count)
        for position, (sources, fixed) in enumerate(plan):
            ctx.set_output(position, _bind(ctx._inputs, sources, fixed))
    return ctx


def apply_rule(ctx: InferenceContext) -> InferenceContext:
    """Run the schema's rule on ``ctx`` (exceptions propagate) and return ``ctx``."""
    assert ctx.schema.inference is not None, ctx.schema
    rule = RULES.lookup(ctx.schema.inference.name)
    assert rule is not None, ctx.schema.inference.name
    rule(ctx)
    return ctx


def run(op: str, version: int | None, inputs: list, attributes: dict | None = None, *, domain: str = "",
        prebind: bool = True, **kwargs: Any) -> InferenceContext:
    """Run ``op``'s rule at ``version`` on ``inputs`` and return the context.

    Schemas come from ``opspec.onnxruntime``: the standard set plus onnxruntime's operators.
    """
    schema = opspec.onnxruntime.get_schema(op, version, domain)
    return apply_rule(make_context(schema, inputs, attributes, prebind=prebind, **kwargs))


def t(*shape: Any, elem: int = FLOAT) -> TensorType:
    """A tensor type; ``t(None)`` has unknown rank."""
    return TensorType(elem, None if shape == (None,) else tuple(shape))


def vec(*values: Any) -> Data:
    """Known 1-D data."""
    return Data((len(values),), tuple(values))
