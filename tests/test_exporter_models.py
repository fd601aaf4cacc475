"""Exported graphs: every value's inferred type, held against onnx and against the shapes a run gives."""
from __future__ import annotations

import exporter_models as em
import numpy as np
import onnx
import onnx.shape_inference
import pytest
from models import value_types
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import opspec
from opspec.runtime.shape import parse_dim

F, I32, I64, U8 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64, TensorProto.UINT8


def _infer(model) -> dict[str, tuple[int, list | None]]:
    return value_types(opspec.infer_shapes(model, data_prop=True))


def _nchw(channels: int, h: str, w: str) -> tuple[int, list]:
    return (F, ["N", channels, h, w])


def _unet_expectations() -> dict[str, tuple[int, list]]:
    full, half, quarter = ("H", "W"), ("H//2", "W//2"), ("H//4", "W//4")
    expected: dict[str, tuple[int, list]] = {name: _nchw(8, *full) for name in ("conv_3", "relu_5")}
    expected.update({name: _nchw(16, *half) for name in ("conv_11", "relu_13")})
    expected.update({name: _nchw(32, *quarter) for name in ("conv_19", "relu_21")})
    expected.update({
        "maxpool_7": _nchw(8, *half), "maxpool_15": _nchw(16, *quarter),
        # up path: ConvTranspose doubles, Resize takes the skip's size from Shape, Concat stacks channels
        "convtranspose_25": _nchw(16, "2*(H//4)", "2*(W//4)"),
        "shape_27": (I64, [4]), "slice_32": (I64, [2]), "shape_34": (I64, [4]), "slice_39": (I64, [2]),
        "concat_41": (I64, [4]), "resize_43": _nchw(16, *half), "concat_45": _nchw(32, *half),
        "conv_49": _nchw(16, *half), "relu_51": _nchw(16, *half),
        "convtranspose_55": _nchw(8, "2*(H//2)", "2*(W//2)"),
        "shape_57": (I64, [4]), "gather_60": (I64, [2]), "shape_62": (I64, [4]), "slice_67": (I64, [2]),
        "concat_69": (I64, [4]), "resize_71": _nchw(8, *full), "concat_73": _nchw(16, *full),
        "conv_77": _nchw(8, *full), "relu_79": _nchw(8, *full), "conv_82": _nchw(2, *full), "mask": _nchw(2, *full),
    })
    return expected


def _pad_block(first: int, channels: int, size: tuple[str, str]) -> dict[str, tuple[int, list]]:
    """The values of one up step aligned by torch's lowered ``F.pad``, from its first Shape node on."""
    expected: dict[str, tuple[int, list]] = {}
    for axis_first in (first, first + 23):  # per axis: the extra size, its halves, unsqueezed
        for op, step, dims in (("shape", 0, [4]), ("gather", 3, []), ("shape", 5, [4]), ("gather", 8, []),
                               ("sub", 10, []), ("div", 13, []), ("unsqueeze", 16, [1]), ("sub", 18, []),
                               ("unsqueeze", 21, [1])):
            expected[f"{op}_{axis_first + step}"] = (I64, dims)
    for op, step, dims in (("concat", 46, [4]), ("shape", 49, [1]), ("sub", 51, [1]), ("constantofshape", 53, [4]),
                           ("concat", 55, [8]), ("reshape", 58, [4, 2]), ("slice", 64, [4, 2]),
                           ("transpose", 66, [2, 4]), ("reshape", 69, [8])):
        expected[f"{op}_{first + step}"] = (I64, dims)
    expected.update({f"pad_{first + 71}": _nchw(channels, *size), f"concat_{first + 73}": _nchw(2 * channels, *size)})
    return expected


def _unet_pad_expectations() -> dict[str, tuple[int, list]]:
    full, half = ("H", "W"), ("H//2", "W//2")
    down = {name: value for name, value in _unet_expectations().items()
            if name != "mask" and int(name.rsplit("_", 1)[1]) <= 25}
    return {**down, **_pad_block(27, 16, half), "conv_104": _nchw(16, *half), "relu_106": _nchw(16, *half),
            "convtranspose_110": _nchw(8, "2*(H//2)", "2*(W//2)"), **_pad_block(112, 8, full),
            "conv_189": _nchw(8, *full), "relu_191": _nchw(8, *full), "conv_194": _nchw(2, *full),
            "mask": _nchw(2, *full)}


