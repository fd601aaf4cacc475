"""Tests for the text rules that split strings and count n-grams: StringSplit and TfIdfVectorizer."""
from __future__ import annotations

import pytest

from opspec.runtime.contract import InferenceError
from opspec.runtime.shape import Sym, SymbolTable
from opspec.runtime.testing import FLOAT, INT32, INT64, run_rule, t

STRING = 8
N, C = Sym("N"), Sym("C")


def split(x):
    ctx = run_rule("StringSplit", 20, [x], {}, names=["x"], output_count=2, symbols=SymbolTable(("N",)))
    return ctx.output_type(0), ctx.output_type(1)


def test_string_split_adds_an_axis_as_long_as_the_most_substrings():
    substrings, counts = split(t(N, 3, elem=STRING))
    assert substrings.elem == STRING and substrings.shape[:2] == (N, 3)
    assert type(substrings.shape[2]) is Sym and substrings.shape[2] != N  # a fresh name: only data tells
    assert counts == t(N, 3, elem=INT64)


def test_string_split_of_no_strings_pads_to_nothing():
    assert split(t(0, elem=STRING)) == (t(0, 0, elem=STRING), t(0, elem=INT64))
    assert split(t(N, 0, elem=STRING)) == (t(N, 0, 0, elem=STRING), t(N, 0, elem=INT64))


def test_string_split_of_an_unknown_input():
    assert split(None) == (t(None, elem=STRING), t(None, elem=INT64))


POOL = {"max_gram_length": 2, "max_skip_count": 0, "min_gram_length": 2, "mode": "TF",
        "ngram_counts": [0, 4], "ngram_indexes": [0, 1, 2, 3, 4, 6], "pool_int64s": [2, 3, 5, 4, 5, 6, 7, 8, 6, 7]}


def test_tfidf_vectorizer_has_one_feature_per_output_position():
    assert run_rule("TfIdfVectorizer", 9, [t(12, elem=INT32)], POOL).output_type(0) == t(7, elem=FLOAT)
    assert run_rule("TfIdfVectorizer", 9, [t(N, C, elem=INT64)], POOL).output_type(0) == t(N, 7, elem=FLOAT)
    assert run_rule("TfIdfVectorizer", 9, [None], POOL, names=["x"]).output_type(0) == t(None, elem=FLOAT)
    strings = {**POOL, "pool_int64s": None, "pool_strings": [b"a", b"b"]}
    assert run_rule("TfIdfVectorizer", 9, [t(5, elem=STRING)], strings).output_type(0) == t(7, elem=FLOAT)


@pytest.mark.parametrize("x,changes,message", [
    (t(2, 3, 4, elem=INT64), {}, r"must be \[C\] or \[N, C\]"),
    (t(4, elem=INT64), {"ngram_indexes": [0, -1]}, "no negative index"),
    (t(4, elem=INT64), {"ngram_indexes": []}, "must be non-empty"),
    (t(4, elem=INT64), {"ngram_indexes": [2 ** 63 - 1]}, "does not fit"),
    (t(4, elem=INT64), {"pool_int64s": None}, "neither pool_int64s nor pool_strings"),
    (t(4, elem=STRING), {"pool_int64s": []}, "neither pool_int64s nor pool_strings"),
])
def test_tfidf_vectorizer_rejects_invalid_nodes(x, changes, message):
    with pytest.raises(InferenceError, match=message):
        run_rule("TfIdfVectorizer", 9, [x], {**POOL, **changes})


@pytest.mark.parametrize("elem, pools", [
    (STRING, {"pool_int64s": [1, 2]}),  # a pool of the other kind: nothing matches, the counts are 0
    (INT64, {"pool_strings": ["a", "b"]}),
    (INT32, {"pool_strings": ["a", "b"]}),
    (INT64, {"pool_strings": ["a", "b"], "pool_int64s": [1, 2]}),  # both pools
    (STRING, {}),  # neither: refused by both
    (INT64, {}),
])
def test_tfidf_vectorizer_is_as_strict_as_onnxruntime(elem, pools):
    """onnx's text asks for one pool of the input's kind; onnxruntime refuses only a node with no pool."""
    import numpy as np
    from onnx import TensorProto, helper

    ort = pytest.importorskip("onnxruntime")
    ort.set_default_logger_severity(3)
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], max_gram_length=1, min_gram_length=1, max_skip_count=0,
                            mode="TF", ngram_counts=[0], ngram_indexes=[0, 1], **pools)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", elem, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 8
    feed = np.array(["a", "b", "c", "d"], object) if elem == STRING else np.arange(4).astype(
        helper.tensor_dtype_to_np_dtype(elem))
    try:
        ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": feed})
        runs = True
    except Exception:  # noqa: BLE001 - a refusal is the answer
        runs = False
    assert runs == bool(pools)
    attributes = {"max_gram_length": 1, "min_gram_length": 1, "max_skip_count": 0, "mode": "TF",
                  "ngram_counts": [0], "ngram_indexes": [0, 1], "pool_int64s": None, "pool_strings": None,
                  **{name: [v.encode() if isinstance(v, str) else v for v in values] for name, values in pools.items()}}
    if runs:
        assert run_rule("TfIdfVectorizer", 9, [t(4, elem=elem)], attributes).output_type(0) == t(2, elem=FLOAT)
    else:
        with pytest.raises(InferenceError, match="neither pool_int64s nor pool_strings"):
            run_rule("TfIdfVectorizer", 9, [t(4, elem=elem)], attributes)
