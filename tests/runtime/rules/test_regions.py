"""Tests for the region rules: NonMaxSuppression, MaxRoiPool, Col2Im, AffineGrid, ImageDecoder."""
from __future__ import annotations

import pytest

from opspec.runtime.contract import Data, InferenceError
from opspec.runtime.shape import Sym, SymbolTable
from opspec.runtime.testing import INT64, run_rule, t

N, H, W, B = Sym("N"), Sym("H"), Sym("W"), Sym("B")
UINT8 = 2


def test_non_max_suppression_gives_a_fresh_count_of_triples():
    out = run_rule("NonMaxSuppression", 11, [t(B, 100, 4), t(B, 80, 100)], symbols=SymbolTable(())).output_type(0)
    assert out.elem == INT64 and out.shape[1] == 3 and type(out.shape[0]) is Sym
    with pytest.raises(InferenceError, match="4 coordinates"):
        run_rule("NonMaxSuppression", 11, [t(1, 100, 5), t(1, 80, 100)])
    with pytest.raises(InferenceError, match="disagree"):
        run_rule("NonMaxSuppression", 11, [t(1, 100, 4), t(1, 80, 99)])


def test_max_roi_pool_pools_each_region_to_the_pooled_shape():
    out = run_rule("MaxRoiPool", 22, [t(N, 256, H, W), t(Sym("R"), 5)], {"pooled_shape": [7, 7]}).output_type(0)
    assert out == t(Sym("R"), 256, 7, 7)
    with pytest.raises(InferenceError, match="5 numbers"):
        run_rule("MaxRoiPool", 22, [t(N, 256, H, W), t(10, 4)], {"pooled_shape": [7, 7]})


def test_col2im_folds_columns_into_an_image():
    data = [None, Data((2,), (5, 5)), Data((2,), (2, 2))]
    assert run_rule("Col2Im", 18, [t(N, 12, 16), t(2, elem=INT64), t(2, elem=INT64)], data=data).output_type(0) == \
        t(N, 3, 5, 5)
    unknown = run_rule("Col2Im", 18, [t(N, 12, 16), t(2, elem=INT64), t(2, elem=INT64)]).output_type(0)
    assert unknown == t(N, None, None, None)
    with pytest.raises(InferenceError, match="not a multiple"):
        run_rule("Col2Im", 18, [t(N, 10, 16), t(2, elem=INT64), t(2, elem=INT64)], data=data)


def test_affine_grid_is_batch_spatial_coordinates():
    size = Data((4,), (N, 3, H, W))
    assert run_rule("AffineGrid", 20, [t(N, 2, 3), t(4, elem=INT64)], data=[None, size]).output_type(0) == t(N, H, W, 2)
    assert run_rule("AffineGrid", 20, [t(N, 3, 4), t(5, elem=INT64)]).output_type(0) == t(N, None, None, None, 3)
    with pytest.raises(InferenceError, match="must be"):
        run_rule("AffineGrid", 20, [t(N, 3, 4), t(4, elem=INT64)], data=[None, size])


def test_image_decoder_channels_follow_the_pixel_format():
    out = run_rule("ImageDecoder", 20, [t(None, elem=UINT8)], {"pixel_format": "Grayscale"},
              symbols=SymbolTable(())).output_type(0)
    assert out.shape[2] == 1 and out.elem == UINT8
    assert run_rule("ImageDecoder", 20, [t(100, elem=UINT8)]).output_type(0).shape[2] == 3
