"""onnxruntime's fused activations: the GELU family, QuickGelu, ScaledSiLU, GatedAdd and BiasGelu
held against onnxruntime's CPU kernels; BiasAdd, BiasSoftmax, BiasSplitGelu and GemmFastGelu,
which have no CPU kernel, against the rules alone (as onnxruntime's inference functions state them)."""
from __future__ import annotations

import pytest
from ort_oracle import F, F16, Case, In, check

from opspec.runtime.contract import InferenceError
from opspec.runtime.shape import Sym
from opspec.runtime.testing import FLOAT, run_rule, t

MS = "com.microsoft"
B, S, D, K = Sym("B"), Sym("S"), Sym("D"), Sym("K")
SETTINGS = [{"B": 2, "S": 3}, {"B": 1, "S": 5}]


@pytest.mark.parametrize("op, inputs, attributes", [
    ("Gelu", [In(F, ("B", "S", 8))], {}),
    ("Gelu", [In(F16, ("B", "S"))], {}),
    ("FastGelu", [In(F, ("B", "S", 8))], {}),
    ("FastGelu", [In(F, ("B", "S", 8)), In(F, (8,))], {}),
    ("BiasGelu", [In(F, ("B", "S", 8)), In(F, (8,))], {}),
    ("QuickGelu", [In(F, ("B", "S", 8))], {"alpha": 1.5}),
    ("ScaledSiLU", [In(F, ("B", "S", 8))], {"alpha": 0.5}),
    ("ScaledSiLU", [In(F16, ("B", "S", 8)), In(F, ())], {}),
    ("GatedAdd", [In(F, ("B", "S", 8)), In(F, ("B", "S", 8)), In(F, ("B", "S", 1))], {}),
])
def test_shape_keeping_activations_against_onnxruntime(op, inputs, attributes):
    verdict = check(Case(op, MS, inputs, attributes), SETTINGS)
    assert verdict.problems == []
    assert verdict.exact
    assert verdict.inferred == [(inputs[0].elem, tuple(Sym(d) if isinstance(d, str) else d for d in inputs[0].shape))]


@pytest.mark.parametrize("op, inputs, attributes", [
    ("BiasAdd", [t(B, S, 320), t(320), t(B, S, 320)], {}),
    ("BiasSoftmax", [t(B, 12, S, S), t(B, 1, 1, S)], {"axis": 3, "is_inner_broadcast": 0}),
])
def test_shape_keeping_ops_without_a_cpu_kernel(op, inputs, attributes):
    assert run_rule(op, 1, inputs, attributes, domain=MS).output_type(0) == inputs[0]


# ---------------------------------------------------------------------------------- BiasSplitGelu

@pytest.mark.parametrize("x, bias, y", [
    (t(B, S, 2560), t(2560), t(B, S, 1280)),
    (t(B, S, 2 * K), t(2 * K), t(B, S, K)),
    (t(B, S, None), t(640), t(B, S, 320)),  # the width comes from the bias when X does not say
    (t(B, S, 640), None, t(B, S, 320)),
    (None, t(640), t(None, None, 320)),
    (t(B, S, 7), t(7), t(B, S, 3)),  # halved rounding down, as onnxruntime computes it
])
def test_bias_split_gelu_halves_the_last_dim(x, bias, y):
    ctx = run_rule("BiasSplitGelu", 1, [x, bias], domain=MS, names=["x", "bias"])
    assert ctx.output_type(0) == y


def test_bias_split_gelu_unknown_bias_is_not_absent():
    present = run_rule("BiasSplitGelu", 1, [t(B, S, D), None], domain=MS, names=["x", "bias"])
    known = run_rule("BiasSplitGelu", 1, [t(B, S, None), t(640)], domain=MS)
    assert present.output_type(0) == t(B, S, D // 2)
    assert known.output_type(0) == t(B, S, 320)


@pytest.mark.parametrize("x, bias, message", [
    (t(S, 640), t(640), "X .* must be 3-D"),
    (t(B, S, 640), t(1, 640), "bias .* must be 1-D"),
    (t(B, S, 640), t(320), "must match the last dim of X"),
])
def test_bias_split_gelu_refusals(x, bias, message):
    with pytest.raises(InferenceError, match=message):
        run_rule("BiasSplitGelu", 1, [x, bias], domain=MS)


# ---------------------------------------------------------------------------------- GemmFastGelu

@pytest.mark.parametrize("x, w, y", [
    (t(B, S, 64), t(64, 256), t(B, S, 256)),
    (t(S, 64), t(64, 256), t(S, 256)),
    (t(B, S, 64), t(B, 64, 256), t(B, S, 256)),
    (t(64), t(64, 256), t(256)),
])
def test_gemm_fast_gelu_multiplies_as_matmul(x, w, y):
    assert run_rule("GemmFastGelu", 1, [x, w, t(256)], domain=MS).output_type(0) == y
    assert run_rule("GemmFastGelu", 1, [x, w], domain=MS).output_type(0) == y


def test_gemm_fast_gelu_refuses_mismatched_inner_dims():
    with pytest.raises(InferenceError, match="inner dims 64 and 32 differ"):
        run_rule("GemmFastGelu", 1, [t(B, S, 64), t(32, 256)], domain=MS)


def test_gemm_fast_gelu_output_type_is_x_type():
    assert run_rule("GemmFastGelu", 1, [t(2, 8, elem=10), t(8, 4, elem=10)], domain=MS).output_type(0) == t(2, 4, elem=10)
    assert run_rule("GemmFastGelu", 1, [t(2, 8), t(8, 4)], domain=MS).output_type(0).elem == FLOAT


@pytest.mark.parametrize("x, bias", [((), (4, 3, "N", 3)), ((1, 3, 1), ("B", 4, 3, 8))])
def test_fast_gelu_broadcasts_where_onnxruntime_runs_its_function_body(x, bias):
    # float16 FastGelu runs through the function body on the CPU provider: X + bias broadcast
    verdict = check(Case("FastGelu", MS, [In(F16, x), In(F16, bias)]), [{"N": 4, "B": 2}, {"N": 1, "B": 1}])
    assert verdict.problems == [] and verdict.exact
