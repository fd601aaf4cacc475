"""Tests for onnxruntime's generation rules: BeamSearch, WhisperBeamSearch, GreedySearch, Sampling and
NGramRepeatBlock.

NGramRepeatBlock runs in onnxruntime's CPU provider and is held against it; so are BeamSearch,
GreedySearch and Sampling with a small decoder-only (GPT-2 style) decoder subgraph. The other
cases follow onnxruntime's inference functions (which read max_length, num_beams and
num_return_sequences from initializers), answering less where they state nothing sound:
sequences_scores is (batch, num_return_sequences) here, scores gets a first dim only for
decoder-only models, and Sampling's filtered_logits, which runs leave without dims, stays unknown.
WhisperBeamSearch and encoder-decoder models are tested by their rule only.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from opspec.runtime.contract import InferenceError
from opspec.runtime.shape import Sym
from opspec.runtime.testing import FLOAT, INT32, INT64, run_rule, t, vec

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from ort_oracle import F, I32, I64, Case, Const, In, check  # noqa: E402
from ort_validity import assert_accepted_by_both, assert_refused_by_both  # noqa: E402

B, S = Sym("B"), Sym("S")
DECODER = helper.make_graph([], "decoder", [], [])
IDS = {"eos_token_id": 2, "pad_token_id": 0}


def outputs(op, inputs, data, attributes=None, count=1):
    names = ["" if item is None else f"in{i}" for i, item in enumerate(inputs)]
    ctx = run_rule(op, 1, inputs, {**IDS, **(attributes or {})}, domain="com.microsoft", output_count=count,
              names=names, data=data)
    return [ctx.output_type(i) for i in range(count)]


def beam_inputs(ids=t(B, S, elem=INT32)):
    one = t(1, elem=INT32)
    return [ids, one, None, one, one, t(1)]


def test_beam_search_from_known_counts():
    found = outputs("BeamSearch", beam_inputs(), [None, vec(20), None, vec(4), vec(2)], count=3)
    assert found[0] == t(B, 2, 20, elem=INT32)
    assert found[1] == t(B, 2)
    assert found[2] == t(20 - S, B, 4, None)
    scores = outputs("BeamSearch", beam_inputs(), [None, vec(20), None, vec(4), vec(2)], {"vocab_size": 50}, 3)[2]
    assert scores == t(20 - S, B, 4, 50)


def test_beam_search_counts_present_but_unknown():
    """Soundness: counts the graph computes at run time leave their dims unknown."""
    found = outputs("BeamSearch", beam_inputs(), [None, None, None, vec(4), None], count=3)
    assert found == [t(B, None, None, elem=INT32), t(B, None), t(None, B, 4, None)]


def test_beam_search_encoder_decoder_scores_steps_unknown():
    data = [None, vec(20), None, vec(4), vec(2)]
    assert outputs("BeamSearch", beam_inputs(), data, {"model_type": 1}, 3)[2] == t(None, B, 4, None)


def test_beam_search_errors():
    with pytest.raises(InferenceError, match="2-D"):
        outputs("BeamSearch", beam_inputs(t(B, S, 1, elem=INT32)), [None] * 5)
    with pytest.raises(InferenceError, match="max_length must be a positive"):
        outputs("BeamSearch", beam_inputs(), [None, vec(0), None, vec(4), vec(2)])
    # a bad count is only refused once all three counts are known, as onnxruntime does
    assert outputs("BeamSearch", beam_inputs(), [None, vec(0), None, None, vec(2)])[0] == t(B, 2, None, elem=INT32)


def test_whisper_beam_search():
    inputs = [t(B, 80, 3000)] + beam_inputs()[1:]
    found = outputs("WhisperBeamSearch", inputs, [None, vec(20), None, vec(4), vec(2)], count=5)
    assert found[0] == t(B, 2, 20, elem=INT32)
    assert found[1] == t(B, 2) and found[2] == t(None, B, 4, None)
    assert found[3] == t(None, elem=FLOAT) and found[4] == t(B)
    with pytest.raises(InferenceError, match="3-D"):
        outputs("WhisperBeamSearch", [t(B, 80)] + beam_inputs()[1:], [None] * 5)


@pytest.mark.parametrize("op, count", [("GreedySearch", 1), ("Sampling", 2)])
def test_greedy_search_and_sampling(op, count):
    inputs = [t(B, S, elem=INT32), t(1, elem=INT32)]
    found = outputs(op, inputs, [None, vec(32)], count=count)
    assert found[0] == t(B, 32, elem=INT32)
    if count == 2:
        assert found[1] == t(None)  # onnxruntime's runs give it no dims at all
    assert outputs(op, inputs, [None, None])[0] == t(B, None, elem=INT32)  # max_length computed at run time
    with pytest.raises(InferenceError):
        outputs(op, inputs, [None, vec(-1)])
    with pytest.raises(InferenceError, match="2-D"):
        outputs(op, [t(B, S, 1, elem=INT32), t(1, elem=INT32)], [None, None])


def test_ngram_repeat_block_against_onnxruntime():
    case = Case("NGramRepeatBlock", "com.microsoft", [In(I64, ("B", "S")), In(F, ("B", 50))], {"ngram_size": 2})
    verdict = check(case, [{"B": 2, "S": 6}, {"B": 3, "S": 1}])
    assert verdict.problems == [] and verdict.exact
    ctx = run_rule("NGramRepeatBlock", 1, [t(B, S, elem=INT64), t(None)], {"ngram_size": 2}, domain="com.microsoft")
    assert ctx.output_type(0) == t(None)


VOCAB, HEADS, HEAD_SIZE = 11, 2, 4


def gpt_decoder():
    """A decoder-only step graph as the search ops expect it: (input_ids, position_ids,
    attention_mask, past_0) -> (logits, present_0); logits are a table lookup of the token ids
    and the present cache appends zeros for the new tokens."""
    table = np.random.default_rng(0).standard_normal((VOCAB, VOCAB)).astype(np.float32)
    consts = {"two": [2], "heads": [HEADS], "size": [HEAD_SIZE], "at0": [0], "at1": [1], "at2": [2]}
    initializers = [numpy_helper.from_array(table, "table")]
    initializers += [numpy_helper.from_array(np.array(v, np.int64), k) for k, v in consts.items()]
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["logits"]),
        helper.make_node("Shape", ["input_ids"], ["ids_shape"]),
        helper.make_node("Slice", ["ids_shape", "at0", "at1"], ["batch"]),
        helper.make_node("Slice", ["ids_shape", "at1", "at2"], ["steps"]),
        helper.make_node("Concat", ["two", "batch", "heads", "steps", "size"], ["new_shape"], axis=0),
        helper.make_node("ConstantOfShape", ["new_shape"], ["new"],
                         value=helper.make_tensor("zero", TensorProto.FLOAT, [1], [0.0])),
        helper.make_node("Concat", ["past_0", "new"], ["present_0"], axis=3),
    ]
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT32, ["b", "s"]),
              helper.make_tensor_value_info("position_ids", TensorProto.INT32, ["b", "s"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT32, ["b", "t"]),
              helper.make_tensor_value_info("past_0", TensorProto.FLOAT, [2, "b", HEADS, "p", HEAD_SIZE])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["b", "s", VOCAB]),
               helper.make_tensor_value_info("present_0", TensorProto.FLOAT, [2, "b", HEADS, "t", HEAD_SIZE])]
    return helper.make_graph(nodes, "decoder", inputs, outputs, initializers)


GENERATE = {"decoder": gpt_decoder(), "eos_token_id": VOCAB + 5, "pad_token_id": 0}  # never ends early
PROMPTS = [{"B": 2, "S": 3}, {"B": 1, "S": 5}]


def count(value):
    return Const([value], I32)


def test_beam_search_against_onnxruntime():
    # min_length is given: onnxruntime's kernel misreads the counts when it is left out
    penalty = In(F, (1,), fill=lambda shape, rng: np.ones(shape, np.float32))
    inputs = [In(I32, ("B", "S")), count(9), count(1), count(3), count(2), penalty]
    verdict = check(Case("BeamSearch", "com.microsoft", inputs, GENERATE, outputs=3), PROMPTS)
    assert verdict.problems == []
    # the vocabulary comes from the decoder's logits (B, S, VOCAB) when vocab_size is not set
    assert verdict.inferred[0][1] == (Sym("B"), 2, 9) and verdict.inferred[2][1] == (9 - Sym("S"), Sym("B"), 3, VOCAB)


@pytest.mark.parametrize("op, outputs_", [("GreedySearch", 1), ("Sampling", 2)])
def test_greedy_search_and_sampling_against_onnxruntime(op, outputs_):
    verdict = check(Case(op, "com.microsoft", [In(I32, ("B", "S")), count(9)], GENERATE, outputs=outputs_), PROMPTS)
    assert verdict.problems == []
    assert verdict.inferred[0][1] == (Sym("B"), 9)


def test_beam_search_symbolic_and_contradictory_lengths():
    L = Sym("L")
    found = outputs("BeamSearch", beam_inputs(), [None, vec(L), None, vec(4), vec(2)], count=3)
    assert found[0] == t(B, 2, L, elem=INT32) and found[2] == t(L - S, B, 4, None)
    # a prompt at least as long as max_length leaves nothing to generate: the kernel refuses it
    with pytest.raises(InferenceError, match="max_length 20 leaves nothing to generate after a prompt of 30"):
        outputs("BeamSearch", beam_inputs(t(B, 30, elem=INT32)), [None, vec(20), None, vec(4), vec(2)], count=3)
    # an encoder-decoder model's prompt goes to the encoder: its length does not bound max_length
    found = outputs("BeamSearch", beam_inputs(t(B, 30, elem=INT32)), [None, vec(20), None, vec(4), vec(2)],
                    {"model_type": 1}, count=3)
    assert found[2] == t(None, B, 4, None)


# -- node validity held against onnxruntime's refusals -----------------------------------------------------

def _beam(max_length: int = 9, beams: int = 3, returned: int = 2) -> Case:
    penalty = In(F, (1,), fill=lambda shape, rng: np.ones(shape, np.float32))
    inputs = [In(I32, (2, 3)), count(max_length), count(1), count(beams), count(returned), penalty]
    return Case("BeamSearch", "com.microsoft", inputs, GENERATE, outputs=3)


def _greedy(max_length: int, op: str = "GreedySearch") -> Case:
    return Case(op, "com.microsoft", [In(I32, (2, 3)), count(max_length)], GENERATE)


def test_beam_search_returns_no_more_sequences_than_beams():
    assert_accepted_by_both(_beam(returned=3))
    assert_refused_by_both(_beam(returned=4), "num_return_sequences 4 is more than num_beams 3",
                           ort_match="no more than num_beams")


@pytest.mark.parametrize("op", ["GreedySearch", "Sampling"])
def test_search_max_length_is_above_the_prompt_length(op):
    assert_accepted_by_both(_greedy(4, op))
    for max_length in (3, 2):
        assert_refused_by_both(_greedy(max_length, op), f"max_length {max_length} leaves nothing to generate",
                               ort_match="greater than input sequence length")
    assert_refused_by_both(_beam(max_length=3), "max_length 3 leaves nothing to generate",
                           ort_match="greater than input sequence length")
