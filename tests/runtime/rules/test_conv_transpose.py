"""Tests for the conv_transpose rule, held against onnx's inference on concrete shapes."""
from __future__ import annotations

import onnx.shape_inference
import pytest
from onnx import TensorProto, helper

import opspec
from opspec.runtime.shape import Sym, parse_dim
from opspec.runtime.testing import run_rule, t

F = TensorProto.FLOAT
CASES = [
    ([1, 1, 3, 3], [1, 2, 3, 3], {}),
    ([1, 1, 3, 3], [1, 2, 3, 3], {"strides": [3, 2], "output_padding": [1, 1]}),
    ([1, 1, 3, 3], [1, 2, 3, 3], {"strides": [2, 2], "pads": [1, 2, 1, 2]}),
    ([1, 1, 3, 3], [1, 2, 3, 3], {"strides": [3, 2], "auto_pad": "SAME_UPPER"}),
    ([1, 1, 3, 3], [1, 2, 2, 2], {"dilations": [2, 2]}),
    ([1, 2, 5], [2, 3, 3], {"group": 2, "strides": [2]}),
    ([1, 1, 3, 3], [1, 2, 3, 3], {"strides": [3, 2], "output_shape": [10, 8]}),
]


@pytest.mark.parametrize("x, w, attributes", CASES)
def test_concrete_shapes_match_onnx(x, w, attributes):
    node = helper.make_node("ConvTranspose", ["X", "W"], ["Y"], **attributes)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", F, x),
                                            helper.make_tensor_value_info("W", F, w)],
                              [helper.make_tensor_value_info("Y", F, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    theirs = onnx.shape_inference.infer_shapes(model, strict_mode=True).graph.output[0].type.tensor_type.shape
    assert opspec.infer(model).values["Y"][0].shape == tuple(d.dim_value for d in theirs.dim)


def test_symbolic_sizes_give_formulas():
    H = Sym("H")
    out = run_rule("ConvTranspose", 22, [t(Sym("N"), 8, H, 16), t(8, 4, 2, 2)], {"strides": [2, 2]}).output_type(0)
    assert out.shape == (Sym("N"), 4, parse_dim("2*H"), 32)
