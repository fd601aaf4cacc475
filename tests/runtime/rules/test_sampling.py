"""Tests for the sampling rules: random tensors, windows and mel filter banks."""
from __future__ import annotations

import pytest

from opspec.runtime.contract import Data, InferenceError
from opspec.runtime.shape import Sym, parse_dim
from opspec.runtime.testing import INT64, run_rule, t

FLOAT, INT32, DOUBLE, F16 = 1, 6, 11, 10
N = Sym("N")


def out(ctx, index=0):
    return ctx.output_type(index)


def scalar(value):
    return Data((), (value,))


def test_random_tensor_takes_shape_and_dtype_from_attributes():
    assert out(run_rule("RandomNormal", 22, [], {"shape": [2, 3]})) == t(2, 3)
    assert out(run_rule("RandomUniform", 22, [], {"shape": [4], "dtype": DOUBLE})) == t(4, elem=DOUBLE)
    with pytest.raises(InferenceError, match="negative dim"):
        run_rule("RandomNormal", 22, [], {"shape": [2, -1]})


def test_random_like_keeps_the_input_type_unless_dtype_is_set():
    assert out(run_rule("RandomNormalLike", 22, [t(N, 3, elem=F16)])) == t(N, 3, elem=F16)
    assert out(run_rule("RandomNormalLike", 22, [t(N, 3, elem=F16)], {"dtype": FLOAT})) == t(N, 3)
    assert out(run_rule("RandomNormalLike", 22, [None], {"dtype": FLOAT}, names=["x"])) == t(None)
    with pytest.raises(InferenceError, match="no element type"):
        run_rule("RandomNormalLike", 22, [t(2)], {"dtype": 999})


def test_multinomial_draws_sample_size_per_batch_row():
    assert out(run_rule("Multinomial", 22, [t(N, 10)], {"sample_size": 4})) == t(N, 4, elem=INT32)
    assert out(run_rule("Multinomial", 22, [None], {"dtype": INT64}, names=["x"])) == t(None, 1, elem=INT64)
    with pytest.raises(InferenceError, match="must have rank 2"):
        run_rule("Multinomial", 22, [t(10)])


@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
def test_window_length_is_the_size_value(op):
    assert out(run_rule(op, 17, [t(elem=INT64)], data=[scalar(16)])) == t(16)
    assert out(run_rule(op, 17, [t(elem=INT64)], data=[scalar(N)])) == t(N)
    unknown = out(run_rule(op, 17, [t(elem=INT64)], {"output_datatype": DOUBLE}))
    assert unknown.elem == DOUBLE and len(unknown.shape) == 1 and type(unknown.shape[0]) is not int
    with pytest.raises(InferenceError, match="negative"):
        run_rule(op, 17, [t(elem=INT64)], data=[scalar(-3)])


def test_mel_weight_matrix_rows_are_half_the_dft_length_plus_one():
    inputs = [t(elem=INT64), t(elem=INT64), t(elem=INT64), t(), t()]
    assert out(run_rule("MelWeightMatrix", 17, inputs, data=[scalar(8), scalar(512), None, None, None])) == t(257, 8)
    assert out(run_rule("MelWeightMatrix", 17, inputs, data=[scalar(8), scalar(N), None, None, None])) == \
        t(parse_dim("N//2+1"), 8)
    assert out(run_rule("MelWeightMatrix", 17, inputs)) == t(None, None)
