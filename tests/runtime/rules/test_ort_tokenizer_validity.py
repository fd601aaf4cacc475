"""Tokenizer's attributes as onnxruntime's kernel checks them: separators (non-empty) or else a
non-empty tokenexp, mincharnum at least 1, and 1 when splitting into single characters. Each
refused node is held against onnxruntime's refusal, each neighbour against its run."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from ort_oracle import Case, In, check, check_model  # noqa: E402
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


def text_pipeline():
    """skl2onnx's text vectorizer: the (N, 1) strings flattened, tokenized, flattened again and counted."""
    nodes = [
        helper.make_node("Reshape", ["in0", "flat_shape"], ["out0"]),
        helper.make_node("Tokenizer", ["out0"], ["out1"], domain=MS, mark=0, mincharnum=1, pad_value="#",
                         tokenexp="[a-zA-Z0-9_]+"),
        helper.make_node("Flatten", ["out1"], ["out2"]),
        helper.make_node("TfIdfVectorizer", ["out2"], ["out3"], min_gram_length=1, max_gram_length=1, mode="TF",
                         max_skip_count=0, pool_strings=["ab", "cd", "e"], ngram_indexes=[0, 1, 2], ngram_counts=[0],
                         weights=[1.0, 1.0, 1.0]),
    ]
    graph = helper.make_graph(nodes, "text", [helper.make_tensor_value_info("in0", STRING, ["N", 1])],
                              [helper.make_value_info(f"out{i}", helper.TypeProto()) for i in range(4)],
                              [helper.make_tensor("flat_shape", TensorProto.INT64, [1], [-1])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)],
                             ir_version=9)


def test_text_pipeline_never_states_a_wrong_shape():
    # the Tokenizer alone gives (0,) for an empty batch and (N, D) for any other, so with N symbolic
    # its rank stays unknown (TfIdfVectorizer then refuses the empty batch, which no node alone says)
    case = Case("Tokenizer", MS, [In(STRING, ("N", 1), fill=words)], outputs=4)
    verdict = check_model(text_pipeline(), case, [{"N": 3}, {"N": 1}])
    assert verdict.problems == []
    counts = verdict.inferred[3][1]
    assert verdict.inferred[1] == (STRING, None) and counts is not None and counts[-1] == 3
    alone = check(Case("Tokenizer", MS, [In(STRING, ("N",), fill=words)], {"mark": 0, "pad_value": "#",
                                                                            "mincharnum": 1, "tokenexp": "[a-z]+"}),
                  [{"N": 0}, {"N": 2}])
    assert alone.problems == [] and [len(run[0][1]) for run in alone.runs] == [1, 2]
