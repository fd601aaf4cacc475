"""Tests for the Fourier transform rules: DFT and STFT."""
from __future__ import annotations

import pytest

from opspec.runtime.contract import Data, InferenceError
from opspec.runtime.shape import Sym, parse_dim
from opspec.runtime.testing import INT64, run_rule, t

N, L, B = Sym("N"), Sym("L"), Sym("B")


def scalar(value):
    return Data((), (value,))


def dft(version, signal, attributes=None, *, length=None, axis=None, names=None, data=None):
    """Run DFT on ``signal`` with an optional dft_length and (from 20) axis input; None inputs are absent."""
    inputs = [signal, length, axis] if version >= 20 else [signal, length]
    if names is None:
        names = ["x"] + [("in" if value is not None else "") for value in inputs[1:]]
    return run_rule("DFT", version, inputs, attributes or {}, names=names, data=data).output_type(0)


def test_dft_keeps_the_shape_and_makes_the_last_axis_complex():
    assert dft(17, t(1, 10, 1)) == t(1, 10, 2)
    assert dft(20, t(B, N, 2)) == t(B, N, 2)
    assert dft(17, t(None)) == t(None)


def test_dft_one_sided_halves_the_axis_and_the_inverse_restores_it():
    assert dft(17, t(1, 10, 10, 1), {"onesided": 1}) == t(1, 6, 10, 2)
    assert dft(17, t(1, 6, 10, 2), {"onesided": 1, "inverse": 1}) == t(1, 10, 10, 1)
    assert dft(17, t(B, N, 1), {"onesided": 1}) == t(B, parse_dim("N//2+1"), 2)
    assert dft(20, t(B, N, 2), {"onesided": 1, "inverse": 1}) == t(B, parse_dim("2*N-2"), 1)


def test_dft_axis_is_an_attribute_then_an_input_with_minus_two_by_default():
    assert dft(17, t(3, 10, 8, 1), {"axis": 2, "onesided": 1}) == t(3, 10, 5, 2)
    assert dft(20, t(3, 10, 8, 1), {"onesided": 1}) == t(3, 10, 5, 2)
    axis = t(elem=INT64)
    assert dft(20, t(3, 10, 8, 1), {"onesided": 1}, axis=axis, data=[None, None, scalar(1)]) == t(3, 6, 8, 2)
    assert dft(20, t(3, 10, 8, 1), {"onesided": 1}, axis=axis, data=[None, None, scalar(-3)]) == t(3, 6, 8, 2)


def test_dft_with_an_unknown_axis_keeps_what_every_signal_axis_agrees_on():
    axis = t(elem=INT64)
    assert dft(20, t(1, 10, 10, 1), {"onesided": 1}, axis=axis) == t(1, None, None, 2)
    assert dft(20, t(4, 10, 2), {}, axis=axis) == t(4, 10, 2)
    assert dft(20, t(4, 10, 2), {}, axis=None, names=["x", "", "axis"]) == t(4, 10, 2)  # type unknown, present
    assert dft(20, t(10, 1), {"onesided": 1}, axis=axis) == t(6, 2)  # one signal axis only


def test_dft_length_is_propagated_and_unknown_when_its_value_is():
    length = t(elem=INT64)
    assert dft(17, t(2, 10, 1), length=length, data=[None, scalar(16)]) == t(2, 16, 2)
    assert dft(17, t(2, 10, 1), {"onesided": 1}, length=length, data=[None, scalar(16)]) == t(2, 9, 2)
    assert dft(20, t(2, 10, 1), {"onesided": 1}, length=length, data=[None, scalar(L)]) == \
        t(2, parse_dim("L//2+1"), 2)
    assert dft(17, t(2, 10, 1), length=length) == t(2, None, 2)
    assert dft(20, t(2, 10, 1), {"onesided": 1}, length=length, axis=t(elem=INT64)) == t(None, None, 2)


