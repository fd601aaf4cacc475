"""onnxruntime's blocked channel layout (com.microsoft.nchwc), held against its CPU kernels.

The kernels exist only where the machine has a block size above 1 (x86-64 with AVX or later,
ARM64); the runs are skipped elsewhere. The padded channel count depends on the block size (8
or 16), so a channel count that is not a multiple of 16 must come out unknown.
"""
from __future__ import annotations

from functools import partial

import numpy as np
import onnx
import onnxruntime
import ort_cases
import pytest
from onnx import TensorProto, helper, numpy_helper
from ort_cases import ones
from ort_models import session_optimized
from ort_oracle import F, Case, In, check

import opspec
from opspec.runtime.contract import InferenceError
from opspec.runtime.rules.ort_nchwc import blocked_channels
from opspec.runtime.shape import Sym, parse_dim
from opspec.runtime.testing import run_rule, t

NCHWC = "com.microsoft.nchwc"
N, H, W = Sym("N"), Sym("H"), Sym("W")
SETTINGS = [{"N": 2, "H": 7, "W": 9}, {"N": 1, "H": 5, "W": 6}]
exact = partial(ort_cases.exact, settings=SETTINGS)


def _nchwc_kernels() -> bool:
    node = helper.make_node("ReorderInput", ["x"], ["y"], domain=NCHWC)
    graph = helper.make_graph([node], "probe", [helper.make_tensor_value_info("x", F, [1, 16, 2, 2])],
                              [helper.make_tensor_value_info("y", F, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid(NCHWC, 1)],
                              ir_version=10)
    try:
        onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    except Exception:  # noqa: BLE001 - onnxruntime's errors share no base class
        return False
    return True


needs_kernels = pytest.mark.skipif(not _nchwc_kernels(), reason="this machine has no NCHWc kernels")


def _block_size() -> int:
    """This machine's NCHWc block size: the channel count ReorderInput pads 8 channels to (8 with
    AVX2, 16 with AVX-512)."""
    verdict = check(Case("ReorderInput", NCHWC, [In(F, ("N", 8, "H", "W"))]), SETTINGS[:1])
    return verdict.runs[0][0][1][1]


def _round_up(count: int, block: int) -> int:
    return -(-count // block) * block


# ---------------------------------------------------------------------------------- reordering

@needs_kernels
@pytest.mark.parametrize("x, attributes, shape", [
    (("N", 32, "H", "W"), {}, (N, 32, H, W)),
    (("N", "H", "W", 16), {"channels_last": 1}, (N, 16, H, W)),
])
def test_reorder_input_keeps_multiples_of_16(x, attributes, shape):
    assert exact(Case("ReorderInput", NCHWC, [In(F, x)], attributes)) == [(F, shape)]


@needs_kernels
@pytest.mark.parametrize("x, attributes", [(("N", 24, "H", "W"), {}), (("N", 8, "H", "W"), {}),
                                            (("N", "H", "W", 12), {"channels_last": 1})])
def test_reorder_input_leaves_block_dependent_channels_unknown(x, attributes):
    verdict = check(Case("ReorderInput", NCHWC, [In(F, x)], attributes), SETTINGS)
    assert verdict.problems == []
    assert verdict.inferred == [(F, (N, None, H, W))]
    assert verdict.runs[0][0][1][1] % 8 == 0  # padded to this machine's block size


@pytest.mark.parametrize("channels, padded", [(16, 16), (48, 48), (0, 0), (8, None), (24, None), (3, None),
                                              (None, None), (Sym("C"), None)])
def test_blocked_channels(channels, padded):
    assert blocked_channels(channels) == padded


@needs_kernels
@pytest.mark.parametrize("attributes, shape", [
    ({"channels": 20}, (N, 20, H, W)),
    ({"channels": 32}, (N, 32, H, W)),
    ({"channels": 20, "channels_last": 1}, (N, H, W, 20)),
])
def test_reorder_output_against_onnxruntime(attributes, shape):
    """The blocked input holds the channels padded to this machine's block size, as the kernel requires."""
    blocked = _round_up(attributes["channels"], _block_size())
    assert exact(Case("ReorderOutput", NCHWC, [In(F, ("N", blocked, "H", "W"))], attributes)) == [(F, shape)]


def test_reorder_errors_and_unknowns():
    with pytest.raises(InferenceError, match="positive"):
        run_rule("ReorderOutput", 1, [t(N, 16, H, W)], {}, domain=NCHWC)
    with pytest.raises(InferenceError):
        run_rule("ReorderInput", 1, [t(N)], domain=NCHWC)
    assert run_rule("ReorderOutput", 1, [t(None)], {"channels": 4}, domain=NCHWC).output_type(0).shape is None
    assert run_rule("ReorderInput", 1, [t(None)], domain=NCHWC).output_type(0).shape is None
    assert run_rule("ReorderInput", 1, [t(N, None, H, W)], domain=NCHWC).output_type(0) == t(N, None, H, W)


# ---------------------------------------------------------------------------------- convolutions and pools

@needs_kernels
@pytest.mark.parametrize("inputs, attributes, shape", [
    ([In(F, ("N", 32, "H", "W")), ones(48, 32, 3, 3), ones(48)], {"pads": [1, 1, 1, 1]}, (N, 48, H, W)),
    ([In(F, ("N", 3, "H", "W")), ones(32, 3, 3, 3)], {"strides": [2, 2]}, (N, 32, (H - 3) // 2 + 1, (W - 3) // 2 + 1)),
    ([In(F, ("N", 32, "H", "W")), ones(32, 1, 3, 3)], {"group": 32, "pads": [1, 1, 1, 1], "activation": "Relu"},
     (N, 32, H, W)),
    ([In(F, ("N", 32, "H", "W")), ones(16, 32, 1, 1), ones(16), In(F, ("N", 16, "H", "W"))], {}, (N, 16, H, W)),
])
def test_conv_against_onnxruntime(inputs, attributes, shape):
    assert exact(Case("Conv", NCHWC, inputs, attributes)) == [(F, shape)]


@needs_kernels
@pytest.mark.parametrize("op, attributes, shape", [
    ("MaxPool", {"kernel_shape": [2, 2], "strides": [2, 2]}, (N, 32, H // 2, W // 2)),
    ("MaxPool", {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}, (N, 32, (H - 2) // 2 + 1, (W - 2) // 2 + 1)),
    ("AveragePool", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, (N, 32, H, W)),
    ("AveragePool", {"kernel_shape": [3, 3], "auto_pad": "SAME_UPPER", "strides": [2, 2]},
     (N, 32, (H + 1) // 2, (W + 1) // 2)),
    ("GlobalMaxPool", {}, (N, 32, 1, 1)),
    ("GlobalAveragePool", {}, (N, 32, 1, 1)),
])
def test_pools_against_onnxruntime(op, attributes, shape):
    assert exact(Case(op, NCHWC, [In(F, ("N", 32, "H", "W"))], attributes)) == [(F, shape)]


def test_pools_keep_unknown_channels():
    assert run_rule("MaxPool", 1, [t(N, None, H, W)], {"kernel_shape": [2, 2]}, domain=NCHWC).output_type(0) == \
        t(N, None, H - 1, W - 1)
    assert run_rule("GlobalAveragePool", 1, [t(N, None, H, W)], domain=NCHWC).output_type(0) == t(N, None, 1, 1)


# ---------------------------------------------------------------------------------- Upsample

@needs_kernels
@pytest.mark.parametrize("attributes, shape", [
    ({"scales": [1, 1, 2, 3]}, (N, 32, 2 * H, 3 * W)),
    ({"scales": [1, 1, 2, 2], "mode": "linear"}, (N, 32, 2 * H, 2 * W)),
    ({"scales": [1, 1, 4, 4], "coordinate_transformation_mode": "half_pixel", "mode": "linear"},
     (N, 32, 4 * H, 4 * W)),
])
def test_upsample_against_onnxruntime(attributes, shape):
    assert exact(Case("Upsample", NCHWC, [In(F, ("N", 32, "H", "W"))], attributes)) == [(F, shape)]


def test_upsample_errors_and_unknowns():
    assert run_rule("Upsample", 1, [t(N, 16, H, W)], domain=NCHWC).output_type(0) == t(None, None, None, None)
    with pytest.raises(InferenceError, match="one value per axis"):
        run_rule("Upsample", 1, [t(N, 16, H, W)], {"scales": [2, 2]}, domain=NCHWC)
    with pytest.raises(InferenceError, match="positive"):
        run_rule("Upsample", 1, [t(N, 16, H, W)], {"scales": [1, 1, 0, 2]}, domain=NCHWC)


# ---------------------------------------------------------------------------------- a graph the session writes

def _odd_cnn() -> onnx.ModelProto:
    """Channel counts that are not multiples of 16, a depthwise and a grouped convolution, pools."""
    rng = np.random.default_rng(0)
    inits: list[onnx.TensorProto] = []
    nodes: list[onnx.NodeProto] = []

    def weight(name: str, shape: tuple) -> str:
        inits.append(numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.1, name))
        return name

    def node(op: str, inputs: list, **attributes) -> str:
        out = f"v{len(nodes)}"
        nodes.append(helper.make_node(op, inputs, [out], **attributes))
        return out

    h = node("Conv", ["image", weight("w0", (24, 3, 3, 3)), weight("b0", (24,))], pads=[1, 1, 1, 1])
    h = node("Relu", [h])
    h = node("Conv", [h, weight("w1", (40, 24, 3, 3)), weight("b1", (40,))], pads=[1, 1, 1, 1])
    h = node("Conv", [h, weight("w2", (40, 1, 3, 3))], pads=[1, 1, 1, 1], group=40)
    h = node("MaxPool", [h], kernel_shape=[2, 2], strides=[2, 2])
    h = node("Conv", [h, weight("w3", (32, 40, 1, 1))])
    h = node("AveragePool", [h], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    h = node("GlobalAveragePool", [h])
    graph = helper.make_graph(nodes, "odd_cnn", [helper.make_tensor_value_info("image", F, ["N", 3, "H", "W"])],
                              [helper.make_tensor_value_info(h, F, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10)


def _dims(value: onnx.ValueInfoProto) -> tuple | None:
    tensor = value.type.tensor_type
    if not tensor.HasField("shape"):
        return None
    return tuple(d.dim_value if d.HasField("dim_value") else parse_dim(d.dim_param) if d.dim_param else None
                 for d in tensor.shape.dim)


@needs_kernels
def test_session_optimized_cnn_every_value_against_a_run():
    """The graph a session saves at level "all" (NCHWc nodes, padded filters), every value compared."""
    model = session_optimized(_odd_cnn, "all")
    assert {n.domain for n in model.graph.node} >= {NCHWC}
    inferred = opspec.infer_shapes(model)
    shapes = {v.name: _dims(v) for v in (*inferred.graph.value_info, *inferred.graph.output)}
    names = [out for n in model.graph.node for out in n.output]
    assert all(shapes.get(name) is not None for name in names)
    del model.graph.output[:]
    model.graph.output.extend(helper.make_empty_tensor_value_info(name) for name in names)
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    for setting in ({"N": 2, "H": 12, "W": 10}, {"N": 1, "H": 9, "W": 7}):
        image = np.random.default_rng(1).standard_normal((setting["N"], 3, setting["H"], setting["W"]))
        for name, value in zip(names, session.run(None, {"image": image.astype(np.float32)})):
            shape = shapes[name]
            assert shape is not None and len(shape) == value.ndim, name
            for dim, real in zip(shape, value.shape):
                known = dim if type(dim) is int else dim.evaluate(setting) if dim is not None else None
                assert known is None or known == real, (name, shape, value.shape)
    # the padded channel counts come from the rearranged filters, so the final result is exact
    assert shapes[names[-1]] == (N, 32, 1, 1)


def test_unknown_input_channels_stay_sound():
    """An input present but of unknown shape, and one of known shape: the rule knows no more than it should."""
    assert run_rule("ReorderInput", 1, [t(None)], domain=NCHWC).output_type(0).shape is None
    assert run_rule("ReorderInput", 1, [t(N, 32, H, W)], domain=NCHWC).output_type(0) == t(N, 32, H, W)
    assert run_rule("ReorderInput", 1, [t(N, 40, H, W)], domain=NCHWC).output_type(0) == t(N, None, H, W)
    assert TensorProto.FLOAT == F
