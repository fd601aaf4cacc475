"""onnxruntime's stateful sequence-model operators: CausalConvWithState, VarlenCausalConvWithState,
GatedDeltaNet, NGramHashMapping, VarlenNGramHashMapping, EngramGate and the hyper-connection mixes.

Ops the CPU execution provider runs are held against onnxruntime (its CPU CausalConvWithState runs
only ndim 1 without a state window). VarlenCausalConvWithState and GatedDeltaNet have no CPU kernel
and are checked against the rule alone, with cases from onnxruntime's inference functions."""
from __future__ import annotations

from functools import partial

import numpy as np
import ort_cases
import pytest
from ort_cases import MS, outputs
from ort_oracle import F, F16, I32, I64, Case, Const, In, Operand

from opspec.runtime.contract import InferenceError, TensorType
from opspec.runtime.shape import Sym
from opspec.runtime.testing import FLOAT, INT32, INT64, t

B, L, T, C = Sym("B"), Sym("L"), Sym("T"), Sym("C")
SETTINGS = [{"B": 2, "L": 5, "T": 6}, {"B": 1, "L": 3, "T": 4}]
exact = partial(ort_cases.exact, settings=SETTINGS)
NGRAM = {"max_ngram_size": 3, "n_head_per_ngram": 2, "pad_id": 0}


def positive(shape, rng):
    return rng.integers(1, 9, shape).astype(np.int64)


# ------------------------------------------------------------------------------------- CausalConvWithState

@pytest.mark.parametrize("dilation, carried", [(1, 2), (2, 4)])
def test_causal_conv_channels_first_against_onnxruntime(dilation, carried):
    inputs = [In(F, ("B", 4, "L")), In(F, (4, 1, 3)), In(F, (4,)), In(F, ("B", 4, carried))]
    inferred = exact(Case("CausalConvWithState", MS, inputs, {"dilation": dilation}, outputs=2))
    assert inferred == [(F, (B, 4, L)), (F, (B, 4, carried))]
    inferred = exact(Case("CausalConvWithState", MS, inputs[:2], {"dilation": dilation, "activation": "silu"},
                          outputs=2))
    assert inferred[1] == (F, (B, 4, carried))


def test_causal_conv_channels_last_against_onnxruntime():
    inputs = [In(F, ("B", "L", 2, 4)), In(F, (8, 1, 3))]
    inferred = exact(Case("CausalConvWithState", MS, inputs, {"channels_last": 1, "dilation": 2}, outputs=2))
    assert inferred == [(F, (B, L, 2, 4)), (F, (B, 4, 2, 4))]


def test_causal_conv_windows_and_more_spatial_axes():
    y, state = outputs("CausalConvWithState", [t(B, 4, 6, L), t(4, 1, 3, 3)], {"ndim": 2, "state_window": 3})
    assert y == t(B, 4, 6, L) and state == t(3, B, 4, 6, 2)
    _, state = outputs("CausalConvWithState", [t(B, 4, L), t(4, 1, None)])
    assert state == t(B, 4, None)
    _, state = outputs("CausalConvWithState", [t(None), t(4, 1, 3)])
    assert state == t(None)


def test_causal_conv_past_state_soundness():
    # a past state of unknown shape leaves the carried state as the kernel gives it
    _, state = outputs("CausalConvWithState", [t(B, 4, L), t(4, 1, 3), None, t(None)], names=["x", "w", "", "p"])
    assert state == t(B, 4, 2)
    _, state = outputs("CausalConvWithState", [t(None, 4, L), t(4, 1, 3), None, t(2, 4, 2)])
    assert state == t(2, 4, 2)
    with pytest.raises(InferenceError, match="past_state"):
        outputs("CausalConvWithState", [t(B, 4, L), t(4, 1, 3), None, t(B, 4, 3)])


@pytest.mark.parametrize("attributes, message", [({"state_window": 9}, r"state_window must be in \[0, 8\]"),
                                                 ({"dilation": 0}, "dilation must be at least 1"),
                                                 ({"channels_last": 2}, "channels_last must be 0 or 1"),
                                                 ({"channels_last": 1, "ndim": 2}, "channels_last needs ndim 1")])
