"""Tests for the resize rule (Resize, Upsample), held against onnx's inference where it is exact."""
from __future__ import annotations

import math

import numpy as np
import onnx
import onnx.shape_inference
import pytest
from onnx import TensorProto, helper, numpy_helper

import opspec
from opspec.runtime.contract import Data, InferenceError
from opspec.runtime.shape import Sym
from opspec.runtime.testing import INT64, run_rule, t

F = TensorProto.FLOAT
N, H, W = Sym("N"), Sym("H"), Sym("W")


def _model(opset, x_shape, scales=None, sizes=None, **attributes):
    inits, names = [], ["X", ""]
    if opset >= 11:
        names = ["X", "", "", ""]
        if scales is not None:
            names[2] = "scales"
        if sizes is not None:
            names[3] = "sizes"
    else:
        names = ["X", "scales"]
    if scales is not None:
        inits.append(numpy_helper.from_array(np.array(scales, dtype=np.float32), "scales"))
    if sizes is not None:
        inits.append(numpy_helper.from_array(np.array(sizes, dtype=np.int64), "sizes"))
    while names and names[-1] == "":
        names.pop()
    node = helper.make_node("Resize", names, ["Y"], **attributes)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", F, x_shape)],
                              [helper.make_tensor_value_info("Y", F, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _dims(model):
    dims = model.graph.output[0].type.tensor_type.shape.dim
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in dims]


CASES = [
    (10, [1, 3, 5, 7], [1.0, 1.0, 2.0, 1.5], None, {}),
    (13, [2, 4, 3, 5], [1.0, 1.1, 1.3, 1.9], None, {}),
    (13, [1, 3, 5, 7], None, [1, 3, 10, 14], {}),
    (18, [3, 5], None, [6, 6], {"keep_aspect_ratio_policy": "not_smaller"}),
    (18, [3, 5], None, [6, 6], {"keep_aspect_ratio_policy": "not_larger"}),
    (18, [1, 3, 4, 6], None, [8, 9], {"axes": [2, 3], "keep_aspect_ratio_policy": "not_larger"}),
    (19, [1, 3, 4, 6], [0.5, 3.0], None, {"axes": [-2, -1]}),
    (19, [2, 7], [0.33, 2.71], None, {}),
]


@pytest.mark.parametrize("opset, x, scales, sizes, attributes", CASES)
def test_concrete_dims_match_onnx(opset, x, scales, sizes, attributes):
    model = _model(opset, x, scales, sizes, **attributes)
    theirs = _dims(onnx.shape_inference.infer_shapes(model, strict_mode=True))
    result = opspec.infer(model)
    assert result.errors == []
    assert _dims(result.model) == theirs and None not in theirs


def test_symbolic_dims_scale_by_whole_and_power_of_two_factors():
    ctx = run_rule("Resize", 19, [t(N, 3, H, W), None, t(4)], names=["x", "", "s"],
              data=[None, None, Data((4,), (1.0, 1.0, 2.0, 1.5))])
    assert ctx.output_type(0) == t(N, 3, 2 * H, (3 * W) // 2)
    ctx = run_rule("Resize", 19, [t(N, 3, H, W), None, t(4)], names=["x", "", "s"],
              data=[None, None, Data((4,), (1.0, 0.1, 0.5, 0.75))])
    assert ctx.output_type(0) == t(N, 0, H // 2, (3 * W) // 4)
    ctx = run_rule("Resize", 19, [t(N, 3, H, W), None, t(4)], names=["x", "", "s"],
              data=[None, None, Data((4,), (1.0, 1.0, float(np.float32(0.1)), 1 / 1024))])
    assert ctx.output_type(0) == t(N, 3, None, None)  # float32 rounding of d * scale decides


@pytest.mark.parametrize("scale", [0.5, 0.25, 0.75, 1.5, 2.5, 0.125, 3.0])
def test_a_symbolic_scaled_dim_is_what_float32_gives_at_every_size(scale):
    ctx = run_rule("Resize", 19, [t(1, 1, H, 4), None, t(4)], names=["x", "", "s"],
              data=[None, None, Data((4,), (1.0, 1.0, scale, 1.0))])
    dim = ctx.output_type(0).shape[2]
    for size in list(range(0, 300)) + [2**16 - 1]:
        expected = math.floor(np.float32(np.float32(size) * np.float32(scale)))
        assert dim.evaluate({"H": size}) == expected, (scale, size, dim)


def test_sizes_computed_from_shapes_pass_through():
    sizes = Data((4,), (N, 3, 2 * H, 2 * W))
    ctx = run_rule("Resize", 19, [t(N, 3, H, W), None, None, t(4, elem=INT64)], names=["x", "", "", "s"],
              data=[None, None, None, sizes])
    assert ctx.output_type(0) == t(N, 3, 2 * H, 2 * W)


def test_unknown_factors_keep_the_rank_and_the_dims_outside_axes():
    ctx = run_rule("Resize", 19, [t(N, 3, H, W), None, t(2)], {"axes": [2, 3]}, names=["x", "", "s"])
    assert ctx.output_type(0) == t(N, 3, None, None)


def test_empty_scales_with_sizes_is_the_sizes_form():
    ctx = run_rule("Resize", 13, [t(1, 3, 4, 4), None, t(0), t(4, elem=INT64)], names=["x", "", "s", "z"],
              data=[None, None, Data((0,), ()), Data((4,), (1, 3, 8, 8))])
    assert ctx.output_type(0) == t(1, 3, 8, 8)


@pytest.mark.parametrize("data, message", [
    ([None, None, Data((4,), (1.0,) * 4), Data((4,), (1, 3, 8, 8))], "cannot both be given"),
    ([None, None, Data((2,), (1.0, 2.0)), None], "has 2 values for 4 axes"),
    ([None, None, None, Data((4,), (1, 3, -8, 8))], "negative size"),
])
def test_invalid_nodes_are_node_errors(data, message):
    with pytest.raises(InferenceError, match=message):
        run_rule("Resize", 13, [t(1, 3, 4, 4), None, t(None), t(None, elem=INT64)], names=["x", "", "s", "z"],
            data=data)


def test_neither_scales_nor_sizes_is_a_node_error():
    with pytest.raises(InferenceError, match="one of 'scales' and 'sizes'"):
        run_rule("Resize", 13, [t(1, 3, 4, 4)], names=["x"])


def test_upsample_reads_scales_from_its_attribute_or_input():
    assert run_rule("Upsample", 1, [t(N, 3, 4, 5)], {"height_scale": 2.0, "width_scale": 1.5}).output_type(0) == \
        t(N, 3, 8, 7)
    assert run_rule("Upsample", 7, [t(1, 3, 4, 4)], {"scales": [1.0, 1.0, 2.0, 2.0]}).output_type(0) == t(1, 3, 8, 8)
    ctx = run_rule("Upsample", 9, [t(1, 3, H, 4), t(4)], data=[None, Data((4,), (1.0, 1.0, 3.0, 2.5))])
    assert ctx.output_type(0) == t(1, 3, 3 * H, 10)
