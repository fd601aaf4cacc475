"""onnxruntime's LinearAttention and LinearAttentionGate, held against its CPU provider, and their
error and soundness cases against the rules.
"""
from __future__ import annotations

import pytest
from ort_cases import outputs
from ort_oracle import F, F16, Case, In, check

from opspec.runtime.contract import InferenceError
from opspec.runtime.shape import Sym
from opspec.runtime.testing import FLOAT, t

B, T = Sym("B"), Sym("T")
SETTINGS = [{"B": 2, "T": 3}, {"B": 1, "T": 5}]


HEADS = {"q_num_heads": 4, "kv_num_heads": 2}


def linear(query, key, value, past=None, attributes=None, elem=FLOAT):
    inputs = [query, key, value, past]
    names = ["q", "k", "v", "" if past is None else "past"]
    return outputs("LinearAttention", inputs, {**HEADS, **(attributes or {})}, 2, names=names)


def test_linear_attention_state_window_leads_the_state():
    y, state = linear(t(B, T, 64), t(B, T, 32), t(B, T, 48), attributes={"state_window": 3})
    assert y == t(B, T, 96) and state == t(3, B, 2, 16, 24)


def test_linear_attention_past_state_alone_gives_the_state():
    """Soundness: with the query unknown the past state (present, shape known) gives the state."""
    y, state = linear(t(None), t(B, T, 32), t(B, T, 48), past=t(B, 2, 16, 24))
    assert y == t(None) and state == t(B, 2, 16, 24)
    assert linear(t(None), t(B, T, 32), t(B, T, 48), past=t(None))[1] == t(None)


@pytest.mark.parametrize("attributes, query, message", [
    ({"state_window": 9}, (B, T, 64), "state_window"),
    ({}, (B, 64), "must be"),
])
def test_linear_attention_errors(attributes, query, message):
    with pytest.raises(InferenceError, match=message):
        linear(t(*query), t(B, T, 32), t(B, T, 48), attributes=attributes)


@pytest.mark.parametrize("heads, sizes", [(HEADS, (64, 32, 48)), ({"q_num_heads": 2, "kv_num_heads": 4}, (32, 32, 64))])
def test_linear_attention_against_onnxruntime(heads, sizes):
    q, k, v = sizes
    inputs = [In(F, ("B", "T", q)), In(F, ("B", "T", k)), In(F, ("B", "T", v)), None,
              In(F, ("B", "T", heads["kv_num_heads"])), In(F, ("B", "T", heads["kv_num_heads"]))]
    verdict = check(Case("LinearAttention", "com.microsoft", inputs, heads, outputs=2), SETTINGS)
    assert verdict.problems == []
    assert verdict.exact


@pytest.mark.parametrize("rule, gates", [("linear", ()), ("gated", ("decay",)), ("delta", ("beta",))])
def test_linear_attention_update_rules_against_onnxruntime(rule, gates):
    decay = In(F, ("B", "T", 2)) if "decay" in gates else None
    beta = In(F, ("B", "T", 2)) if "beta" in gates else None
    inputs = [In(F, ("B", "T", 64)), In(F, ("B", "T", 32)), In(F, ("B", "T", 48)), None, decay, beta]
    verdict = check(Case("LinearAttention", "com.microsoft", inputs, {**HEADS, "update_rule": rule}, outputs=2),
                    SETTINGS)
    assert verdict.problems == [] and verdict.exact


def test_linear_attention_past_state_against_onnxruntime():
    inputs = [In(F, ("B", "T", 64)), In(F, ("B", "T", 32)), In(F, ("B", "T", 48)), In(F, ("B", 2, 16, 24)),
              In(F, ("B", "T", 2)), In(F, ("B", "T", 2))]
    verdict = check(Case("LinearAttention", "com.microsoft", inputs, HEADS, outputs=2), SETTINGS)
    assert verdict.problems == [] and verdict.exact


@pytest.mark.parametrize("elem", [F, F16])
def test_linear_attention_gate_against_onnxruntime(elem):
    gate = In(elem, ("B", "T", 4))
    for inputs, count in (([gate, In(F, (4,)), In(F, (4,))], 1), ([gate, In(F, (4,)), In(F, (4,)), gate], 2)):
        verdict = check(Case("LinearAttentionGate", "com.microsoft", inputs, outputs=count), SETTINGS)
        assert verdict.problems == [] and verdict.exact


def test_linear_attention_gate_needs_b_for_beta():
    with pytest.raises(InferenceError, match="b is required"):
        outputs("LinearAttentionGate", [t(B, T, 4), t(4), t(4)], count=2)
    rate = outputs("LinearAttentionGate", [t(B, T, 4), t(4), t(4), t(None)], count=2)[1]
    assert rate == t(B, T, 4)  # b present but unknown: a's shape, which b shares
