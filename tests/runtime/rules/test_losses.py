"""Tests for the loss, det and grid_sample rules."""
from __future__ import annotations

import pytest

from opspec.runtime.contract import InferenceError
from opspec.runtime.shape import Sym
from opspec.runtime.testing import INT64, run_rule, t

N, C = Sym("N"), Sym("C")


@pytest.mark.parametrize("op, version", [("NegativeLogLikelihoodLoss", 22), ("SoftmaxCrossEntropyLoss", 13)])
def test_losses_reduce_to_a_scalar_unless_told_not_to(op, version):
    inputs = [t(N, C, 5), t(N, 5, elem=INT64)]
    assert run_rule(op, version, inputs).output_type(0) == t()
    assert run_rule(op, version, inputs, {"reduction": "none"}).output_type(0) == t(N, 5)
    with pytest.raises(InferenceError, match="one axis less"):
        run_rule(op, version, [t(N, C, 5), t(N, elem=INT64)])


def test_softmax_cross_entropy_log_probabilities_take_the_scores_shape():
    ctx = run_rule("SoftmaxCrossEntropyLoss", 13, [t(N, C), t(N, elem=INT64)], output_count=2)
    assert ctx.output_type(1) == t(N, C)


def test_det_drops_the_matrix_axes():
    assert run_rule("Det", 22, [t(N, 3, 3)]).output_type(0) == t(N)
    assert run_rule("Det", 22, [t(3, 3)]).output_type(0) == t()
    with pytest.raises(InferenceError, match="square"):
        run_rule("Det", 22, [t(2, 3)])


def test_grid_sample_takes_the_grid_spatial_dims():
    assert run_rule("GridSample", 22, [t(N, C, 32, 32), t(N, 8, 9, 2)]).output_type(0) == t(N, C, 8, 9)
    with pytest.raises(InferenceError, match="2 coordinates"):
        run_rule("GridSample", 22, [t(N, C, 32, 32), t(N, 8, 9, 3)])
