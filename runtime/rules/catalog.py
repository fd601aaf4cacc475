"""The vocabulary of inference rules: each rule's name, purpose and parameters.

This table is what opdefs may reference (``inference: reduce``) and what the compiler
checks references against; the implementations register themselves against these names
(see :mod:`opspec.runtime.rules`). A parameter names an input or attribute of the op
(with a conventional default) or carries a plain value.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

#: Parameter kinds: which part of the operator a parameter's value must name.
NAMES_INPUT = "input"
NAMES_ATTRIBUTE = "attribute"
NAMES_INPUT_OR_ATTRIBUTE = "input_or_attribute"
PLAIN_KINDS = {"int": int, "bool": bool, "string": str}


@dataclass(frozen=True)
class RuleParam:
    """One parameter of a rule.

    For the naming kinds the value is a name in the op; ``required`` means the op must
    have it, otherwise the rule copes when the op lacks it.
    """

    name: str
    kind: str
    default: Any = None
    required: bool = False
    choices: tuple[Any, ...] | None = None
    doc: str = ""


@dataclass(frozen=True)
class RuleSpec:
    """A rule's signature and one-line purpose."""

    name: str
    summary: str
    params: tuple[RuleParam, ...] = ()

    def param(self, name: str) -> RuleParam | None:
        return next((p for p in self.params if p.name == name), None)


#: Element functions a rule may apply to known data (data propagation).
UNARY_COMPUTE = ("identity", "cast", "neg", "abs", "floor", "ceil", "sqrt", "reciprocal", "not")
BINARY_COMPUTE = ("add", "sub", "mul", "div", "pow", "max", "min", "equal", "less", "greater", "and", "or",
                  "where")


def _attr(name: str, required: bool = False, default: str | None = None) -> RuleParam:
    return RuleParam(name, NAMES_ATTRIBUTE, default or name, required)


def _input(name: str, required: bool = False, default: str | None = None) -> RuleParam:
    return RuleParam(name, NAMES_INPUT, default or name, required)


def _either(name: str, required: bool = False) -> RuleParam:
    return RuleParam(name, NAMES_INPUT_OR_ATTRIBUTE, name, required)


#: Versions that predate negative (counted from the back) axes say so with this argument.
_NEGATIVE_AXES = RuleParam("negative_axes", "bool", True, doc="whether negative axes count from the back "
                           "(false: they are an error)")


_RULES = (
    RuleSpec("elementwise", "Every output takes the shape of the first input.",
             (RuleParam("dtype", NAMES_ATTRIBUTE, None,
                        doc="attribute holding the output element type (as Cast's 'to')"),
              RuleParam("compute", "string", None, choices=UNARY_COMPUTE,
                        doc="how known input data maps to output data, for data propagation"))),
    RuleSpec("broadcast", "Outputs take the numpy-style broadcast of all inputs' shapes.",
             (RuleParam("compute", "string", None, choices=BINARY_COMPUTE,
                        doc="how known input data combines into output data, for data propagation"),)),
    RuleSpec("broadcast_legacy",
             "Second input broadcast onto the first when 'broadcast' is set, aligned at 'axis'.",
             (_attr("broadcast"), _attr("axis"))),
    RuleSpec("same_shape", "All inputs must share one shape, which every output takes."),
    RuleSpec("reduce", "Reduce the listed axes (all when none), keeping them as 1 if keepdims.",
             (_either("axes"), _attr("keepdims"), _attr("noop_with_empty_axes"))),
    RuleSpec("arg_reduce", "Reduce one axis to its arg-max or arg-min index.",
             (_attr("axis"), _attr("keepdims"))),
    RuleSpec("reshape", "New shape from the shape input or attribute; 0 copies, -1 infers.",
             (_either("shape", required=True), _attr("allowzero"))),
    RuleSpec("flatten", "Collapse to 2-D around 'axis'.", (_attr("axis"), _NEGATIVE_AXES)),
    RuleSpec("transpose", "Permute the dimensions ('perm', reversed when absent).", (_attr("perm"),)),
    RuleSpec("concat", "Join inputs along 'axis'.", (_attr("axis", required=True), _NEGATIVE_AXES)),
    RuleSpec("split", "Cut the input into the outputs along 'axis'.",
             (_attr("axis"), _either("split"), _attr("num_outputs"), _NEGATIVE_AXES)),
    RuleSpec("slice", "Take a strided window along some axes.",
             (_either("starts", required=True), _either("ends", required=True), _either("axes"),
              _input("steps"), _NEGATIVE_AXES)),
    RuleSpec("squeeze", "Drop the listed axes of size 1 (all size-1 axes when none).",
             (_either("axes"), _NEGATIVE_AXES)),
    RuleSpec("unsqueeze", "Insert size-1 axes at the listed output positions.",
             (_either("axes", required=True), _NEGATIVE_AXES)),
    RuleSpec("gather", "Replace the 'axis' dimension of data with the shape of indices.", (_attr("axis"),)),
    RuleSpec("expand", "Broadcast the input against the requested shape.", (_input("shape", required=True),)),
    RuleSpec("shape", "A 1-D int64 tensor holding (a slice of) the input's shape.",
             (_attr("start"), _attr("end"))),
    RuleSpec("size", "A scalar int64 holding the input's element count."),
    RuleSpec("constant", "The type and shape of whichever value attribute is set."),
    RuleSpec("constant_of_shape", "A tensor of the requested shape filled with 'value'.",
             (_input("input", required=True), _attr("value"))),
    RuleSpec("range", "A 1-D tensor of ceil((limit - start) / delta) elements."),
    RuleSpec("conv", "Convolution output size from kernel, pads, strides, dilations, auto_pad.",
             (_attr("kernel_shape"), _attr("pads"), _attr("strides"), _attr("dilations"),
              _attr("auto_pad"), _attr("group"))),
    RuleSpec("pool", "Pooling output size from kernel, pads, strides, dilations, auto_pad, ceil_mode.",
             (_attr("kernel_shape", required=True), _attr("pads"), _attr("strides"), _attr("dilations"),
              _attr("auto_pad"), _attr("ceil_mode"))),
    RuleSpec("global_pool", "Every spatial dimension pooled down to 1."),
    RuleSpec("batch_norm", "Y takes X's shape; statistics outputs take the channel count."),
    RuleSpec("layer_norm", "Y takes X's shape; statistics keep the leading axes before 'axis'.",
             (_attr("axis"), _attr("stash_type"))),
    RuleSpec("matmul", "numpy.matmul shapes: batched, with 1-D operands promoted and dropped."),
    RuleSpec("gemm", "(M, K) x (K, N) with optional transposes; C broadcasts onto the result.",
             (_attr("transA"), _attr("transB"))),
)

RULES: Mapping[str, RuleSpec] = {rule.name: rule for rule in _RULES}