@pytest.mark.parametrize("opset", [11, 17, 19])
def test_unet_every_value(opset):
    assert _infer(em.unet(opset)) == _unet_expectations()


def test_unet_padded_to_the_skip_every_value():
    # The pads are (skip - up) // 2 and the rest, through torch's reversal of (begin, end) rows: the
    # padded tensor takes the skip's size exactly.
    assert _infer(em.unet(align="pad")) == _unet_pad_expectations()


def _detection_expectations(reduce: str) -> dict[str, tuple[int, list]]:
    k, kept = "min(10,N)", "unk__0"  # NonMaxSuppression's count depends on the scores: a fresh dim
    first = 12 if reduce == "ReduceMin" else 10
    names = iter(f"{op}_{first + step}" for op, step in (
        ("cast", 2), ("topk", 4), ("topk", 5), ("gather", 7), ("unsqueeze", 10), ("unsqueeze", 13),
        ("nonmaxsuppression", 18), ("gather", 21)))
    expected: dict[str, tuple[int, list]] = {"shape_1": (I64, [1]), "gather_4": (I64, []), "unsqueeze_7": (I64, [1]),
                ("reducemin_12" if reduce == "ReduceMin" else "min_10"): (I64, [1])}
    if reduce == "ReduceMin":
        expected["concat_10"] = (I64, [2])
    for value in ((I64, [1]), (F, [k]), (I64, [k]), (F, [k, 4]), (F, [1, k, 4]), (F, [1, 1, k]),
                  (I64, [kept, 3]), (I64, [kept])):
        expected[next(names)] = value
    expected.update({"kept_boxes": (F, [kept, 4]), "kept_scores": (F, [kept])})
    return expected


@pytest.mark.parametrize("opset", [13, 18, 21])
@pytest.mark.parametrize("reduce", ["ReduceMin", "Min"])
def test_detection_head_every_value(reduce, opset):
    assert _infer(em.detection_head(reduce, opset)) == _detection_expectations(reduce)


@pytest.mark.parametrize("opset", [13, 21, 24])
def test_quantized_matmul_every_value(opset):
    assert _infer(em.quantized_matmul(opset)) == {
        "dynamicquantizelinear_1": (U8, ["B", "S", 64]), "dynamicquantizelinear_2": (F, []),
        "dynamicquantizelinear_3": (U8, []), "matmulinteger_7": (I32, ["B", "S", 32]), "mul_10": (F, []),
        "cast_12": (F, ["B", "S", 32]), "mul_14": (F, ["B", "S", 32]), "add_17": (F, ["B", "S", 32]),
        "quantizelinear_21": (U8, ["B", "S", 32]), "dequantizelinear_23": (F, ["B", "S", 32]),
        "dequantizelinear_28": (F, [32, 16]), "y": (F, ["B", "S", 16]),
    }


@pytest.mark.parametrize("opset", [14, 22])
@pytest.mark.parametrize("with_lengths", [False, True])
def test_bidirectional_lstm_every_value(with_lengths, opset):
    state = (F, [2, "B", 20])
    assert _infer(em.bidirectional_lstm(with_lengths, opset)) == {
        "transpose_1": (F, ["S", "B", 10]), "shape_3": (I64, [3]), "gather_6": (I64, []), "unsqueeze_9": (I64, [1]),
        "concat_13": (I64, [3]), "constantofshape_15": state, "constantofshape_17": state,
        "lstm_22": (F, ["S", 2, "B", 20]), "lstm_23": state, "lstm_24": state,
        "transpose_26": (F, ["S", "B", 2, 20]), "reshape_29": (F, ["S", "B", 40]), "features": (F, ["B", "S", 40]),
    }


