"""Whole models as users get them: every value's inferred type is checked."""
from __future__ import annotations

import models
import pytest
from onnx import TensorProto

import opspec

F, I64 = TensorProto.FLOAT, TensorProto.INT64


_types = models.value_types


def test_small_cnn_every_value():
    inferred = opspec.infer_shapes(models.small_cnn())
    assert _types(inferred) == {
        "conv_3": (F, ["N", 16, 32, 32]),
        "batchnormalization_9": (F, ["N", 16, 32, 32]),
        "relu_11": (F, ["N", 16, 32, 32]),
        "maxpool_13": (F, ["N", 16, 16, 16]),
        "conv_16": (F, ["N", 32, 8, 8]),
        "relu_18": (F, ["N", 32, 8, 8]),
        "averagepool_20": (F, ["N", 32, 8, 8]),
        "globalaveragepool_22": (F, ["N", 32, 1, 1]),
        "flatten_24": (F, ["N", 32]),
        "gemm_28": (F, ["N", 10]),
        "probs": (F, ["N", 10]),
    }


def _block_expectations(hidden: int = 64, heads: int = 4) -> dict[str, tuple[int, list]]:
    head, bsh = hidden // heads, ["B", "S", hidden]
    expected: dict[str, tuple[int, list]] = {
        "gather_2": (F, bsh), "layernormalization_6": (F, bsh), "shape_8": (I64, [3]),
        "gather_11": (I64, [1]), "gather_14": (I64, [1]), "concat_17": (I64, [4])}
    for start in (20, 30, 40):
        expected.update({f"matmul_{start}": (F, bsh), f"add_{start + 3}": (F, bsh),
                         f"reshape_{start + 5}": (F, ["B", "S", heads, head]),
                         f"transpose_{start + 7}": (F, ["B", heads, "S", head])})
    expected.update({
        "transpose_49": (F, ["B", heads, head, "S"]), "matmul_51": (F, ["B", heads, "S", "S"]),
        "div_54": (F, ["B", heads, "S", "S"]), "softmax_56": (F, ["B", heads, "S", "S"]),
        "matmul_58": (F, ["B", heads, "S", head]), "concat_61": (I64, [3]),
        "transpose_63": (F, ["B", "S", heads, head]), "reshape_65": (F, bsh), "matmul_68": (F, bsh),
        "add_70": (F, bsh), "layernormalization_74": (F, bsh), "matmul_77": (F, ["B", "S", 4 * hidden]),
        "add_80": (F, ["B", "S", 4 * hidden]), "div_83": (F, ["B", "S", 4 * hidden]),
        "erf_85": (F, ["B", "S", 4 * hidden]), "add_88": (F, ["B", "S", 4 * hidden]),
        "mul_90": (F, ["B", "S", 4 * hidden]), "mul_93": (F, ["B", "S", 4 * hidden]),
        "matmul_96": (F, bsh), "add_98": (F, bsh), "hidden_states": (F, bsh),
    })
    return expected


def test_transformer_block_every_value_with_data_propagation():
    inferred = opspec.infer_shapes(models.transformer(1), data_prop=True)
    assert _types(inferred) == _block_expectations()


def test_transformer_block_without_data_propagation_keeps_ranks():
    types = _types(opspec.infer_shapes(models.transformer(1)))
    # Without the shape data, Reshape knows only the target rank (the length of its shape input).
    assert types["reshape_25"][0] == F and len(types["reshape_25"][1] or ()) == 4
    assert types["matmul_20"] == (F, ["B", "S", 64])


@pytest.mark.parametrize("build", [models.small_cnn, lambda: models.transformer(2)])
def test_agrees_with_onnx_wherever_onnx_is_exact(build):
    import onnx.shape_inference

    model = build()
    ours = _types(opspec.infer_shapes(model, data_prop=True))
    theirs = _types(onnx.shape_inference.infer_shapes(model, data_prop=True))
    assert set(ours) >= set(theirs)
    assert {name: ours[name] for name in theirs} == theirs
