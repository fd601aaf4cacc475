"""Where ``onnx.checker.check_model(full_check=True)`` rejects a model that is valid, and
``opspec check`` accepts it: each case with the start of onnx's message and the reason.

The tests build a model for each case, hold that onnx rejects it and that onnxruntime
runs it, and excuse exactly these rejections when comparing the two checkers.
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


def excused(onnx_message: str) -> OnnxOverstrict | None:
    """The listed case an onnx rejection is, or None."""
    for case in ONNX_OVERSTRICT:
        if re.match(case.onnx_message, onnx_message):
            return case
    return None


__all__ = ["ONNX_OVERSTRICT", "OnnxOverstrict", "excused"]
