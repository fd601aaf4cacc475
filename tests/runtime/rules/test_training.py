"""Tests for the optimizer rule of ai.onnx.preview.training."""
from __future__ import annotations

import pytest

from opspec.runtime.contract import InferenceError
from opspec.runtime.shape import Sym
from opspec.runtime.testing import INT64, run_rule, t

D = 11
N = Sym("N")
DOMAIN = "ai.onnx.preview.training"


def test_adam_outputs_repeat_the_weights_and_both_moments():
    inputs = [t(), t(elem=INT64), t(3), t(N, 2, elem=D), t(3), t(N, 2, elem=D), t(3), t(N, 2, elem=D),
              t(3), t(N, 2, elem=D)]
    ctx = run_rule("Adam", 1, inputs, domain=DOMAIN, output_count=6)
    assert [ctx.output_type(i) for i in range(6)] == [t(3), t(N, 2, elem=D)] * 3


def test_adagrad_and_momentum_repeat_weights_and_their_accumulator():
    inputs = [t(), t(elem=INT64), t(4), t(4), t(4, 4)]
    for op in ("Adagrad", "Momentum"):
        ctx = run_rule(op, 1, inputs, domain=DOMAIN, output_count=2)
        assert [ctx.output_type(0), ctx.output_type(1)] == [t(4), t(4, 4)]


def test_groups_of_unequal_size_are_a_node_error():
    with pytest.raises(InferenceError, match="do not make 3 groups"):
        run_rule("Adagrad", 1, [t(), t(elem=INT64), t(4), t(4)], domain=DOMAIN, output_count=2)
