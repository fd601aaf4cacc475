"""Channels-last operators (com.ms.internal.nhwc): the ``channels_last`` rule over standard rules.

onnxruntime's CPU provider has no kernel for this domain, so nothing here runs. Two checks
stand in: cases derived from onnxruntime's inference (input 0 read channels-first, the
standard op's inference, output 0 written back channels-last), and onnxruntime's own inference
itself, which a session reports when it merges an inferred shape with a contradicting
declaration before it gives up for want of a kernel.
"""
from __future__ import annotations

import numpy as np
import pytest
from ort_cases import ones, ort_inference
from ort_oracle import F, Case, Const, In, inferred_outputs, model_of

import opspec
import opspec.onnxruntime
from opspec.runtime.contract import InferenceContext, InferenceError, TensorType
from opspec.runtime.rules.ort_nhwc import STANDARD, channels_first, channels_last_shape
from opspec.runtime.shape import Sym
from opspec.runtime.testing import INT64, run_rule, t, vec

NHWC = "com.ms.internal.nhwc"
N, H, W, C = Sym("N"), Sym("H"), Sym("W"), Sym("C")
U8 = 2


def q(*shape):
    return t(*shape, elem=U8)


# ---------------------------------------------------------------------------------- every version

SCALARS = [t(), q()]  # a float scale and an 8-bit zero point

