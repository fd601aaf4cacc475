"""Where opspec and the references part ways on purpose.

``ONNX_OVERSTRICT``: where ``onnx.checker.check_model(full_check=True)`` rejects a model
that is valid, and ``opspec check`` accepts it: each case with the start of onnx's message
and the reason. The tests build a model for each case, hold that onnx rejects it and that
onnxruntime runs it, and excuse exactly these rejections when comparing the two checkers.

``ONNX_LAX``: kinds of invalid model ``onnx.checker.check_model(full_check=True)`` accepts and
``opspec check`` refuses, each with the codes (and a pattern of the message) of opspec's
problem and the reason. The tests excuse exactly these when onnx accepts a malformed model.

``ONNXRUNTIME_LAX``: attribute limits onnx's operator documentation states which
onnxruntime does not enforce: opspec refuses a node breaking one although onnxruntime runs
it. The tests hold, for each row, that onnxruntime runs such a node and opspec refuses it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class OnnxOverstrict:
    """One kind of valid model onnx's checker rejects."""

    name: str
    onnx_message: str  # a regular expression matching the start of onnx's message
    reason: str


ONNX_OVERSTRICT = (
    OnnxOverstrict(
        "graph input or output without a shape", r"Field 'shape' of 'type' is required but missing",
        "the IR makes a tensor type's shape optional (absent: the rank is unknown); exporters and onnxruntime's own "
        "tools write graph outputs so, and onnxruntime runs them"),
    OnnxOverstrict(
        "an onnxruntime operator in the default domain", r"No Op registered for \w+ with domain_version of \d+",
        "onnxruntime registers operators of its own in the default domain (SimplifiedLayerNormalization, "
        "SkipSimplifiedLayerNormalization...); opspec checks them against onnxruntime's schemas"),
    OnnxOverstrict(
        "a MeanVarianceNormalization node",
        r"\[ShapeInferenceError\] Inference error\(s\): \(op_type:MeanVarianceNormalization\): .*"
        r"\(op_type:Constant\): .*One and only one of the attributes",
        "onnx checks the op through its function body, whose Constant node its full check finds without a value; "
        "the node is valid (onnx's node suite holds it) and onnxruntime runs it"),
)


@dataclass(frozen=True)
class DocumentedLimit:
    """An attribute limit onnx documents and onnxruntime lets pass."""

    op: str
    attribute: str
    limit: str
    reason: str


_LOSS_REDUCTION = ("one of none, sum, mean", "the loss is documented for these three reductions only")
_SCATTER_REDUCTION = ("one of none, add, mul (from version 18 also max, min)",
                      "the reductions are listed per version; max and min arrived with version 18")
_BOOLEAN = ("0 or 1", "the attribute is documented as a boolean")

ONNXRUNTIME_LAX = (
    DocumentedLimit("Attention", "qk_matmul_output_mode", "one of 0, 1, 2, 3",
                    "each documented mode names a stage of the score matrix; no other stage exists"),
    DocumentedLimit("Col2Im", "pads", "every entry >= 0",
                    "the padding is documented as a count of added pixels, never negative"),
    DocumentedLimit("NegativeLogLikelihoodLoss", "reduction", *_LOSS_REDUCTION),
    DocumentedLimit("RoiAlign", "coordinate_transformation_mode", "one of half_pixel, output_half_pixel",
                    "only the shifted and the unshifted mapping are documented"),
    DocumentedLimit("ScatterElements", "reduction", *_SCATTER_REDUCTION),
    DocumentedLimit("ScatterND", "reduction", *_SCATTER_REDUCTION),
    DocumentedLimit("SoftmaxCrossEntropyLoss", "reduction", *_LOSS_REDUCTION),
    DocumentedLimit("StringNormalizer", "is_case_sensitive", *_BOOLEAN),
    DocumentedLimit("Trilu", "upper", *_BOOLEAN),
    DocumentedLimit("Unique", "sorted", "0 or 1", "the documentation allows exactly these two values"),
)


@dataclass(frozen=True)
class OnnxLax:
    """One kind of invalid model onnx's checker accepts and ``opspec check`` refuses."""

    name: str
    codes: tuple[str, ...]  # the codes of opspec's problems
    message: str  # a regular expression searched in opspec's message
    reason: str


ONNX_LAX = (
    OnnxLax("an attribute value outside the limits the operator documents", ("attribute-value",), "",
            "the value breaks a limit of the operator's documentation; onnx's checker looks at attribute types, "
            "not values, and its inference rules at some values only"),
    OnnxLax("a shape or value an operator cannot take, which onnx's rule does not look at", ("inference",), "",
            "opspec's rule checks what the operator's definition requires of its inputs (a rank, a count, a "
            "sum) where onnx's rule passes it by; no input of that shape can run"),
    OnnxLax("a declared type or shape that opspec's inference proves wrong where onnx's knows less",
            ("declared-conflict",), "",
            "opspec propagates shapes and small tensors further (symbols, data through Shape, Concat, Reshape); "
            "a declaration it proves wrong is wrong whatever onnx leaves unknown"),
    OnnxLax("an opset version beyond the newest one defined", ("opset-version",), "beyond the newest",
            "no operator of that version exists to check the nodes against; onnx looks each node up at the "
            "newest version below it, which says nothing of what the model's writer meant"),
    OnnxLax("a domain imported at two versions", ("opset-import",), "at two versions",
            "the nodes of the domain would follow two definitions at once; onnx and onnxruntime take one of the "
            "two silently (the same import written twice says nothing new and passes)"),
    OnnxLax("a value_info entry without a name", ("value-info",), "value_info entry has no name",
            "it declares the type of no value; onnx even gives its type to an omitted optional input"),
    OnnxLax("a graph input whose element type is UNDEFINED or no ONNX data type", ("value-info",),
            "element type", "no tensor of such a type can be fed; onnx rejects it as soon as a node reads the "
            "input, opspec also where none does"),
    OnnxLax("a value of a variadic input omitted", ("node-arity",), "cannot be omitted",
            "every value of a variadic input is required; onnx passes an omitted last one, which onnxruntime "
            "fails to run"),
    OnnxLax("a stored tensor whose data does not fit its dims or data type", ("tensor-data-count", "tensor-data-field"),
            "", "the tensor cannot be read as it says; onnx's checker only finds out where its inference reads it"),
)


def lax_kind(problem: Any) -> OnnxLax | None:
    """The listed kind a problem opspec reports (and onnx's checker lets pass) is, or None."""
    from opspec.runtime.checker.codes import node_code

    code = problem.code if hasattr(problem, "code") else node_code(problem)
    message = problem.message
    for case in ONNX_LAX:
        if code in case.codes and re.search(case.message, message):
            return case
    return None


def excused(onnx_message: str) -> OnnxOverstrict | None:
    """The listed case an onnx rejection is, or None."""
    for case in ONNX_OVERSTRICT:
        if re.match(case.onnx_message, onnx_message):
            return case
    return None


__all__ = ["DocumentedLimit", "ONNXRUNTIME_LAX", "ONNX_LAX", "ONNX_OVERSTRICT", "OnnxLax", "OnnxOverstrict", "excused",
           "lax_kind"]