def test_causal_conv_attribute_errors(attributes, message):
    with pytest.raises(InferenceError, match=message):
        outputs("CausalConvWithState", [t(B, 4, L), t(4, 1, 3)], attributes)


# -------------------------------------------------------------------------------- VarlenCausalConvWithState

def test_varlen_causal_conv_states_follow_the_request_count():
    inputs = [t(T, 8), t(8, 1, 4), t(3, elem=INT32), None, t(None), t(2, elem=INT32)]
    y, final, update = outputs("VarlenCausalConvWithState", inputs, {"dilation": 2, "state_update_capacity": 3},
                               names=["x", "w", "cu", "", "s", "n"])
    assert (y, final, update) == (t(T, 8), t(2, 8, 6), t(2, 3, 8))
    _, final, _ = outputs("VarlenCausalConvWithState", [t(T, 8), t(8, 1, 4), t(C, elem=INT32), None, t(None)],
                          names=["x", "w", "cu", "", "s"], count=3)
    assert final == t(C - 1, 8, 3)


def test_varlen_causal_conv_initial_state_soundness():
    # a present initial_state of unknown shape gives no dims; a known one refines the batch
    _, final = outputs("VarlenCausalConvWithState", [t(T, 8), t(8, 1, None), t(None, elem=INT32), None, t(None)],
                       names=["x", "w", "cu", "", "s"], count=2)
    assert final == t(None, 8, None)
    _, final = outputs("VarlenCausalConvWithState", [t(T, 8), t(8, 1, None), t(None, elem=INT32), None,
                                                     t(B, 8, 3)], names=["x", "w", "cu", "", "s"], count=2)
    assert final == t(B, 8, 3)


@pytest.mark.parametrize("inputs, attributes, message", [
    ([t(T, 8), t(8, 1, 4), t(1, elem=INT32), None, t(None)], {}, "at least 2"),
    ([t(2, 8), t(8, 1, 4), t(5, elem=INT32), None, t(None)], {}, "cannot hold 4 requests"),
    ([t(T, 8), t(8, 1, 4), t(3, elem=INT32), None, t(None)], {"state_update_capacity": 9}, r"\[0, 8\]"),
    ([t(T, 8), t(8, 1, 4), t(3, elem=INT32), None, t(3, 8, 3)], {}, "initial_state"),
    ([t(T, 8), t(4, 1, 4), t(3, elem=INT32), None, t(None)], {}, "channel counts"),
    ([t(T, 8), t(8, 1, 4), t(3, elem=INT32), None, t(None), t(4, elem=INT32)], {}, "capture_count"),
])
def test_varlen_causal_conv_errors(inputs, attributes, message):
    names = ["x", "w", "cu", "", "s", "n"][:len(inputs)]
    with pytest.raises(InferenceError, match=message):
        outputs("VarlenCausalConvWithState", inputs, attributes, names=names)


# ------------------------------------------------------------------------------------------- GatedDeltaNet

def test_gated_delta_net_token_major():
    inputs = [t(T, 2, 16, elem=10), t(T, 2, 16, elem=10), t(T, 4, 8, elem=10), None, t(T, 4), t(T, 4), t(3, 4, 8, 16)]
    y, final, update = outputs("GatedDeltaNet", inputs, {"state_update_capacity": 2},
                               names=["q", "k", "v", "", "d", "b", "s"])
    assert y == t(T, 4, 8, elem=10)
    assert final == t(3, 4, 8, 16) and update == t(3, 2 * (4 + 2 * 16 + 4 * 8))


