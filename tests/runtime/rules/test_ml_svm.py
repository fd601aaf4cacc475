"""SVMClassifier's score columns, held against onnxruntime's CPU kernel: one per class for a linear
model or with Platt coefficients, else one decision value per class pair (two for two classes)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from opspec.runtime.shape import Sym

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from ort_oracle import F, I64, Case, In, check  # noqa: E402

ML = "ai.onnx.ml"
N = Sym("N")
FEATURES = 3
SETTINGS = [{"N": 2}, {"N": 5}]


def svc(classes: int, *, platt: bool = False, strings: bool = False) -> dict:
    """A support-vector model with one support vector per class."""
    pairs = classes * (classes - 1) // 2
    attributes: dict = {"vectors_per_class": [1] * classes, "support_vectors": [0.5] * (classes * FEATURES),
                        "coefficients": [0.25] * ((classes - 1) * classes), "rho": [0.1] * pairs,
                        "kernel_type": "RBF", "kernel_params": [0.5, 0.0, 3.0]}
    if platt:
        attributes.update(prob_a=[-1.0] * pairs, prob_b=[0.1] * pairs)
    labels = [f"c{i}" for i in range(classes)] if strings else list(range(classes))
    attributes["classlabels_strings" if strings else "classlabels_ints"] = labels
    return attributes


def linear(classes: int) -> dict:
    return {"classlabels_ints": list(range(classes)), "coefficients": [0.5] * (classes * FEATURES), "rho": [0.0],
            "kernel_type": "LINEAR", "kernel_params": [0.0, 0.0, 0.0]}


@pytest.mark.parametrize("attributes, columns", [
    (linear(3), 3),
    (linear(2), 2),
    (svc(4), 6),
    (svc(3), 3),
    (svc(2), 2),
    (svc(4, platt=True), 4),
    (svc(3, platt=True, strings=True), 3),
])
def test_svm_classifier_score_columns_against_onnxruntime(attributes, columns):
    case = Case("SVMClassifier", ML, [In(F, ("N", FEATURES))], attributes, outputs=2)
    verdict = check(case, SETTINGS)
    assert verdict.problems == []
    assert verdict.inferred[1] == (F, (N, columns))
    label = 8 if "classlabels_strings" in attributes else I64
    assert verdict.inferred[0] == (label, (N,))
