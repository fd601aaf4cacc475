"""Tests for the indexing rules: GatherElements, GatherND, ScatterElements, ScatterND, OneHot,
EyeLike, Trilu; shapes cross-checked against numpy where that is cheap."""
from __future__ import annotations

import numpy as np
import pytest

from opspec.runtime.contract import Data, InferenceError
from opspec.runtime.shape import Sym, SymbolTable
from opspec.runtime.testing import FLOAT, INT32, INT64, run_rule, t, vec

N, M, K = Sym("N"), Sym("M"), Sym("K")


def test_gather_elements_takes_the_shape_of_indices():
    assert run_rule("GatherElements", 13, [t(N, 4), t(N, 2, elem=INT64)], {"axis": 1}).output_type(0) == t(N, 2)
    assert run_rule("GatherElements", 13, [t(3, 4), t(None, elem=INT64)], {"axis": -1}).output_type(0) == t(None, None)
    data, indices = np.zeros((3, 4)), np.zeros((2, 4), dtype=np.int64)
    expected = np.take_along_axis(data, indices, axis=0).shape
    assert run_rule("GatherElements", 11, [t(3, 4), t(2, 4, elem=INT64)]).output_type(0).shape == expected


@pytest.mark.parametrize("inputs, attributes, message", [
    ([t(3, 4), t(2, elem=INT64)], {}, "rank"),
    ([t(3, 4), t(2, 4, elem=INT64)], {"axis": 2}, "out of range"),
    ([t(), t(elem=INT64)], {}, "scalar"),
])
def test_gather_elements_rejects_invalid_nodes(inputs, attributes, message):
    with pytest.raises(InferenceError, match=message):
        run_rule("GatherElements", 13, inputs, attributes)


@pytest.mark.parametrize("data, indices, batch_dims, expected", [
    ((2, 2), (2, 2), 0, (2,)),
    ((2, 2), (2, 1), 0, (2, 2)),
    ((2, 2, 2), (2, 1, 2), 0, (2, 1, 2)),
    ((2, 2, 2), (2, 1), 1, (2, 2)),
    ((2, 2, 2), (2, 1, 1), 1, (2, 1, 2)),
    ((N, 5, 6), (N, 3, 2), 1, (N, 3)),
    ((N, 5, 6), (7, 1), 0, (7, 5, 6)),
])
def test_gather_nd_keeps_the_indices_prefix_and_the_unaddressed_data_dims(data, indices, batch_dims, expected):
    out = run_rule("GatherND", 13, [t(*data), t(*indices, elem=INT64)], {"batch_dims": batch_dims}).output_type(0)
    assert out == t(*expected)


def test_gather_nd_with_an_unknown_tuple_length_knows_no_rank():
    assert run_rule("GatherND", 13, [t(2, 3), t(4, K, elem=INT64)]).output_type(0).shape is None


@pytest.mark.parametrize("data, indices, batch_dims, message", [
    ((2, 2), (2, 3), 0, "must not exceed"),
    ((2, 2), (2, 1), 2, "batch_dims"),
    ((2, 3, 4), (5, 1, 1), 1, "batch dim 0"),
    ((2, 2), (2, 1), -1, "negative"),
])
def test_gather_nd_rejects_invalid_nodes(data, indices, batch_dims, message):
    with pytest.raises(InferenceError, match=message):
        run_rule("GatherND", 13, [t(*data), t(*indices, elem=INT64)], {"batch_dims": batch_dims})


@pytest.mark.parametrize("op, version", [("ScatterElements", 18), ("ScatterElements", 11), ("Scatter", 9)])
def test_scatter_elements_keeps_data_and_checks_indices_against_updates(op, version):
    assert run_rule(op, version, [t(N, 3), t(2, 3, elem=INT64), t(2, 3)]).output_type(0) == t(N, 3)
    with pytest.raises(InferenceError, match="one shape"):
        run_rule(op, version, [t(N, 3), t(2, 3, elem=INT64), t(2, 2)])
    with pytest.raises(InferenceError, match="rank"):
        run_rule(op, version, [t(N, 3), t(2, elem=INT64), t(2)])


def test_scatter_nd_keeps_data_and_checks_updates():
    assert run_rule("ScatterND", 18, [t(4, 4, 4), t(2, 1, elem=INT64), t(2, 4, 4)]).output_type(0) == t(4, 4, 4)
    assert run_rule("ScatterND", 11, [t(N, 4), t(None, elem=INT64), t(None)]).output_type(0) == t(N, 4)
    with pytest.raises(InferenceError, match="updates"):
        run_rule("ScatterND", 18, [t(4, 4, 4), t(2, 1, elem=INT64), t(2, 4)])
    with pytest.raises(InferenceError, match="exceeds"):
        run_rule("ScatterND", 18, [t(4, 4), t(2, 3, elem=INT64), t(2)])


