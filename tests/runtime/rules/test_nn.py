"""Tests for opspec.runtime.rules.nn: convolution, pooling and normalization shapes."""
import math
import random
from typing import Any

import numpy as np
import pytest

import opspec
from opspec.runtime.contract import InferenceContext, InferenceError
from opspec.runtime.contract import TensorType
from opspec.runtime.shape import ShapeError, Sym, parse_dim
from opspec.runtime.testing import apply_rule, make_context

F, F16, BF16, I64 = 1, 10, 16, 7
N, H, W = Sym("N"), Sym("H"), Sym("W")


def t(*dims):
    return TensorType(F, None if dims == (None,) else tuple(dims))


def run_nn(op, version, inputs, attributes=None, outputs=None):
    schema = opspec.get_schema(op, version)
    ctx = make_context(schema, list(inputs), dict(attributes or {}), output_count=outputs)
    apply_rule(ctx)
    return ctx


def shape(ctx, index=0):
    return ctx.output_type(index).shape


def window_length(size, kernel, stride=1, dilation=1, begin=0, end=0, auto_pad="NOTSET", ceil_mode=False):
    """The output length of one spatial axis, written out directly."""
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        return math.ceil(size / stride)
    if auto_pad == "VALID":
        begin = end = 0
    extent = (kernel - 1) * dilation + 1
    if not ceil_mode:
        return (size + begin + end - extent) // stride + 1
    out = math.ceil((size + begin + end - extent) / stride) + 1
    return out - 1 if (out - 1) * stride >= size + begin else out


def evaluate(dim, **values):
    return dim if type(dim) is int else dim.evaluate(values)


# ----------------------------------------------------------------------------- conv

@pytest.mark.parametrize("x, w, attributes, expected", [
    ((1, 3, 32, 32), (8, 3, 3, 3), {}, (1, 8, 30, 30)),
    ((1, 3, 32, 32), (8, 3, 3, 3), {"pads": [1, 1, 1, 1]}, (1, 8, 32, 32)),
    ((1, 3, 32, 32), (8, 3, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1]}, (1, 8, 16, 16)),
    ((1, 3, 32, 32), (8, 3, 3, 3), {"dilations": [2, 2]}, (1, 8, 28, 28)),
    ((1, 3, 32, 30), (8, 3, 3, 5), {"pads": [0, 1, 2, 3]}, (1, 8, 32, 30)),
    ((1, 3, 31), (8, 3, 4), {"strides": [3], "auto_pad": "SAME_UPPER"}, (1, 8, 11)),
    ((1, 3, 31), (8, 3, 4), {"strides": [3], "auto_pad": "SAME_LOWER"}, (1, 8, 11)),
    ((1, 3, 31), (8, 3, 4), {"strides": [3], "auto_pad": "VALID"}, (1, 8, 10)),
    ((1, 4, 10, 10), (8, 2, 3, 3), {"group": 2}, (1, 8, 8, 8)),
    ((1, 4, 10, 10), (8, 1, 3, 3), {"group": 4}, (1, 8, 8, 8)),
    ((2, 3, 8, 8, 8), (4, 3, 2, 2, 2), {"strides": [2, 2, 2]}, (2, 4, 4, 4, 4)),
    ((1, 3, 10, 10), (8, 3, None, None), {"kernel_shape": [3, 3]}, (1, 8, 8, 8)),
    ((1, 3, 10, 10), (8, 3, None, None), {}, (1, 8, None, None)),
    ((N, 3, H, W), (8, 3, 3, 3), {"pads": [1, 1, 1, 1]}, (N, 8, H, W)),
    ((N, 3, H, W), (8, 3, 3, 3), {}, (N, 8, H - 2, W - 2)),
    ((N, 3, H, W), (8, 3, 1, 1), {"strides": [2, 2], "auto_pad": "SAME_UPPER"},
     (N, 8, parse_dim("ceil(H/2)"), parse_dim("ceil(W/2)"))),
    ((N, None, None, 5), (8, 3, 3, 3), {}, (N, 8, None, 3)),
    (None, (8, 3, 3, 3), {}, (None, 8, None, None)),
    ((1, 3, 10, 10), None, {"kernel_shape": [3, 3]}, (1, None, 8, 8)),
    (None, None, {"strides": [1, 1, 1]}, (None, None, None, None, None)),
    (None, None, {}, None),
])
def test_conv(x, w, attributes, expected):
    inputs = [t(None) if x is None else t(*x), t(None) if w is None else t(*w)]
    assert shape(run_nn("Conv", 11, inputs, attributes)) == expected


