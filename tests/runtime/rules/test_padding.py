"""Tests for the padding and layout rules: Pad, CenterCropPad, Tile, DepthToSpace, SpaceToDepth."""
from __future__ import annotations

import numpy as np
import pytest

from opspec.runtime.contract import Data, InferenceError
from opspec.runtime.shape import Sym
from opspec.runtime.testing import INT64, run_rule, t, vec

N, H, W = Sym("N"), Sym("H"), Sym("W")


def test_pad_grows_each_axis_by_its_begin_and_end():
    pads = [0, 1, 2, 0, 3, -1]
    out = run_rule("Pad", 13, [t(2, 4, 5), t(6, elem=INT64)], data=[None, vec(*pads)]).output_type(0)
    assert out.shape == np.pad(np.zeros((2, 4, 5)), [(0, 0), (1, 3), (2, 0)])[:, :, :-1].shape
    assert run_rule("Pad", 2, [t(N, H)], {"pads": [0, 1, 0, 1]}).output_type(0) == t(N, H + 2)
    assert run_rule("Pad", 1, [t(N, H)], {"paddings": [1, 0, 1, 0]}).output_type(0) == t(N + 2, H)


def test_pad_reads_pads_and_axes_from_data_including_symbols():
    out = run_rule("Pad", 18, [t(N, H, W), t(4, elem=INT64), t(), t(2, elem=INT64)],
              data=[None, vec(1, H, 1, 0), None, vec(0, -1)]).output_type(0)
    assert out == t(N + 2, H, W + H)
    assert run_rule("Pad", 18, [t(N, H, W), t(4, elem=INT64), t(), t(2, elem=INT64)]).output_type(0) == t(None, None, None)
    assert run_rule("Pad", 11, [t(N, H), t(4, elem=INT64)]).output_type(0) == t(None, None)
    partly = run_rule("Pad", 18, [t(N, H, W), t(4, elem=INT64), t(), t(2, elem=INT64)],
                 data=[None, vec(1, 1, 1, 1), None, vec(0, None)])
    assert partly.output_type(0) == t(None, None, None)
    assert run_rule("Pad", 11, [t(None), t(4, elem=INT64)]).output_type(0) == t(None, None)


@pytest.mark.parametrize("inputs, data, message", [
    ([t(2, 3), t(2, elem=INT64)], [None, None], "begin and an end"),
    ([t(2, 3), t(4, elem=INT64)], [None, vec(0, -2, 0, -2)], "below zero"),
    ([t(2, 3), t(4, elem=INT64)], [None, vec(0, 2**62, 0, 2**62)], "int64"),
    ([t(2, 3), t(2, elem=INT64), t(), t(1, elem=INT64)], [None, vec(1, 1), None, vec(2)], "out of range"),
])
def test_pad_rejects_invalid_nodes(inputs, data, message):
    with pytest.raises(InferenceError, match=message):
        run_rule("Pad", 18, inputs, data=data)


def test_center_crop_pad_sets_the_listed_axes_to_the_shape_input():
    assert run_rule("CenterCropPad", 18, [t(N, 20, 10, 3), t(2, elem=INT64)], {"axes": [1, 2]},
               data=[None, vec(8, 12)]).output_type(0) == t(N, 8, 12, 3)
    assert run_rule("CenterCropPad", 18, [t(N, 20, 3), t(3, elem=INT64)]).output_type(0) == t(None, None, None)
    assert run_rule("CenterCropPad", 18, [t(None), t(3, elem=INT64)]).output_type(0) == t(None, None, None)
    with pytest.raises(InferenceError, match="sizes for 2 axes"):
        run_rule("CenterCropPad", 18, [t(N, 20, 3), t(3, elem=INT64)], {"axes": [0, 1]})


def test_tile_multiplies_each_dim_and_repeats_known_data():
    assert run_rule("Tile", 13, [t(N, 3), t(2, elem=INT64)], data=[None, vec(2, 1)]).output_type(0) == t(N * 2, 3)
    assert run_rule("Tile", 13, [t(2, 3), t(2, elem=INT64)]).output_type(0) == t(None, None)
    assert run_rule("Tile", 1, [t(2, 3), t(), t()]).output_type(0) == t(None, None)
    ctx = run_rule("Tile", 13, [t(2, elem=INT64), t(1, elem=INT64)], data=[vec(N, 4), vec(2)])
    assert ctx.output_type(0) == t(4, elem=INT64) and ctx.output_data(0) == Data((4,), (N, 4, N, 4))
    assert run_rule("Tile", 13, [t(0, elem=INT64), t(1, elem=INT64)], data=[vec(), vec(N)]).output_type(0) == t(0, elem=INT64)
    symbolic = run_rule("Tile", 13, [t(N, elem=INT64), t(1, elem=INT64)], data=[vec(1, 2), vec(2)])
    assert symbolic.output_type(0) == t(N * 2, elem=INT64) and symbolic.output_data(0) is None
    huge = run_rule("Tile", 13, [t(2, elem=INT64), t(1, elem=INT64)], data=[vec(1, 2), vec(10**9)])
    assert huge.output_type(0) == t(2 * 10**9, elem=INT64) and huge.output_data(0) is None
    assert np.tile(np.zeros((2, 3)), (3, 2)).shape == \
        run_rule("Tile", 6, [t(2, 3), t(2, elem=INT64)], data=[None, vec(3, 2)]).output_type(0).shape
    with pytest.raises(InferenceError, match="rank"):
        run_rule("Tile", 13, [t(2, 3), t(1, elem=INT64)])
    with pytest.raises(InferenceError, match="int64"):
        run_rule("Tile", 13, [t(4), t(1, elem=INT64)], data=[None, vec(2**62)])
    with pytest.raises(InferenceError, match="negative"):
        run_rule("Tile", 13, [t(2, 3), t(2, elem=INT64)], data=[None, vec(1, -1)])


def test_depth_to_space_and_space_to_depth_are_inverse_layouts():
    deep = run_rule("DepthToSpace", 13, [t(N, 18, H, W)], {"blocksize": 3}).output_type(0)
    assert deep == t(N, 2, H * 3, W * 3)
    assert run_rule("SpaceToDepth", 13, [deep], {"blocksize": 3}).output_type(0) == t(N, 18, H, W)
    assert run_rule("SpaceToDepth", 1, [t(1, 2, 4, 6)], {"blocksize": 2}).output_type(0) == t(1, 8, 2, 3)
    with pytest.raises(InferenceError, match="blocks of 3x3"):
        run_rule("DepthToSpace", 11, [t(N, 10, H, W)], {"blocksize": 3})
    with pytest.raises(InferenceError, match="multiples"):
        run_rule("SpaceToDepth", 13, [t(1, 2, 4, 5)], {"blocksize": 2})
    with pytest.raises(InferenceError, match="positive"):
        run_rule("SpaceToDepth", 13, [t(1, 2, 4, 4)], {"blocksize": 0})
    with pytest.raises(InferenceError, match="rank"):
        run_rule("DepthToSpace", 13, [t(1, 2, 4)], {"blocksize": 1})
