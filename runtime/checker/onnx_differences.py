"""Where opspec and the references part ways on purpose.

``ONNX_OVERSTRICT``: where ``onnx.checker.check_model(full_check=True)`` rejects a model
that is valid, and ``opspec check`` accepts it: each case with the start of onnx's message
and the reason. The tests build a model for each case, hold that onnx rejects it and that
onnxruntime runs it, and excuse exactly these rejections when comparing the two checkers.

``ONNXRUNTIME_LAX``: attribute limits onnx's operator documentation states which
onnxruntime does not enforce: opspec refuses a node breaking one although onnxruntime runs
it. The tests hold, for each row, that onnxruntime runs such a node and opspec refuses it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


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


def excused(onnx_message: str) -> OnnxOverstrict | None:
    """The listed case an onnx rejection is, or None."""
    for case in ONNX_OVERSTRICT:
        if re.match(case.onnx_message, onnx_message):
            return case
    return None


__all__ = ["DocumentedLimit", "ONNXRUNTIME_LAX", "ONNX_OVERSTRICT", "OnnxOverstrict", "excused"]