def test_gated_delta_net_batch_major_and_capture_counts():
    inputs: list[TensorType | None] = [t(B, L, 4, 8), t(B, L, 4, 8), t(B, L, 2, 16)]
    y, final, update = outputs("GatedDeltaNet", inputs, count=3)
    assert y == t(B, L, 4, 16) and final == t(None, elem=FLOAT) and update == t(B, 0)
    inputs = [t(T, 4, 8), t(T, 4, 8), t(T, 4, 8)] + [None] * 6 + [t(C, elem=INT32)]
    _, _, update = outputs("GatedDeltaNet", inputs, {"state_update_capacity": 1}, count=3,
                           names=["q", "k", "v", "", "", "", "", "", "", "n"])
    assert update == t(C, 4 + 32 + 32)


def test_gated_delta_net_packed_qkv_gives_the_state_only():
    inputs = [t(T, 96), None, None, None, None, None, t(2, 4, 8, 8)]
    y, final, update = outputs("GatedDeltaNet", inputs, count=3, names=["q", "", "", "", "", "", "s"])
    assert y == t(None) and final == t(2, 4, 8, 8) and update == t(None, None, elem=FLOAT)


def test_gated_delta_net_errors():
    with pytest.raises(InferenceError, match="both be rank 3 or both rank 4"):
        outputs("GatedDeltaNet", [t(T, 4, 8), t(T, 4, 8), t(B, L, 4, 8)], count=1)
    with pytest.raises(InferenceError, match="initial_state"):
        outputs("GatedDeltaNet", [t(T, 4, 8), t(T, 4, 8), t(T, 4, 8)] + [None] * 3 + [t(2, 4, 8)], count=2,
                names=["q", "k", "v", "", "", "", "s"])
    with pytest.raises(InferenceError, match=r"\[0, 8\]"):
        outputs("GatedDeltaNet", [t(T, 4, 8), t(T, 4, 8), t(T, 4, 8)], {"state_update_capacity": 9})


# ----------------------------------------------------------------------------------------- NGramHashMapping

def test_ngram_hash_mapping_against_onnxruntime():
    inputs = [In(I64, ("B", "L")), In(I64, (3,)), In(I64, (4,), fill=positive)]
    assert exact(Case("NGramHashMapping", MS, inputs, NGRAM, outputs=2)) == [(I64, (B, L, 4)), (I64, (B, 2))]
    full = inputs + [In(I64, ("B", 2)), In(I64, (4,)), In(I64, ()), In(I32, ("B", "L"))]
    inferred = exact(Case("NGramHashMapping", MS, full, dict(NGRAM, reset_on_eos=1), outputs=2))
    assert inferred == [(I64, (B, L, 4)), (I64, (B, 2))]
    int32 = [In(I32, ("B", "L")), In(I32, (5,)), In(I32, (6,), fill=lambda s, r: np.full(s, 7, np.int32))]
    inferred = exact(Case("NGramHashMapping", MS, int32, dict(NGRAM, max_ngram_size=4), outputs=1))
    assert inferred == [(I32, (B, L, 6))]


@pytest.mark.parametrize("inputs, attributes, message", [
    ([t(B, L, elem=INT64), t(2, elem=INT64), t(4, elem=INT64)], {}, "multipliers has 2 elements"),
    ([t(B, L, elem=INT64), t(3, elem=INT64), t(5, elem=INT64)], {}, "vocab_sizes has 5 elements"),
    ([t(B, L, elem=INT64), t(3, elem=INT64), t(4, elem=INT64)], {"max_ngram_size": 1}, "at least 2"),
    ([t(B, L, elem=INT64), t(3, elem=INT64), t(4, elem=INT64)], {"n_head_per_ngram": 0}, "must be positive"),
    ([t(L, elem=INT64), t(3, elem=INT64), t(4, elem=INT64)], {}, "input_ids"),
    ([t(B, L, elem=INT64), t(3, elem=INT64), t(4, elem=INT64), t(B, 3, elem=INT64)], {}, "past_ids"),
    ([t(B, L, elem=INT64), t(3, elem=INT64), t(4, elem=INT64), None, None, t(1, elem=INT64)], {}, "eos_token_id"),
    ([t(2, L, elem=INT64), t(3, elem=INT64), t(4, elem=INT64), None, None, None, t(3, L, elem=INT32)], {},
     "batch sizes of input_ids and segment_ids"),
])
def test_ngram_hash_mapping_errors(inputs, attributes, message):
    with pytest.raises(InferenceError, match=message):
        outputs("NGramHashMapping", inputs, dict(NGRAM, **attributes))