CASES = [
    # op, versions, inputs, attributes, output 0
    ("AveragePool", (7, 10, 11, 19), [t(N, H, W, 3)], {"kernel_shape": [2, 2]}, t(N, H - 1, W - 1, 3)),
    ("BatchNormalization", (7, 9, 14, 15), [t(N, H, W, C), t(C), t(C), t(C), t(C)], {}, t(N, H, W, C)),
    ("Conv", (1, 11), [t(N, H, W, 3), t(8, 3, 3, 3), t(8)], {"pads": [1, 1, 1, 1]}, t(N, H, W, 8)),
    ("ConvTranspose", (1, 11), [t(N, H, W, 3), t(3, 5, 3, 3)], {"strides": [2, 2]}, t(N, 2 * H + 1, 2 * W + 1, 5)),
    ("DepthToSpace", (1, 11, 13), [t(N, H, W, 12)], {"blocksize": 2}, t(N, 2 * H, 2 * W, 3)),
    ("GlobalAveragePool", (1,), [t(N, H, W, C)], {}, t(N, 1, 1, C)),
    ("GlobalLpPool", (2,), [t(N, H, W, C)], {"p": 3}, t(N, 1, 1, C)),
    ("GlobalMaxPool", (1,), [t(N, H, W, C)], {}, t(N, 1, 1, C)),
    ("GridSample", (16, 20), [t(N, H, W, C), t(N, 4, 6, 2)], {}, t(N, 4, 6, C)),
    ("InstanceNormalization", (6,), [t(N, H, W, C), t(C), t(C)], {}, t(N, H, W, C)),
    ("LRN", (1, 13), [t(N, H, W, C)], {"size": 3}, t(N, H, W, C)),
    ("LpPool", (11, 18), [t(N, H, W, C)], {"kernel_shape": [3, 3], "strides": [2, 2]},
     t(N, (H - 3) // 2 + 1, (W - 3) // 2 + 1, C)),
    ("MaxPool", (1, 8, 10, 11, 12), [t(N, H, W, C)], {"kernel_shape": [2, 2], "strides": [2, 2]},
     t(N, H // 2, W // 2, C)),
    ("MaxUnpool", (9, 11), [t(N, H, W, C), t(N, H, W, C, elem=INT64)], {"kernel_shape": [2, 2], "strides": [2, 2]},
     t(N, 2 * H, 2 * W, C)),
    ("QLinearAveragePool", (1,), [q(N, H, W, C), t(), q(), t(), q()], {"kernel_shape": [2, 2]},
     q(N, H - 1, W - 1, C)),
    ("QLinearConv", (10,), [q(N, H, W, 3), *SCALARS, q(8, 3, 3, 3), *SCALARS, *SCALARS, t(8, elem=6)], {},
     q(N, H - 2, W - 2, 8)),
    ("QLinearConvTranspose", (1,), [q(N, H, W, 3), *SCALARS, q(3, 8, 3, 3), *SCALARS, *SCALARS],
     {"strides": [2, 2]}, q(N, 2 * H + 1, 2 * W + 1, 8)),
    ("SpaceToDepth", (1, 13), [t(N, 4, 6, C)], {"blocksize": 2}, t(N, 2, 3, 4 * C)),
]


@pytest.mark.parametrize("op, version, inputs, attributes, y",
                         [(op, v, inputs, attributes, y) for op, versions, inputs, attributes, y in CASES
                          for v in versions])
def test_every_version(op, version, inputs, attributes, y):
    ctx = run_rule(op, version, inputs, attributes, domain=NHWC, output_count=1)
    assert ctx.output_type(0) == y


@pytest.mark.parametrize("version", (11, 13, 18, 19))
def test_resize_reads_the_axes_as_they_are(version):
    """onnxruntime infers Resize of this domain with the standard function on the data as given."""
    inputs = [t(N, H, W, 3), t(0) if version == 11 else None, t(4)]
    ctx = run_rule("Resize", version, inputs, {}, domain=NHWC, data=[None, None, vec(1.0, 2.0, 2.0, 1.0)])
    assert ctx.output_type(0) == t(N, 2 * H, 2 * W, 3)


def test_every_version_is_covered():
    covered = {(op, v) for op, versions, *_ in CASES for v in versions} | {("Resize", v) for v in (11, 13, 18, 19)}
    schemas = opspec.onnxruntime.get_all_schemas_with_history()
    assert covered == {(s.name, s.since_version) for s in schemas if s.domain == NHWC}


# ---------------------------------------------------------------------------------- the mechanism

def test_layout_helpers():
    ctx = InferenceContext(opspec.get_schema("Relu", 14), [], {})  # read only to report a failure
    assert channels_first(ctx, (N, H, W, C)) == (N, C, H, W)
    assert channels_last_shape(ctx, (N, C, H, W)) == (N, H, W, C)
    assert channels_first(ctx, (N, 5, C)) == (N, C, 5)
    assert channels_first(ctx, None) is None
    assert set(STANDARD) >= {"conv", "pool", "batch_norm"}


def test_rank_below_three_fails_as_onnxruntime_does():
    with pytest.raises(InferenceError, match="rank 3"):
        run_rule("GlobalAveragePool", 1, [t(N, C)], domain=NHWC)
    with pytest.raises(InferenceError, match="rank 3"):
        run_rule("BatchNormalization", 15, [t(N, C), t(C), t(C), t(C), t(C)], domain=NHWC, output_count=1)


def test_standard_checks_see_the_channels():
    with pytest.raises(InferenceError, match="channels"):
        run_rule("Conv", 11, [t(N, H, W, 4), t(8, 3, 3, 3)], domain=NHWC)
    with pytest.raises(InferenceError):
        run_rule("BatchNormalization", 15, [t(N, H, W, 3), t(4), t(4), t(4), t(4)], domain=NHWC, output_count=1)
    with pytest.raises(InferenceError):
        run_rule("DepthToSpace", 13, [t(N, H, W, 6)], {"blocksize": 2}, domain=NHWC)


def test_errors_say_how_the_data_was_read():
    with pytest.raises(InferenceError, match=r"channels_last: X \(1, 5, 5, 4\) read as \(1, 4, 5, 5\)"):
        run_rule("Conv", 11, [t(1, 5, 5, 4), t(8, 3, 3, 3)], domain=NHWC)


def test_unknown_data_and_rank():
    assert run_rule("Conv", 11, [t(None), t(8, 3, 3, 3)], domain=NHWC).output_type(0) == t(None, None, None, 8)
    assert run_rule("MaxPool", 12, [t(None)], {"kernel_shape": [2, 2]}, domain=NHWC).output_type(0) == \
        t(None, None, None, None)
    assert run_rule("GlobalMaxPool", 1, [t(None)], domain=NHWC).output_type(0).shape is None


def test_further_outputs():
    """Statistics (rank 1) are layout-free; MaxPool's indices keep only their rank, their layout being open."""
    pool = run_rule("MaxPool", 12, [t(N, H, W, 3)], {"kernel_shape": [2, 2]}, domain=NHWC, output_count=2)
    assert pool.output_type(0) == t(N, H - 1, W - 1, 3)
    assert pool.output_type(1) == TensorType(INT64, (None, None, None, None))
    norm = run_rule("BatchNormalization", 15, [t(N, H, W, 3), t(3), t(3), t(3), t(3)], {"training_mode": 1}, domain=NHWC)
    assert [norm.output_type(i) for i in range(3)] == [t(N, H, W, 3), t(3), t(3)]


def test_max_unpool_output_shape_present_known_or_not():
    """Known output_shape values are in no layout the rule can trust: known or unknown, only the rank follows."""
    inputs = [t(N, H, W, 3), t(N, H, W, 3, elem=INT64), t(4, elem=INT64)]
    attributes = {"kernel_shape": [2, 2], "strides": [2, 2]}
    known = run_rule("MaxUnpool", 11, inputs, attributes, domain=NHWC, data=[None, None, vec(2, 3, 9, 9)])
    unknown = run_rule("MaxUnpool", 11, inputs, attributes, domain=NHWC)
    assert known.output_type(0) == unknown.output_type(0) == t(None, None, None, None)


def test_qlinear_average_pool_with_its_own_channels_last_flag():
    """onnxruntime transposes such a node's data twice over; only rank and batch are sure."""
    inputs = [q(N, H, W, 3), t(), q(), t(), q()]
    ctx = run_rule("QLinearAveragePool", 1, inputs, {"kernel_shape": [2, 2], "channels_last": 1}, domain=NHWC)
    assert ctx.output_type(0) == q(N, None, None, None)


def test_qlinear_conv_transpose_sees_its_weights():
    inputs = [q(N, H, W, 4), *SCALARS, q(3, 8, 3, 3), *SCALARS, *SCALARS]
    with pytest.raises(InferenceError, match="channels"):
        run_rule("QLinearConvTranspose", 1, inputs, {}, domain=NHWC)
    grouped = [q(N, H, W, 4), *SCALARS, q(4, 2, 3, 3), *SCALARS, *SCALARS, t(4, elem=6)]
    assert run_rule("QLinearConvTranspose", 1, grouped, {"group": 2}, domain=NHWC).output_type(0) == \
        q(N, H + 2, W + 2, 4)


# ---------------------------------------------------------------------------------- onnxruntime's own inference

ONNXRUNTIME_CASES = [
    ("Conv", 11, [In(F, (2, 5, 7, 3)), ones(4, 3, 3, 3)], {}),
    ("Conv", 11, [In(F, (2, 9, 8, 6)), ones(4, 3, 3, 3)], {"group": 2, "strides": [2, 2]}),
    ("MaxPool", 12, [In(F, (2, 5, 7, 3))], {"kernel_shape": [2, 2], "ceil_mode": 1, "strides": [2, 2]}),
    ("AveragePool", 19, [In(F, (1, 6, 6, 5))], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
    ("GlobalAveragePool", 1, [In(F, (2, 5, 7, 3))], {}),
    ("BatchNormalization", 15, [In(F, (2, 5, 7, 3))] + [ones(3)] * 4, {}),
    ("GridSample", 16, [In(F, (2, 5, 7, 3)), In(F, (2, 4, 6, 2))], {}),
    ("DepthToSpace", 13, [In(F, (2, 5, 7, 12))], {"blocksize": 2}),
    ("SpaceToDepth", 13, [In(F, (2, 4, 6, 3))], {"blocksize": 2}),
    ("ConvTranspose", 11, [In(F, (2, 5, 7, 3)), ones(3, 4, 3, 3)], {"strides": [2, 2]}),
    ("LpPool", 18, [In(F, (2, 5, 7, 3))], {"kernel_shape": [2, 3], "dilations": [2, 1]}),
    ("InstanceNormalization", 6, [In(F, (2, 5, 7, 3)), ones(3), ones(3)], {}),
    ("Resize", 19, [In(F, (2, 5, 7, 3)), Const(np.zeros(0)), Const([1, 2, 2, 1])], {}),
]


@pytest.mark.parametrize("op, version, inputs, attributes", ONNXRUNTIME_CASES)
def test_against_onnxruntime_inference(op, version, inputs, attributes, capfd):
    case = Case(op, NHWC, inputs, attributes, opsets={"": 21, NHWC: version})
    theirs = ort_inference(capfd, case)
    assert theirs[1] is not None, "onnxruntime inferred no shape"
    assert inferred_outputs(model_of(case), 1) == [theirs]
