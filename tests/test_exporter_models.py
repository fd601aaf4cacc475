"""Exported graphs (torch.onnx, tf2onnx, onnxruntime's quantizer): every value's inferred type is checked.

Each test also runs onnx's own inference on the same model and requires that every dim onnx knows
exactly (an integer) is the dim opspec gives, with the same element type.
"""
from __future__ import annotations

import exporter_models
import onnx.shape_inference
import pytest
from onnx import TensorProto
import opspec

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _types(model) -> dict[str, tuple[int, list | None]]:
    """Value name -> (elem type, dims); dims None when the shape is not known at all, a dim None or
    its name when it is not a number."""
    types = {}
    for value in list(model.graph.value_info) + list(model.graph.output):
        tensor = value.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else d.dim_param or None for d in tensor.shape.dim]
        types[value.name] = (tensor.elem_type, dims if tensor.HasField("shape") else None)
    return types


def _inferred(model, onnx_wrong: tuple = ()) -> dict[str, tuple[int, list]]:
    """opspec's types for ``model`` (with data propagation), checked against onnx's exact dims
    except on the values named in ``onnx_wrong``, where onnx states a dim that is not so."""
    ours = _types(opspec.infer_shapes(model, data_prop=True))
    theirs = _types(onnx.shape_inference.infer_shapes(model, data_prop=True))
    for name, (elem, dims) in theirs.items():
        if name in onnx_wrong:
            continue
        assert name in ours, name
        assert ours[name][0] == elem, name
        if dims is not None and ours[name][1] is not None:
            assert len(ours[name][1]) == len(dims), name
            for mine, known in zip(ours[name][1], dims):
                assert not isinstance(known, int) or mine == known, (name, ours[name], theirs[name])
    return ours


def test_unet_sizes_follow_the_skip_tensors():
    n, h, w, h2, w2, h4, w4 = "N", "H", "W", "H//2", "W//2", "H//4", "W//4"
    assert _inferred(exporter_models.unet()) == {
        "conv_3": (F, [n, 8, h, w]), "relu_5": (F, [n, 8, h, w]),
        "maxpool_7": (F, [n, 8, h2, w2]), "conv_11": (F, [n, 16, h2, w2]), "relu_13": (F, [n, 16, h2, w2]),
        "maxpool_15": (F, [n, 16, h4, w4]), "conv_19": (F, [n, 32, h4, w4]), "relu_21": (F, [n, 32, h4, w4]),
        "convtranspose_24": (F, [n, 16, "2*(H//4)", "2*(W//4)"]),
        "shape_26": (I64, [4]), "slice_30": (I64, [2]), "shape_32": (I64, [4]), "slice_36": (I64, [2]),
        "concat_38": (I64, [4]),
        # Resize takes the skip's H//2, W//2 (not 2*(H//4)) from the sizes built out of Shape.
        "resize_40": (F, [n, 16, h2, w2]), "concat_42": (F, [n, 32, h2, w2]),
        "conv_46": (F, [n, 16, h2, w2]), "relu_48": (F, [n, 16, h2, w2]),
        "convtranspose_51": (F, [n, 8, "2*(H//2)", "2*(W//2)"]),
        "shape_53": (I64, [4]), "slice_57": (I64, [2]), "shape_59": (I64, [4]), "slice_63": (I64, [2]),
        "concat_65": (I64, [4]),
        "resize_67": (F, [n, 8, h, w]), "concat_69": (F, [n, 16, h, w]),
        "conv_73": (F, [n, 8, h, w]), "relu_75": (F, [n, 8, h, w]), "mask": (F, [n, 2, h, w]),
    }


def _detection_tail(types: dict, first: int) -> dict:
    """Expected types from TopK on (node numbering starts at ``first``), NonMaxSuppression's count
    being the fresh name it gives."""
    k, selected = "min(10,N)", types["detections"][1][0]
    assert isinstance(selected, str) and selected not in ("N", k)
    return {
        f"topk_{first}": (F, [k]), f"topk_{first + 1}": (I64, [k]), f"gather_{first + 3}": (F, [k, 4]),
        f"unsqueeze_{first + 6}": (F, [1, k, 4]), f"unsqueeze_{first + 9}": (F, [1, 1, k]),
        f"nonmaxsuppression_{first + 14}": (I64, [selected, 3]), f"gather_{first + 17}": (I64, [selected]),
        "detections": (F, [selected, 4]),
    }


def test_detection_head_top_k_of_reduce_min_count():
    types = _inferred(exporter_models.detection_head())
    assert types == {"shape_1": (I64, [1]), "gather_4": (I64, []), "unsqueeze_7": (I64, [1]),
                     "concat_10": (I64, [2]), "reducemin_12": (I64, [1])} | _detection_tail(types, 14)


def test_detection_head_top_k_of_min_count():
    types = _inferred(exporter_models.detection_head_min())
    assert types == {"shape_1": (I64, [1]), "gather_4": (I64, []), "unsqueeze_7": (I64, [1]),
                     "min_10": (I64, [1])} | _detection_tail(types, 12)


def test_dynamic_quantized_matmul_every_value():
    U8, I32, bs = TensorProto.UINT8, TensorProto.INT32, ["B", "S"]
    assert _inferred(exporter_models.dynamic_quantized_matmul()) == {
        "dynamicquantizelinear_1": (U8, bs + [64]), "dynamicquantizelinear_2": (F, []),
        "dynamicquantizelinear_3": (U8, []), "matmulinteger_7": (I32, bs + [32]), "mul_10": (F, []),
        "cast_12": (F, bs + [32]), "mul_14": (F, bs + [32]), "y": (F, bs + [32]),
    }