@pytest.mark.parametrize("opset", [23, 24])
def test_rotary_attention_every_value(opset):
    bsh, heads, scores = (F, ["B", "S", 64]), (F, ["B", 4, "S", 16]), (F, ["B", 4, "S", "S"])
    expected = {"shape_1": (I64, [3]), "gather_4": (I64, [1]), "gather_7": (I64, [1]), "concat_10": (I64, [4]),
                "gather_13": (F, ["B", "S", 8]), "gather_16": (F, ["B", "S", 8])}
    for start in (19, 28, 37):  # Q, K, V: MatMul, Reshape to heads, Transpose (and RotaryEmbedding on Q, K)
        expected.update({f"matmul_{start}": bsh, f"reshape_{start + 2}": (F, ["B", "S", 4, 16]),
                         f"transpose_{start + 4}": heads})
        if start != 37:
            expected[f"rotaryembedding_{start + 6}"] = heads
    expected.update({"transpose_43": (F, ["B", 4, 16, "S"]), "matmul_45": scores, "div_48": scores,
                     "softmax_50": scores, "matmul_52": heads, "transpose_54": (F, ["B", "S", 4, 16]),
                     "concat_57": (I64, [3]), "reshape_59": bsh, "attended": bsh})
    assert _infer(em.rotary_attention(opset=opset)) == expected


def test_fused_attention_appends_the_new_tokens_to_the_cache():
    assert _infer(em.fused_attention()) == {
        "matmul_2": (F, ["B", "S", 64]), "matmul_5": (F, ["B", "S", 32]), "matmul_8": (F, ["B", "S", 32]),
        "context": (F, ["B", "S", 64]),
        "present_key": (F, ["B", 2, "P+S", 16]), "present_value": (F, ["B", 2, "P+S", 16]),
    }


def test_fused_attention_4d_with_mask_and_qk_output():
    assert _infer(em.fused_attention_4d()) == {
        "context": (F, ["B", 4, "S", 16]), "present_key": (F, ["B", 2, "P+S", 16]),
        "present_value": (F, ["B", 2, "P+S", 16]), "qk": (F, ["B", 4, "S", "P+S"]),
    }


def test_vit_embedding_any_image_size():
    grid = "(H//16)*(W//16)"
    assert _infer(em.vit_embedding()) == {
        "conv_2": (F, ["N", 64, "H//16", "W//16"]), "shape_4": (I64, [4]), "slice_8": (I64, [2]),
        "reduceprod_10": (I64, [1]), "slice_14": (I64, [2]), "concat_16": (I64, [3]),
        "reshape_18": (F, ["N", 64, grid]), "transpose_20": (F, ["N", grid, 64]),
        "slice_24": (I64, [1]), "concat_27": (I64, [3]), "equal_30": (TensorProto.BOOL, [3]), "where_33": (I64, [3]),
        "expand_36": (F, ["N", 1, 64]),  # Equal(N, -1) is false: N is a size
        "concat_38": (F, ["N", f"{grid}+1", 64]), "shape_40": (I64, [3]), "gather_43": (I64, []),
        "unsqueeze_46": (I64, [1]), "slice_51": (F, [1, f"min(197,{grid}+1)", 64]),
        "embedded": (F, ["N", f"{grid}+1", 64]),  # T and min(197, T) broadcast only as T
    }


def test_interpolate_by_constant_scale_factors():
    assert _infer(em.interpolate_pyramid()) == {
        "resize_2": (F, ["N", 8, "H//2", "W//2"]), "resize_5": (F, ["N", 8, "2*(H//2)", "2*(W//2)"]),
        "resize_8": (F, ["N", 8, "3*(H//2)", "3*(W//2)"]), "y": (F, ["N", 4, "3*(H//2)", "3*(W//2)"]),
    }


def _feeds(model, sizes: dict[str, int], rng) -> dict[str, np.ndarray]:
    """Random inputs of the given symbolic sizes (lengths at most the sequence, position ids in range)."""
    feeds = {}
    for value in model.graph.input:
        tensor = value.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else sizes[d.dim_param] for d in tensor.shape.dim]
        if value.name == "lengths":
            feeds[value.name] = rng.integers(1, sizes["S"] + 1, shape).astype(np.int32)
        elif tensor.elem_type == I64:
            feeds[value.name] = rng.integers(0, 128, shape)
        else:
            feeds[value.name] = rng.random(shape, dtype=np.float32)
    return feeds


