"""Tests for the einsum rule, held against onnx's inference and numpy."""
from __future__ import annotations

import numpy as np
import onnx.shape_inference
import pytest
from onnx import TensorProto, helper

import opspec
from opspec.runtime.contract import InferenceError
from opspec.runtime.shape import Sym
from opspec.runtime.testing import run_rule, t

CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("...ij,...jk->...ik", [(7, 1, 2, 3), (6, 3, 4)]),
    ("ii->i", [(4, 4)]),
    ("ij->", [(2, 3)]),
    ("i,i", [(5,), (5,)]),
    ("ij->ji", [(2, 3)]),
]


@pytest.mark.parametrize("equation, shapes", CASES)
def test_matches_numpy_and_onnx(equation, shapes):
    arrays = [np.ones(s, dtype=np.float32) for s in shapes]
    expected = np.einsum(equation, *arrays).shape
    names = [f"x{i}" for i in range(len(shapes))]
    node = helper.make_node("Einsum", names, ["y"], equation=equation)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
                                            for n, s in zip(names, shapes)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    ours = opspec.infer(model).values["y"][0].shape
    assert ours == expected
    theirs = onnx.shape_inference.infer_shapes(model).graph.output[0].type.tensor_type
    if theirs.HasField("shape"):
        assert all(not d.HasField("dim_value") or d.dim_value == o for d, o in zip(theirs.shape.dim, ours))


def test_symbols_and_unknowns():
    N = Sym("N")
    assert run_rule("Einsum", 12, [t(N, 3), t(3, None)], {"equation": "ij,jk->ik"}).output_type(0) == t(N, None)
    with pytest.raises(InferenceError, match="sizes 3 and 4"):
        run_rule("Einsum", 12, [t(2, 3), t(4, 5)], {"equation": "ij,jk->ik"})
