"""Tests for the recurrent rule (RNN, GRU, LSTM)."""
from __future__ import annotations

import pytest

from opspec.runtime.contract import InferenceError
from opspec.runtime.shape import Sym
from opspec.runtime.testing import run_rule, t

S, B = Sym("S"), Sym("B")


def test_lstm_bidirectional_sequence_first():
    ctx = run_rule("LSTM", 22, [t(S, B, 10), t(2, 80, 10), t(2, 80, 20)], {"hidden_size": 20, "direction": "bidirectional"},
              output_count=3)
    assert [ctx.output_type(i) for i in range(3)] == [t(S, 2, B, 20), t(2, B, 20), t(2, B, 20)]


def test_gru_batch_first_takes_the_hidden_size_from_the_weights():
    ctx = run_rule("GRU", 22, [t(B, S, 10), t(1, 60, 10), t(1, 60, 20)], {"layout": 1}, output_count=2)
    assert [ctx.output_type(i) for i in range(2)] == [t(B, S, 1, 20), t(B, 1, 20)]


def test_rnn_with_unknown_inputs_keeps_the_rank():
    ctx = run_rule("RNN", 22, [None, None, None], {"hidden_size": 8}, names=["x", "w", "r"])
    assert ctx.output_type(0).shape == (None, 1, None, 8)


def test_directions_must_match_the_weights():
    with pytest.raises(InferenceError, match="directions"):
        run_rule("RNN", 22, [t(S, B, 10), t(1, 8, 10), t(1, 8, 8)], {"direction": "bidirectional"})