def test_conv_symbolic_strided_output_is_exact():
    dim = shape(run_nn("Conv", 11, [t(1, 3, H), t(8, 3, 3)], {"strides": [2], "pads": [1, 0]}))[2]
    for h in range(3, 40):
        assert evaluate(dim, H=h) == window_length(h, 3, 2, begin=1)


def test_conv_bias():
    assert shape(run_nn("Conv", 11, [t(1, 3, 5), t(None, 3, 3), t(8)])) == (1, 8, 3)
    with pytest.raises(InferenceError, match="B \\(7,\\) must be 1-D"):
        run_nn("Conv", 11, [t(1, 3, 5), t(8, 3, 3), t(7)])
    with pytest.raises(InferenceError, match="must be 1-D"):
        run_nn("Conv", 11, [t(1, 3, 5), t(8, 3, 3), t(8, 1)])


@pytest.mark.parametrize("x, w, attributes, message", [
    ((1, 3, 10), (8, 4, 3), {}, "3 channels"),
    ((1, 4, 10), (6, 2, 3), {"group": 4}, "expects 2 per group"),
    ((1, 4, 10), (6, 2, 3), {"group": 2, "strides": [1, 1]}, "spatial axes"),
    ((1, 4, 10), (6, 4, 3, 3), {}, "spatial axes"),
    ((1, 6, 10), (5, 3, 3), {"group": 2}, "5 filters"),
    ((1, 3, 10), (8, 3, 3), {"pads": [1, 1, 1]}, "spatial axes"),
    ((1, 3, 10), (8, 3, 3), {"strides": [0]}, "must be positive"),
    ((1, 3, 10), (8, 3, 3), {"dilations": [0]}, "must be positive"),
    ((1, 3, 10), (8, 3, 3), {"pads": [-1, 0]}, "must not be negative"),
    ((1, 3, 10), (8, 3, 3), {"auto_pad": "SAME"}, "not one of"),
    ((1, 3, 10), (8, 3, 3), {"auto_pad": "VALID", "pads": [1, 1]}, "cannot be combined"),
    ((1, 3, 10), (8, 3, 3), {"kernel_shape": [5]}, "disagrees with W"),
    ((1, 3, 2), (8, 3, 5), {}, "covers 5 positions"),
    ((1, 3, 4), (8, 3, 3), {"dilations": [2]}, "covers 5 positions"),
    ((1, 3), (8, 3), {}, "rank 3 or more"),
    ((1, 3, 10), (8, 3, 3), {"group": 0}, "group 0"),
])
def test_conv_errors(x, w, attributes, message):
    with pytest.raises(InferenceError, match=message):
        run_nn("Conv", 11, [t(*x), t(*w)], attributes)


def test_conv_accepts_zero_pads_with_auto_pad():
    ctx = run_nn("Conv", 11, [t(1, 3, 10), t(8, 3, 3)], {"auto_pad": "SAME_UPPER", "pads": [0, 0]})
    assert shape(ctx) == (1, 8, 10)


def test_conv_matches_formula():
    rng = random.Random(10)
    for _ in range(300):
        count = rng.randint(1, 3)
        sizes = [rng.randint(1, 20) for _ in range(count)]
        kernel = [rng.randint(1, 4) for _ in range(count)]
        strides = [rng.randint(1, 3) for _ in range(count)]
        dilations = [rng.randint(1, 3) for _ in range(count)]
        pads = [rng.randint(0, 3) for _ in range(2 * count)]
        auto_pad = rng.choice(["NOTSET", "NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"])
        attributes = {"strides": strides, "dilations": dilations, "auto_pad": auto_pad}
        if auto_pad == "NOTSET":
            attributes["pads"] = pads
        else:
            pads = [0] * (2 * count)
        expected = [window_length(d, k, s, dl, pads[i], pads[i + count], auto_pad)
                    for i, (d, k, s, dl) in enumerate(zip(sizes, kernel, strides, dilations))]
        inputs = [t(2, 3, *sizes), t(5, 3, *kernel)]
        if min(expected) < 1:
            with pytest.raises(InferenceError):
                run_nn("Conv", 11, inputs, attributes)
            continue
        assert shape(run_nn("Conv", 11, inputs, attributes)) == (2, 5, *expected)
        # The same with symbolic spatial dims, evaluated back.
        symbols = [Sym(f"D{i}") for i in range(count)]
        dims = shape(run_nn("Conv", 11, [t(2, 3, *symbols), t(5, 3, *kernel)], attributes))[2:]
        values = {f"D{i}": d for i, d in enumerate(sizes)}
        assert [evaluate(d, **values) for d in dims] == expected


