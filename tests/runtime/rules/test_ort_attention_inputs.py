"""onnxruntime's ops that prepare attention's operands: RemovePadding, RestorePadding,
GatedRelativePositionBias and RelativePositionBias. They have CUDA kernels only, so their
expectations are those of onnxruntime's inference functions for the same nodes.
"""
from __future__ import annotations

import pytest
from ort_cases import outputs

from opspec.runtime.contract import InferenceError
from opspec.runtime.shape import Sym
from opspec.runtime.testing import INT32, INT64, t, vec

B, S, N = Sym("B"), Sym("S"), Sym("N")


def test_remove_padding():
    found = outputs("RemovePadding", [t(B, S, 64), t(B, elem=INT32)], count=4)
    assert found == [t(None, 64), t(B, S, elem=INT32), t(B + 1, elem=INT32), t(1, elem=INT32)]
    assert outputs("RemovePadding", [t(3, 5, 8), t(3, elem=INT32)], count=4)[2] == t(4, elem=INT32)
    with pytest.raises(InferenceError, match="rank 3"):
        outputs("RemovePadding", [t(B, 64), t(B, elem=INT32)], count=4)


def test_restore_padding():
    assert outputs("RestorePadding", [t(N, 64), t(B, S, elem=INT32)]) == [t(B, S, 64)]
    assert outputs("RestorePadding", [t(None), t(B, S, elem=INT32)]) == [t(B, S, None)]
    with pytest.raises(InferenceError, match="2-D"):
        outputs("RestorePadding", [t(N, 4, 16), t(B, S, elem=INT32)])


def test_gated_relative_position_bias():
    weights = [t(64), t(1, 4, S, S), t(16, 8), t(8), t(1, 4, 1, 1)]
    padded = outputs("GatedRelativePositionBias", [t(B, S, 64), *weights], {"num_heads": 4})
    assert padded == [t(B, 4, S, S)]
    packed = outputs("GatedRelativePositionBias", [t(N, 64), *weights, t(B, S, elem=INT32)], {"num_heads": 4})
    assert packed == [t(B, 4, S, S)]


def test_gated_relative_position_bias_token_offset_present_but_unknown():
    """Soundness: a token_offset of unknown shape means packed tokens, so the query says nothing."""
    inputs = [t(B, S, 64), t(64), t(1, 4, S, S), t(16, 8), t(8), t(1, 4, 1, 1), t(None, elem=INT32)]
    assert outputs("GatedRelativePositionBias", inputs, {"num_heads": 4}) == [t(None, 4, None, None)]


def test_relative_position_bias_reads_the_lengths():
    inputs = [t(32, 8), t(elem=INT64), t(elem=INT64)]
    known = outputs("RelativePositionBias", inputs, {"max_distance": 128}, data=[None, vec(5), vec(7)])
    assert known == [t(1, 8, 5, 7)]
    unknown = outputs("RelativePositionBias", inputs, {"max_distance": 128})
    assert unknown == [t(1, 8, None, None)]
    with pytest.raises(InferenceError):
        outputs("RelativePositionBias", [t(32), *inputs[1:]], {"max_distance": 128})