def test_ngram_hash_mapping_refines_the_batch_from_past_ids():
    hashes, present = outputs("NGramHashMapping", [t(None, L, elem=INT64), t(3, elem=INT64), t(4, elem=INT64),
                                                   t(B, 2, elem=INT64)], NGRAM)
    assert hashes == t(B, L, 4, elem=INT64) and present == t(B, 2, elem=INT64)


def test_varlen_ngram_hash_mapping_against_onnxruntime():
    offsets = Const([0, 2, 6], I32)
    inputs: list[Operand] = [In(I64, (6,)), In(I64, (3,)), In(I64, (4,), fill=positive), offsets]
    assert exact(Case("VarlenNGramHashMapping", MS, inputs, NGRAM, outputs=2)) == [(I64, (6, 4)), (I64, (2, 2))]
    segmented = inputs + [None, None, None, In(I32, (6,))]
    inferred = exact(Case("VarlenNGramHashMapping", MS, segmented, NGRAM, outputs=3))
    assert inferred == [(I64, (6, 4)), (I64, (2, 2)), (I32, (2, 2))]
    captured = inputs + [In(I64, (2, 2)), None, None, In(I32, (6,)), In(I32, (2, 2)), Const([1, 3], I32)]
    inferred = exact(Case("VarlenNGramHashMapping", MS, captured, dict(NGRAM, state_update_capacity=3), outputs=4))
    assert inferred == [(I64, (6, 4)), (I64, (2, 2)), (I32, (2, 2)), (I64, (2, 3, 2))]


def test_varlen_ngram_hash_mapping_symbolic_batch_and_errors():
    inputs = [t(T, elem=INT32), t(3, elem=INT32), t(4, elem=INT32), t(C, elem=INT32)]
    hashes, present, segments, update = outputs("VarlenNGramHashMapping", inputs, NGRAM, count=4)
    assert hashes == t(T, 4, elem=INT32) and present == t(C - 1, 2, elem=INT32)
    assert segments == t(C - 1, 2, elem=INT32) and update == t(C - 1, 0, 2, elem=INT32)
    with pytest.raises(InferenceError, match="at least 2"):
        outputs("VarlenNGramHashMapping", inputs[:3] + [t(1, elem=INT32)], NGRAM)
    with pytest.raises(InferenceError, match=r"\[0, 8\]"):
        outputs("VarlenNGramHashMapping", inputs, dict(NGRAM, state_update_capacity=9))


# ----------------------------------------------------------------------------------------------- EngramGate

def test_engram_gate_against_onnxruntime():
    inputs = [In(F, ("B", "L", 2, 8)), In(F, ("B", "L", 2, 8)), In(F, ("B", "L", 8)), In(F, (2, 8)), In(F, (2, 8))]
    assert exact(Case("EngramGate", MS, inputs)) == [(F, (B, L, 2, 8))]
    inferred = exact(Case("EngramGate", MS, inputs + [In(F, (2, 8))], outputs=2))
    assert inferred == [(F, (B, L, 2, 8)), (F, (B, L, 2, 8))]


def test_engram_gate_merges_and_checks_operands():
    y, normed = outputs("EngramGate", [t(None), t(B, L, 2, None), t(None, None, 8), t(2, 8), t(2, 8), t(2, 8)])
    assert y == normed == t(B, L, 2, 8)
    with pytest.raises(InferenceError, match="value"):
        outputs("EngramGate", [t(B, L, 2, 8), t(B, L, 2, 8), t(B, 8), t(2, 8), t(2, 8)])
    with pytest.raises(InferenceError, match="key and query"):
        outputs("EngramGate", [t(B, L, 2, 8), t(B, L, 1, 8), t(B, L, 8), t(2, 8), t(2, 8)])


# ---------------------------------------------------------------------------------------- hyper-connections