@pytest.mark.parametrize("version,signal,attributes,data,message", [
    (17, t(10), {}, None, "needs a signal axis"),
    (17, t(2, 10, 2), {"onesided": 1}, None, "one-sided DFT"),
    (17, t(2, 10, 1), {"onesided": 1, "inverse": 1}, None, "inverse one-sided"),
    (17, t(2, 10, 3), {}, None, "holds 3 parts"),
    (17, t(2, 10, 2), {"axis": 2}, None, "axis 2 is not a signal axis"),
    (17, t(2, 10, 2), {"axis": -1}, None, "axis -1"),
    (20, t(2, 10, 2), {}, [None, None, scalar(-4)], "axis -4"),
    (20, t(2, 10, 2), {}, [None, scalar(0), None], "less than 1"),
    (17, t(2, 2 ** 62 + 1, 2), {"onesided": 1, "inverse": 1}, None, "does not fit"),
    (17, t(2, 0, 2), {"onesided": 1, "inverse": 1}, None, "over 0 bins"),
])
def test_dft_rejects_invalid_nodes(version, signal, attributes, data, message):
    length = t(elem=INT64) if data and data[1] is not None else None
    axis = t(elem=INT64) if data and data[2] is not None else None
    with pytest.raises(InferenceError, match=message):
        dft(version, signal, attributes, length=length, axis=axis, data=data)


def stft(signal, step=None, window=None, length=None, attributes=None, data=None):
    inputs = [signal, t(elem=INT64), window, t(elem=INT64) if length is not None else None]
    names = ["signal", "step", "window" if window is not None else "", "length" if length is not None else ""]
    return run_rule("STFT", 17, inputs, attributes or {}, names=names,
               data=[None, step, None, length if type(length) is Data else None]).output_type(0)


def test_stft_frames_and_one_sided_bins():
    assert stft(t(1, 128, 1), scalar(8), length=scalar(16)) == t(1, 15, 9, 2)
    assert stft(t(1, 128, 1), scalar(8), length=scalar(16), attributes={"onesided": 0}) == t(1, 15, 16, 2)
    assert stft(t(2, 100, 2), scalar(10), window=t(20)) == t(2, 9, 11, 2)
    assert stft(t(2, 100, 2), scalar(10), window=t(20), length=scalar(20)) == t(2, 9, 11, 2)


def test_stft_frames_are_a_formula_of_a_symbolic_signal_length():
    assert stft(t(B, N, 1), scalar(8), length=scalar(16)) == t(B, parse_dim("(N-16)//8+1"), 9, 2)
    assert stft(t(B, N, 1), scalar(4), window=t(L)) == t(B, parse_dim("(N-L)//4+1"), parse_dim("L//2+1"), 2)


def test_stft_knows_less_when_lengths_are_unknown():
    assert stft(t(1, 128, 1), None, length=scalar(16)) == t(1, None, 9, 2)
    assert stft(t(1, 128, 1), scalar(8), length=t(elem=INT64)) == t(1, None, None, 2)
    assert stft(t(1, 128, 1), scalar(8), window=t(None)) == t(1, None, None, 2)
    assert stft(t(None), scalar(8), length=scalar(16)) == t(None, None, 9, 2)


@pytest.mark.parametrize("signal,step,window,length,message", [
    (t(128, 1), scalar(8), None, scalar(16), "rank 3"),
    (t(1, 128, 3), scalar(8), None, scalar(16), "holds 3 parts"),
    (t(1, 128, 1), scalar(0), None, scalar(16), "less than 1"),
    (t(1, 128, 1), scalar(8), None, None, "needs a window or a frame_length"),
    (t(1, 128, 1), scalar(8), t(20), scalar(16), "differs from the window"),
    (t(1, 128, 1), scalar(8), t(4, 4), None, "rank 1"),
    (t(1, 8, 1), scalar(8), None, scalar(16), "shorter than a frame"),
])
def test_stft_rejects_invalid_nodes(signal, step, window, length, message):
    with pytest.raises(InferenceError, match=message):
        stft(signal, step, window, length)
