"""A node shown to a standard rule with its operands rearranged.

onnxruntime gives several operators the arithmetic of a standard one on rearranged operands:
channels-last convolutions and pools are a standard op on the channels-first view of their
data, ``FusedMatMul`` is ``MatMul`` on transposed operands. :class:`OperandView` is the
context such a rule hands to the standard rule: the same schema, attributes and symbol
source, but the input types the caller chooses, and outputs of its own that the caller reads
back and rearranges. A view carries no input data: the rearranged operands' contents are not
what the standard rule would expect.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from opspec.runtime.contract import InferenceContext, rule_spec


def rule_defaults(function: Callable, **overrides: Any) -> dict[str, Any]:
    """The arguments the engine would give ``function`` (a declared rule), with ``overrides`` (None: keep)."""
    args = rule_spec(function).defaults()
    args.update({key: value for key, value in overrides.items() if value is not None})
    return args


class OperandView(InferenceContext):
    """``outer``'s node showing its inputs ``positions`` (in that order) with the types ``inputs``.

    Every output starts as the engine bound it on ``outer``; the caller copies the view's
    outputs back once the standard rule has run.
    """

    __slots__ = ("_outer",)

    def __init__(self, outer: InferenceContext, positions: Sequence[int], inputs: Sequence,
                 args: Mapping[str, Any]) -> None:
        schema = outer.schema
        attributes = {name: outer.attribute(name) for name in schema.attributes if outer.has_attribute(name)}
        present = ["operand" if outer.has_input(index) else "" for index in positions]
        super().__init__(schema, list(inputs), attributes, args=args, names=present, node_name=outer.node_name,
                         opset=outer.opset, output_count=outer.output_count)
        self._outer = outer
        for index in range(outer.output_count):
            self.set_output(index, outer.output_type(index))

    def fresh_dim(self):
        """A new symbol from the node's own graph."""
        return self._outer.fresh_dim()
