"""Tokenizer's attributes as onnxruntime's kernel checks them: separators (non-empty) or else a
non-empty tokenexp, mincharnum at least 1, and 1 when splitting into single characters. Each
refused node is held against onnxruntime's refusal, each neighbour against its run."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from ort_oracle import Case, In  # noqa: E402
from ort_validity import assert_accepted_by_both, assert_refused_by_both  # noqa: E402

STRING = TensorProto.STRING
MS = "com.microsoft"


def words(shape, rng):
    return rng.choice(np.array(["ab cd", "e", "fgh ij kl"], dtype=object), shape)


def tokenizer(**attributes) -> Case:
    return Case("Tokenizer", MS, [In(STRING, ("N", 3), fill=words)],
                {"mark": 0, "pad_value": "#", "mincharnum": 1, **attributes})


SETTINGS = [{"N": 2}]


@pytest.mark.parametrize("attributes, match", [
    ({}, "neither separators nor tokenexp"),
    ({"tokenexp": ""}, "tokenexp is empty"),
    ({"separators": [""], "mincharnum": 2}, "mincharnum = 2"),
    ({"tokenexp": ".", "mincharnum": 3}, "mincharnum = 3"),
    ({"tokenexp": "[a-z]+", "mincharnum": 0}, "mincharnum"),
])
def test_tokenizer_attributes_onnxruntime_refuses(attributes, match):
    assert_refused_by_both(tokenizer(**attributes), match, SETTINGS)


@pytest.mark.parametrize("attributes", [
    {"tokenexp": "[a-z]+"},
    {"tokenexp": "[a-z]+", "mincharnum": 3},
    {"separators": [" "], "mincharnum": 2},
    {"separators": [""]},
    {"tokenexp": "."},
    {"separators": [" "], "tokenexp": ""},  # separators win; tokenexp is not read
])
def test_tokenizer_attributes_onnxruntime_runs(attributes):
    assert_accepted_by_both(tokenizer(**attributes), SETTINGS)