MODELS = {"unet": em.unet, "unet_pad": lambda: em.unet(align="pad"), "detection_reduce_min": em.detection_head,
          "detection_min": lambda: em.detection_head("Min"), "quantized": em.quantized_matmul, "lstm": em.bidirectional_lstm,
          "lstm_lengths": lambda: em.bidirectional_lstm(True), "rotary_attention": em.rotary_attention,
          "fused_attention": em.fused_attention, "fused_attention_4d": em.fused_attention_4d,
          "vit_embedding": em.vit_embedding, "interpolate_pyramid": em.interpolate_pyramid}
SIZES = {"unet": [{"N": 1, "H": 10, "W": 14}, {"N": 2, "H": 9, "W": 4}],
         "unet_pad": [{"N": 1, "H": 11, "W": 14}, {"N": 2, "H": 9, "W": 7}],
         "detection_reduce_min": [{"N": 7}, {"N": 13}], "detection_min": [{"N": 3}, {"N": 12}],
         "quantized": [{"B": 2, "S": 3}], "lstm": [{"B": 3, "S": 5}], "lstm_lengths": [{"B": 2, "S": 4}],
         "rotary_attention": [{"B": 2, "S": 5}], "fused_attention": [{"B": 2, "S": 3, "P": 4}],
         "fused_attention_4d": [{"B": 2, "S": 3, "P": 4, "T": 7}],
         "vit_embedding": [{"N": 2, "H": 32, "W": 48}, {"N": 1, "H": 47, "W": 16}],
         "interpolate_pyramid": [{"N": 1, "H": 7, "W": 10}, {"N": 2, "H": 12, "W": 5}]}
#: Values onnx gives a wrong dim: with symbolic past and new lengths it writes 0 for QK's key count.
ONNX_WRONG = {"fused_attention_4d": {"qk"}}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_inferred_dims_hold_on_a_run(name):
    """Run with onnx's reference evaluator: each dim formula evaluates to the size the run gives, and a
    fresh dim stands for one size wherever it appears."""
    inferred = _infer(MODELS[name]())
    model = MODELS[name]()
    del model.graph.output[:]
    model.graph.output.extend(helper.make_value_info(value, onnx.TypeProto()) for value in inferred)
    for sizes in SIZES[name]:
        results = ReferenceEvaluator(model).run(None, _feeds(model, sizes, np.random.default_rng(0)))
        fresh: dict[str, int] = {}
        for (value, (_, dims)), result in zip(inferred.items(), results):
            assert dims is not None and len(dims) == result.ndim, value
            for dim, actual in zip(dims, result.shape):
                parsed = parse_dim(dim) if isinstance(dim, str) else dim
                assert parsed is not None, (value, "an unknown dim")
                if isinstance(parsed, int):
                    assert parsed == actual, value
                elif parsed.names() <= set(sizes):
                    assert parsed.evaluate(sizes) == actual, (value, dim)
                else:
                    assert fresh.setdefault(dim, actual) == actual, (value, dim)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_agrees_with_onnx_wherever_onnx_is_exact(name):
    """Every value onnx types, opspec types too, with the same element type and rank, and the same dim
    wherever onnx's is a number or a name of the graph (its invented ``unk__`` names say only "unknown")."""
    model = MODELS[name]()
    ours = _infer(model)
    theirs = value_types(onnx.shape_inference.infer_shapes(model, data_prop=True, strict_mode=True))
    assert set(ours) >= set(theirs)
    for value, (elem, dims) in theirs.items():
        assert ours[value][0] == elem, value
        if dims is None or value in ONNX_WRONG.get(name, ()):
            continue
        mine_dims = ours[value][1]
        assert mine_dims is not None and len(mine_dims) == len(dims), value
        for mine, reference in zip(mine_dims, dims):
            if reference is not None and not str(reference).startswith("unk__"):
                assert mine == reference, value