def test_qdq_matmul_every_value():
    U8, bs = TensorProto.UINT8, ["B", "S"]
    assert _inferred(exporter_models.qdq_matmul()) == {
        "quantizelinear_3": (U8, bs + [64]), "dequantizelinear_5": (F, bs + [64]),
        "dequantizelinear_10": (F, [64, 32]), "matmul_14": (F, bs + [32]),
        "quantizelinear_16": (U8, bs + [32]), "y": (F, bs + [32]),
    }


def test_bidirectional_lstm_every_value():
    expected = {"shape_1": (I64, [3]), "gather_4": (I64, []), "unsqueeze_7": (I64, [1]),
                "transpose_9": (F, ["T", "B", 16])}
    for start, directions in ((16, 2), (40, 1)):
        expected.update({f"concat_{start}": (I64, [3]), f"constantofshape_{start + 2}": (F, [directions, "B", 32]),
                         f"concat_{start + 6}": (I64, [3]), f"constantofshape_{start + 8}": (F, [directions, "B", 32]),
                         f"lstm_{start + 10}": (F, ["T", directions, "B", 32]),
                         f"lstm_{start + 11}": (F, [directions, "B", 32]),
                         f"lstm_{start + 12}": (F, [directions, "B", 32])})
    expected.update({"transpose_30": (F, ["T", "B", 2, 32]), "reshape_33": (F, ["T", "B", 64]),
                     "squeeze_55": (F, ["T", "B", 32]), "y": (F, ["B", "T", 32])})
    assert _inferred(exporter_models.bidirectional_lstm()) == expected


def test_rotary_attention_every_value():
    bs, heads = ["B", "S"], ["B", 4, "S", 16]
    expected = {"shape_1": (I64, [3]), "gather_4": (I64, []), "unsqueeze_7": (I64, [1]), "gather_10": (I64, []),
                "unsqueeze_13": (I64, [1]), "concat_16": (I64, [4]),
                "gather_19": (F, bs + [8]), "gather_22": (F, bs + [8])}
    for start in (25, 34, 43):
        expected.update({f"matmul_{start}": (F, bs + [64]), f"reshape_{start + 2}": (F, bs + [4, 16]),
                         f"transpose_{start + 4}": (F, heads)})
    expected.update({
        "rotaryembedding_31": (F, heads), "rotaryembedding_40": (F, heads),
        "transpose_49": (F, ["B", 4, 16, "S"]), "matmul_51": (F, ["B", 4, "S", "S"]),
        "div_54": (F, ["B", 4, "S", "S"]), "softmax_56": (F, ["B", 4, "S", "S"]), "matmul_58": (F, heads),
        "transpose_60": (F, bs + [4, 16]), "concat_63": (I64, [3]), "reshape_65": (F, bs + [64]),
        "y": (F, bs + [64]),
    })
    assert _inferred(exporter_models.rotary_attention()) == expected


def test_fused_attention_appends_the_new_tokens_to_the_cache():
    assert _inferred(exporter_models.fused_attention()) == {
        "matmul_2": (F, ["B", "S", 64]), "matmul_5": (F, ["B", "S", 32]), "matmul_8": (F, ["B", "S", 32]),
        "context": (F, ["B", "S", 64]),
        "present_key": (F, ["B", 2, "P+S", 16]), "present_value": (F, ["B", 2, "P+S", 16]),
    }


def test_vit_embedding_any_image_size():
    grid = "(H//16)*(W//16)"
    assert _inferred(exporter_models.vit_embedding()) == {
        "conv_2": (F, ["N", 64, "H//16", "W//16"]), "shape_4": (I64, [4]), "slice_8": (I64, [2]),
        "reduceprod_10": (I64, [1]), "slice_14": (I64, [2]), "concat_16": (I64, [3]),
        "reshape_18": (F, ["N", 64, grid]), "transpose_20": (F, ["N", grid, 64]),
        "slice_24": (I64, [1]), "concat_27": (I64, [3]), "equal_30": (TensorProto.BOOL, [3]),
        "where_33": (I64, [3]),
        "expand_36": (F, ["N", 1, 64]),  # Equal(N, -1) is false: N is a size
        "concat_38": (F, ["N", f"{grid}+1", 64]),
        "shape_40": (I64, [3]), "gather_43": (I64, []), "unsqueeze_46": (I64, [1]),
        "slice_51": (F, [1, f"min(197,{grid}+1)", 64]),
        "embedded": (F, ["N", f"{grid}+1", 64]),  # T and min(197, T) broadcast only as T
    }


def test_fused_attention_4d_with_mask_and_qk_output():
    # onnx gives qk (B, 4, S, 0) here: with symbolic P and S it writes 0 for the key count.
    assert _inferred(exporter_models.fused_attention_4d(), onnx_wrong=("qk",)) == {
        "context": (F, ["B", 4, "S", 16]),
        "present_key": (F, ["B", 2, "P+S", 16]), "present_value": (F, ["B", 2, "P+S", 16]),
        "qk": (F, ["B", 4, "S", "P+S"]),
    }


def test_interpolate_by_constant_scale_factors():
    assert _inferred(exporter_models.interpolate_pyramid()) == {
        "resize_2": (F, ["N", 8, "H//2", "W//2"]), "resize_5": (F, ["N", 8, "2*(H//2)", "2*(W//2)"]),
        "resize_8": (F, ["N", 8, "3*(H//2)", "3*(W//2)"]), "y": (F, ["N", 4, "3*(H//2)", "3*(W//2)"]),
    }