@pytest.mark.parametrize("axis, expected", [(-1, (N, 3, 10)), (0, (10, N, 3)), (1, (N, 10, 3)), (-3, (10, N, 3))])
def test_one_hot_inserts_the_depth_at_axis(axis, expected):
    out = run_rule("OneHot", 11, [t(N, 3, elem=INT64), t(elem=INT64), t(2)], {"axis": axis},
              data=[None, Data((), (10,)), None]).output_type(0)
    assert out == t(*expected)


def test_one_hot_depth_may_be_a_float_or_a_symbol_and_is_fresh_when_unknown():
    float_depth = run_rule("OneHot", 11, [t(5, elem=INT64), t(1), t(2)], data=[None, vec(4.0), None]).output_type(0)
    assert float_depth == t(5, 4)
    symbolic = run_rule("OneHot", 11, [t(5, elem=INT64), t(1, elem=INT64), t(2)], data=[None, vec(M), None])
    assert symbolic.output_type(0) == t(5, M)
    unknown = run_rule("OneHot", 11, [t(5, elem=INT64), t(elem=INT64), t(2)], symbols=SymbolTable(())).output_type(0)
    assert unknown.shape[0] == 5 and type(unknown.shape[1]) is Sym
    empty = run_rule("OneHot", 11, [t(5, elem=INT64), t(0, elem=INT64), t(2)], data=[None, vec(), None],
                symbols=SymbolTable(())).output_type(0)
    assert empty.shape[0] == 5 and type(empty.shape[1]) is Sym
    assert run_rule("OneHot", 11, [t(5, elem=INT64), t(elem=INT64), t(2)], data=[None, Data((), (0,)), None]
               ).output_type(0) == t(5, 0)


@pytest.mark.parametrize("inputs, data, attributes, message", [
    ([t(5, elem=INT64), t(2, elem=INT64), t(2)], [None, None, None], {}, "one value"),
    ([t(5, elem=INT64), t(elem=INT64), t(3)], [None, None, None], {}, "two elements"),
    ([t(5, elem=INT64), t(elem=INT64), t(2)], [None, Data((), (-1,)), None], {}, "less than 0"),
    ([t(5, elem=INT64), t(elem=INT64), t(2)], [None, Data((), (3,)), None], {"axis": 2}, "out of range"),
])
def test_one_hot_rejects_invalid_nodes(inputs, data, attributes, message):
    with pytest.raises(InferenceError, match=message):
        run_rule("OneHot", 11, inputs, attributes, data=data)


def test_eye_like_copies_the_matrix_shape_and_takes_dtype_or_the_input_type():
    assert run_rule("EyeLike", 22, [t(N, 4, elem=INT32)]).output_type(0) == t(N, 4, elem=INT32)
    assert run_rule("EyeLike", 9, [t(3, 4, elem=INT32)], {"dtype": FLOAT}).output_type(0) == t(3, 4)
    assert run_rule("EyeLike", 9, [t(None, elem=INT64)]).output_type(0) == t(None, None, elem=INT64)
    with pytest.raises(InferenceError, match="rank"):
        run_rule("EyeLike", 9, [t(3)])


def test_trilu_keeps_a_batch_of_matrices():
    assert run_rule("Trilu", 14, [t(2, N, M), t(elem=INT64)]).output_type(0) == t(2, N, M)
    with pytest.raises(InferenceError, match="rank"):
        run_rule("Trilu", 14, [t(3)])


def test_cum_sum_keeps_the_shape_and_checks_a_known_axis():
    assert run_rule("CumSum", 14, [t(N, 3), t(elem=INT64)]).output_type(0) == t(N, 3)
    assert run_rule("CumProd", 26, [t(N, 3), t(1, elem=INT64)], data=[None, vec(1)]).output_type(0) == t(N, 3)
    assert run_rule("CumSum", 11, [t(N, 3), t(elem=INT64)], data=[None, Data((), (-2,))]).output_type(0) == t(N, 3)
    with pytest.raises(InferenceError, match="out of range"):
        run_rule("CumSum", 14, [t(N, 3), t(elem=INT64)], data=[None, Data((), (2,))])
    with pytest.raises(InferenceError, match="one value"):
        run_rule("CumSum", 14, [t(N, 3), t(2, elem=INT64)])