# ----------------------------------------------------------------------------- pooling

@pytest.mark.parametrize("op, version, attributes, expected", [
    ("MaxPool", 1, {"kernel_shape": [2, 2]}, (1, 3, 4, 5)),
    ("MaxPool", 12, {"kernel_shape": [2, 2], "strides": [2, 2]}, (1, 3, 2, 3)),
    ("MaxPool", 12, {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}, (1, 3, 3, 3)),
    ("MaxPool", 12, {"kernel_shape": [3, 3], "dilations": [2, 2]}, (1, 3, 1, 2)),
    ("MaxPool", 12, {"kernel_shape": [3, 3], "auto_pad": "SAME_UPPER", "strides": [2, 2]}, (1, 3, 3, 3)),
    ("MaxPool", 12, {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, (1, 3, 5, 6)),
    ("AveragePool", 7, {"kernel_shape": [2, 2], "strides": [2, 2]}, (1, 3, 2, 3)),
    ("AveragePool", 11, {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}, (1, 3, 3, 3)),
    ("AveragePool", 19, {"kernel_shape": [2, 2], "dilations": [2, 2]}, (1, 3, 3, 4)),
    ("AveragePool", 11, {"kernel_shape": [2, 2], "auto_pad": "VALID"}, (1, 3, 4, 5)),
])
def test_pool(op, version, attributes, expected):
    assert shape(run_nn(op, version, [t(1, 3, 5, 6)], attributes)) == expected


def test_pool_attributes_a_version_lacks_are_ignored():
    # Dilations arrive with MaxPool 10 and AveragePool 19; ceil_mode with version 10.
    assert shape(run_nn("AveragePool", 11, [t(1, 3, 6)], {"kernel_shape": [2], "dilations": [3]})) == (1, 3, 5)
    assert shape(run_nn("MaxPool", 8, [t(1, 3, 5)], {"kernel_shape": [2], "strides": [2], "ceil_mode": 1})) == (1, 3, 2)


def test_pool_ceil_mode_drops_a_window_starting_in_the_end_padding():
    # (5 + 1 - 2) / 2 rounds up to 2, but the third window would start at 4 + ... = the end pad.
    ctx = run_nn("MaxPool", 12, [t(1, 1, 4)], {"kernel_shape": [2], "strides": [2], "pads": [0, 1], "ceil_mode": 1})
    assert shape(ctx) == (1, 1, 2)
    assert window_length(4, 2, 2, end=1, ceil_mode=True) == 2


def test_pool_ceil_mode_keeps_one_window_overhanging_the_padding():
    attributes = {"kernel_shape": [4], "strides": [2], "dilations": [2], "pads": [1, 1]}
    assert shape(run_nn("MaxPool", 12, [t(1, 1, 4)], {**attributes, "ceil_mode": 1})) == (1, 1, 1)
    with pytest.raises(InferenceError, match="covers 7 positions"):
        run_nn("MaxPool", 12, [t(1, 1, 4)], attributes)


def test_max_pool_indices():
    ctx = run_nn("MaxPool", 12, [t(N, 3, 8, 8)], {"kernel_shape": [2, 2], "strides": [2, 2]}, outputs=2)
    assert shape(ctx, 0) == (N, 3, 4, 4)
    assert ctx.output_type(1) == TensorType(I64, (N, 3, 4, 4))
    ctx = run_nn("MaxPool", 12, [t(N, 3, 8, 8)], {"kernel_shape": [2, 2]}, outputs=1)
    assert ctx.output_count == 1


def test_pool_unknown_and_symbolic():
    assert shape(run_nn("MaxPool", 12, [t(None)], {"kernel_shape": [2, 2]})) == (None,) * 4
    assert shape(run_nn("MaxPool", 12, [t(N, 3, None, H)], {"kernel_shape": [2, 2], "strides": [2, 2]})) == \
        (N, 3, None, H // 2)
    ctx = run_nn("MaxPool", 12, [t(1, 3, H)], {"kernel_shape": [3], "strides": [2], "ceil_mode": 1})
    assert shape(ctx) == (1, 3, parse_dim("ceil((H-3)/2)+1"))


def test_symbolic_ceil_mode_is_exact_or_unknown():
    rng = random.Random(11)
    for _ in range(300):
        k, s, d = rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 2)
        begin, end = rng.randint(0, k - 1), rng.randint(0, k - 1)
        attributes = {"kernel_shape": [k], "strides": [s], "dilations": [d], "pads": [begin, end], "ceil_mode": 1}
        dim = shape(run_nn("MaxPool", 12, [t(1, 1, H)], attributes))[2]
        scaled = shape(run_nn("MaxPool", 12, [t(1, 1, s * H + 5)], attributes))[2]
        for h in range(k * d, 30):
            if dim is not None:
                assert evaluate(dim, H=h) == window_length(h, k, s, d, begin, end, ceil_mode=True)
            if scaled is not None:
                assert evaluate(scaled, H=h) == window_length(s * h + 5, k, s, d, begin, end, ceil_mode=True)
        if (k - 1) * d + 1 - end >= s:
            assert dim is not None
        assert scaled is not None  # s*H + 5 has a known remainder modulo s


@pytest.mark.parametrize("x, attributes, message", [
    ((1, 3, 5), {}, "kernel_shape' is required"),
    ((1, 3, 5), {"kernel_shape": [2, 2]}, "must have rank 4"),
    ((1, 3, 5), {"kernel_shape": [2], "strides": [1, 1]}, "strides"),
    ((1, 3, 5), {"kernel_shape": [0]}, "must be positive"),
    ((1, 3, 2), {"kernel_shape": [3]}, "covers 3 positions"),
])
def test_pool_errors(x, attributes, message):
    with pytest.raises(InferenceError, match=message):
        run_nn("MaxPool", 12, [t(*x)], attributes)


def test_pool_matches_formula_and_reference():
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    rng = random.Random(12)
    for trial in range(300):
        op = rng.choice(["MaxPool", "AveragePool"])
        count = rng.randint(1, 2)
        sizes = [rng.randint(1, 12) for _ in range(count)]
        kernel = [rng.randint(1, 4) for _ in range(count)]
        strides = [rng.randint(1, 3) for _ in range(count)]
        dilations = [rng.randint(1, 2) for _ in range(count)]
        pads = [rng.randint(0, k - 1) for k in kernel * 2]
        ceil_mode = rng.randint(0, 1)
        attributes: dict[str, Any] = {"kernel_shape": kernel, "strides": strides, "dilations": dilations,
                                      "pads": pads, "ceil_mode": ceil_mode}
        expected = [window_length(d, k, s, dl, pads[i], pads[i + count], ceil_mode=ceil_mode)
                    for i, (d, k, s, dl) in enumerate(zip(sizes, kernel, strides, dilations))]
        if min(expected) < 1:
            with pytest.raises(InferenceError):
                run_nn(op, 19, [t(1, 2, *sizes)], attributes)
            continue
        assert shape(run_nn(op, 19, [t(1, 2, *sizes)], attributes)) == (1, 2, *expected)
        if trial % 5 == 0:  # the onnx reference implementation agrees
            node = helper.make_node(op, ["x"], ["y"], **attributes)
            graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
            x = np.random.default_rng(trial).random((1, 2, *sizes), dtype=np.float32)
            results = ReferenceEvaluator(model).run(None, {"x": x})
            assert isinstance(results, list) and results[0].shape == (1, 2, *expected), attributes


def test_global_pool():
    assert shape(run_nn("GlobalAveragePool", 1, [t(N, 3, H, W)])) == (N, 3, 1, 1)
    assert shape(run_nn("GlobalAveragePool", 22, [t(2, 3, 4)])) == (2, 3, 1)
    assert shape(run_nn("GlobalAveragePool", 1, [t(2, 3)])) == (2, 3)
    assert shape(run_nn("GlobalAveragePool", 1, [t(None)])) is None
    with pytest.raises(InferenceError, match=r"X: shape \(3,\) must have rank at least 2"):
        run_nn("GlobalAveragePool", 1, [t(3)])


# ----------------------------------------------------------------------------- batch normalization

def bn_inputs(x, c=3, stats=None):
    stats = stats if stats is not None else (c,)
    return [t(*x) if x is not None else t(None)] + [t(*stats)] * 4


def test_batch_norm_inference():
    ctx = run_nn("BatchNormalization", 15, bn_inputs((N, 3, H, W)), outputs=1)
    assert shape(ctx) == (N, 3, H, W)


def test_batch_norm_training_outputs():
    ctx = run_nn("BatchNormalization", 15, bn_inputs((N, 3, H, W)), {"training_mode": 1}, outputs=3)
    assert [shape(ctx, i) for i in range(3)] == [(N, 3, H, W), (3,), (3,)]
    ctx = run_nn("BatchNormalization", 14, bn_inputs((N, None, H), stats=(C := Sym("C"),)), {"training_mode": 1},
              outputs=3)
    assert [shape(ctx, i) for i in range(3)] == [(N, None, H), (C,), (C,)]


def test_batch_norm_training_mode_off_allows_only_y():
    with pytest.raises(InferenceError, match="training_mode=1"):
        run_nn("BatchNormalization", 15, bn_inputs((2, 3, 4)), {}, outputs=3)


def test_batch_norm_old_versions():
    ctx = run_nn("BatchNormalization", 9, bn_inputs((2, 3, 4)), {}, outputs=5)
    assert [shape(ctx, i) for i in range(5)] == [(2, 3, 4)] + [(3,)] * 4
    ctx = run_nn("BatchNormalization", 6, bn_inputs((2, 3, 4)), {"is_test": 1}, outputs=1)
    assert shape(ctx) == (2, 3, 4)
    # spatial=0 keeps one statistic per feature: X.shape[1:].
    ctx = run_nn("BatchNormalization", 7, bn_inputs((2, 3, 4), stats=(3, 4)), {"spatial": 0}, outputs=3)
    assert [shape(ctx, i) for i in range(3)] == [(2, 3, 4), (3, 4), (3, 4)]


def test_batch_norm_unknown_and_rank_1():
    ctx = run_nn("BatchNormalization", 15, bn_inputs(None, 5), {"training_mode": 1}, outputs=3)
    assert [shape(ctx, i) for i in range(3)] == [None, (5,), (5,)]
    ctx = run_nn("BatchNormalization", 15, bn_inputs((7,), 1), {"training_mode": 1}, outputs=2)
    assert shape(ctx, 1) == (1,)


def test_batch_norm_errors():
    with pytest.raises(InferenceError, match="does not match 3 channels"):
        run_nn("BatchNormalization", 15, bn_inputs((2, 3, 4), 4), outputs=1)
    with pytest.raises(InferenceError, match="must be 1-D"):
        run_nn("BatchNormalization", 15, bn_inputs((2, 3, 4), stats=(3, 1)), outputs=1)
    with pytest.raises(InferenceError, match=r"X: shape \(\) must have rank at least 1"):
        run_nn("BatchNormalization", 15, bn_inputs(()), outputs=1)


# ----------------------------------------------------------------------------- layer normalization

@pytest.mark.parametrize("x, axis, expected", [
    ((2, 3, 4), None, (2, 3, 1)),
    ((2, 3, 4), 1, (2, 1, 1)),
    ((2, 3, 4), 0, (1, 1, 1)),
    ((2, 3, 4), -2, (2, 1, 1)),
    ((N, H, 4), 2, (N, H, 1)),
])
def test_layer_norm(x, axis, expected):
    attributes = {} if axis is None else {"axis": axis}
    ctx = run_nn("LayerNormalization", 17, [t(*x), t(x[-1])], attributes, outputs=3)
    assert shape(ctx) == x
    assert ctx.output_type(1) == TensorType(F, expected)
    assert ctx.output_type(2) == TensorType(F, expected)


def test_layer_norm_stash_type_and_unknown_rank():
    ctx = run_nn("LayerNormalization", 17, [TensorType(F16, (2, 4)), TensorType(F16, (4,))],
              {"stash_type": BF16}, outputs=2)
    assert ctx.output_type(1) == TensorType(BF16, (2, 1))
    ctx = run_nn("LayerNormalization", 17, [t(None), t(4)], {}, outputs=3)
    assert shape(ctx) is None
    assert ctx.output_type(1) == TensorType(F, None)


def test_layer_norm_errors():
    with pytest.raises(InferenceError, match="out of range"):
        run_nn("LayerNormalization", 17, [t(2, 3), t(3)], {"axis": 2})
    with pytest.raises(ShapeError, match="cannot broadcast"):
        run_nn("LayerNormalization", 17, [t(2, 3), t(4)])
    with pytest.raises(ShapeError, match="cannot broadcast"):
        run_nn("LayerNormalization", 17, [t(2, 3), t(3), t(2, 2, 3)])