@pytest.mark.parametrize("mix", [("T", 4), ("T", 4, 1), ("T", 4, 8)])
def test_hyper_connection_pre_mix_grouped_against_onnxruntime(mix):
    inferred = exact(Case("HyperConnectionPreMix", MS, [In(F, ("T", 4, 8)), In(F, mix)], {"reduction_scale": 0.5}))
    assert inferred == [(F, (T, 8))]


def test_hyper_connection_pre_mix_flattened_against_onnxruntime():
    inferred = exact(Case("HyperConnectionPreMix", MS, [In(F16, ("B", "L", 12)), In(F, ("B", "L", 4))],
                          {"num_branches": 4}))
    assert inferred == [(F16, (B, L, 3))]


def test_hyper_connection_pre_mix_errors_and_unknowns():
    assert outputs("HyperConnectionPreMix", [t(T, None), t(T, 4)], {"num_branches": 4}) == [t(T, None)]
    assert outputs("HyperConnectionPreMix", [t(None), t(T, 4)]) == [t(None)]
    with pytest.raises(InferenceError, match="does not divide into 4 branches"):
        outputs("HyperConnectionPreMix", [t(T, 10), t(T, 4)], {"num_branches": 4})
    with pytest.raises(InferenceError, match="rank 2 or more"):
        outputs("HyperConnectionPreMix", [t(8), t(4)])
    with pytest.raises(InferenceError, match="num_branches must be positive"):
        outputs("HyperConnectionPreMix", [t(T, 4, 8), t(T, 4)], {"num_branches": -1})


def test_hyper_connection_post_mix_against_onnxruntime():
    grouped = [In(F, ("T", 4, 8)), In(F, ("T", 8)), In(F, ("T", 4, 8)), In(F, ("T", 4, 4))]
    assert exact(Case("HyperConnectionPostMix", MS, grouped)) == [(F, (T, 4, 8))]
    assert exact(Case("HyperConnectionPostMix", MS, grouped[:3])) == [(F, (T, 4, 8))]
    flattened = [In(F, ("B", "L", 12)), In(F, ("B", "L", 3)), In(F, ("B", "L", 4))]
    assert exact(Case("HyperConnectionPostMix", MS, flattened, {"num_branches": 4})) == [(F, (B, L, 12))]
    assert outputs("HyperConnectionPostMix", [t(None), t(T, 8), t(T, 4)]) == [t(None)]


def test_optional_inputs_present_but_unknown_are_sound():
    # each optional input the rules read, given with an unknown type, leaves the answer as without it
    names = ["x", "w", "cu", "", "s", "n"]
    base = [t(T, 8), t(8, 1, 4), t(3, elem=INT32), None, t(None)]
    assert outputs("VarlenCausalConvWithState", base + [None], {"state_update_capacity": 1}, names=names) == \
        outputs("VarlenCausalConvWithState", base + [t(None)], {"state_update_capacity": 1}, names=names)
    qkv = [t(T, 2, 16), t(T, 2, 16), t(T, 4, 8)]
    assert outputs("GatedDeltaNet", qkv[:2] + [t(None)], count=3)[0] == t(None)
    with_state = outputs("GatedDeltaNet", qkv + [None] * 3 + [t(None)], count=3, names=list("qkv___s"))
    assert with_state == [t(T, 4, 8), TensorType(FLOAT, (None,) * 4), t(None, 0, elem=FLOAT)]
    ngram = [t(B, L, elem=INT64), t(3, elem=INT64), t(4, elem=INT64)]
    assert outputs("NGramHashMapping", ngram + [t(None), t(None), t(None), t(None)], NGRAM) == \
        outputs("NGramHashMapping", ngram, NGRAM)
    varlen = [t(T, elem=INT64), t(3, elem=INT64), t(4, elem=INT64), t(3, elem=INT32)]
    assert outputs("VarlenNGramHashMapping", varlen + [t(None)] * 6, NGRAM, count=4) == \
        outputs("VarlenNGramHashMapping", varlen, NGRAM, count=4)
