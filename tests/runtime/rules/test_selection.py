"""Tests for the selection rules: TopK, Compress, NonZero, Unique; data-dependent sizes are
fresh symbols, shared where one size feeds several outputs."""
from __future__ import annotations

import numpy as np
import pytest

import opspec
from opspec.runtime.contract import Data, InferenceError
from opspec.runtime.shape import Sym, SymbolTable
from opspec.runtime.testing import INT64, run_rule, t, vec

N, M = Sym("N"), Sym("M")
BOOL = 9


def _fresh(value) -> bool:
    return type(value) is Sym


def test_top_k_shortens_the_axis_to_k_for_values_and_indices():
    ctx = run_rule("TopK", 11, [t(N, 20), t(1, elem=INT64)], data=[None, vec(5)])
    assert ctx.output_type(0) == t(N, 5) and ctx.output_type(1) == t(N, 5, elem=INT64)
    assert run_rule("TopK", 1, [t(7, N)], {"k": 3, "axis": 0}).output_type(0) == t(3, N)


def test_top_k_carries_a_symbolic_k_and_shares_a_fresh_one_when_unknown():
    k = Sym.min(N, 10)
    assert run_rule("TopK", 11, [t(2, N), t(1, elem=INT64)], data=[None, vec(k)]).output_type(0) == t(2, k)
    ctx = run_rule("TopK", 11, [t(2, N), t(1, elem=INT64)], symbols=SymbolTable(()))
    values, indices = ctx.output_type(0), ctx.output_type(1)
    assert _fresh(values.shape[1]) and values.shape == indices.shape and values.shape[0] == 2


@pytest.mark.parametrize("inputs, data, message", [
    ([t(4, 3), t(1, elem=INT64)], [None, vec(4)], "exceeds"),
    ([t(4, 3), t(1, elem=INT64)], [None, vec(-1)], "less than 0"),
    ([t(4, 3), t(2, elem=INT64)], [None, None], "one value"),
])
def test_top_k_rejects_invalid_nodes(inputs, data, message):
    with pytest.raises(InferenceError, match=message):
        run_rule("TopK", 11, inputs, data=data)


def test_compress_counts_a_known_condition_like_numpy():
    data, condition = np.zeros((3, 2)), np.array([0, 1, 1])
    for axis in (0, None):
        expected = np.compress(condition, data, axis=axis).shape
        attributes = {} if axis is None else {"axis": axis}
        out = run_rule("Compress", 11, [t(3, 2), t(3, elem=BOOL)], attributes,
                  data=[None, Data((3,), (False, True, True))]).output_type(0)
        assert out.shape == expected


def test_compress_with_an_unknown_condition_has_a_fresh_size():
    out = run_rule("Compress", 11, [t(N, 4), t(N, elem=BOOL)], {"axis": -1}, symbols=SymbolTable(())).output_type(0)
    assert out.shape[0] == N and _fresh(out.shape[1])
    flat = run_rule("Compress", 9, [t(N, 4), t(None, elem=BOOL)], symbols=SymbolTable(())).output_type(0)
    assert len(flat.shape) == 1 and _fresh(flat.shape[0])
    none = run_rule("Compress", 11, [t(N, 4), t(2, elem=BOOL)], {"axis": 1}, data=[None, vec(0, 0)]).output_type(0)
    assert none == t(N, 0)
    with pytest.raises(InferenceError, match="rank"):
        run_rule("Compress", 11, [t(N, 4), t(2, 2, elem=BOOL)])


def test_non_zero_has_one_row_per_axis_and_counts_known_data():
    out = run_rule("NonZero", 13, [t(N, 3, 2)], symbols=SymbolTable(())).output_type(0)
    assert out.elem == INT64 and out.shape[0] == 3 and _fresh(out.shape[1])
    known = np.array([0, 3, 0, 5])
    assert run_rule("NonZero", 13, [t(4, elem=INT64)], data=[vec(0, 3, 0, 5)]).output_type(0).shape == \
        np.array(np.nonzero(known)).shape
    assert run_rule("NonZero", 9, [t(None)], symbols=SymbolTable(())).output_type(0).shape[0] is None


def test_unique_shares_one_fresh_count_between_its_outputs():
    ctx = run_rule("Unique", 11, [t(N, 3)], output_count=4, symbols=SymbolTable(()))
    y, first, inverse, counts = (ctx.output_type(i) for i in range(4))
    assert _fresh(y.shape[0]) and y.shape == first.shape == counts.shape
    assert inverse.shape == (N * 3,) and first.elem == INT64
    ctx = run_rule("Unique", 11, [t(N, 3)], {"axis": 0}, output_count=4, symbols=SymbolTable(()))
    y, first, inverse, counts = (ctx.output_type(i) for i in range(4))
    assert y.shape[1] == 3 and _fresh(y.shape[0]) and first.shape == (y.shape[0],) == counts.shape
    assert inverse.shape == (N,)
    with pytest.raises(InferenceError, match="out of range"):
        run_rule("Unique", 11, [t(N, 3)], {"axis": 2})


def test_a_detection_head_keeps_top_k_of_min_n_10_symbolic_through_a_graph():
    from onnx import TensorProto, helper

    nodes = [
        helper.make_node("Shape", ["scores"], ["shape"]),
        helper.make_node("Gather", ["shape", "last"], ["n"], axis=0),
        helper.make_node("Min", ["n", "ten"], ["k"]),
        helper.make_node("TopK", ["scores", "k"], ["top", "order"], axis=1),
        helper.make_node("Unsqueeze", ["order", "minus1"], ["order3"]),
        helper.make_node("GatherElements", ["boxes", "order3"], ["picked"], axis=1),
        helper.make_node("NonZero", ["top"], ["where"]),
    ]
    graph = helper.make_graph(
        nodes, "head",
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["B", "N"]),
         helper.make_tensor_value_info("boxes", TensorProto.FLOAT, ["B", "N", 1])],
        [helper.make_tensor_value_info(name, TensorProto.UNDEFINED, None) for name in ("top", "picked", "where")],
        initializer=[helper.make_tensor("last", TensorProto.INT64, [1], [1]),
                     helper.make_tensor("ten", TensorProto.INT64, [1], [10]),
                     helper.make_tensor("minus1", TensorProto.INT64, [1], [-1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    inferred = opspec.infer_shapes(model, data_prop=True)
    dims = {value.name: [d.dim_param or d.dim_value for d in value.type.tensor_type.shape.dim]
            for value in inferred.graph.output}
    assert dims["top"] == ["B", "min(10,N)"] and dims["picked"] == ["B", "min(10,N)", 1]
    assert dims["where"][0] == 2 and dims["where"][1] not in ("B", "N", "min(10,N)")
