"""onnxruntime's MoE and QMoE held against its CPU kernels: the output takes the input's shape, packed
(tokens, hidden) or padded (batch, sequence, hidden)."""
from __future__ import annotations

import numpy as np
import pytest
from ort_oracle import F, U8, Case, Const, In, Operand, check

from opspec.runtime.shape import Sym
from opspec.runtime.testing import run_rule, t

MS = "com.microsoft"
B, S, T = Sym("B"), Sym("S"), Sym("T")
EXPERTS, HIDDEN, INTER = 4, 64, 32
SETTINGS = [{"B": 2, "S": 3, "T": 6}, {"B": 1, "S": 5, "T": 5}]
RNG = np.random.default_rng(0)


def moe_case(input_shape, *, activation="relu", k=2, bias=False):
    inputs: list[Operand]
    inputs = [In(F, input_shape), In(F, ("T", EXPERTS)), Const(RNG.standard_normal((EXPERTS, INTER, HIDDEN))),
              Const(RNG.standard_normal((EXPERTS, INTER))) if bias else None,
              Const(RNG.standard_normal((EXPERTS, HIDDEN, INTER))),
              Const(RNG.standard_normal((EXPERTS, HIDDEN))) if bias else None]
    return Case("MoE", MS, inputs, {"k": k, "activation_type": activation})


@pytest.mark.parametrize("input_shape", [("T", HIDDEN), ("B", "S", HIDDEN)])
@pytest.mark.parametrize("activation, bias", [("relu", False), ("gelu", True), ("silu", False)])
def test_moe_output_takes_the_input_shape(input_shape, activation, bias):
    verdict = check(moe_case(input_shape, activation=activation, bias=bias), SETTINGS)
    assert verdict.problems == []
    assert verdict.exact
    assert verdict.inferred[0][1] == tuple(Sym(d) if isinstance(d, str) else d for d in input_shape)


def qmoe_case(input_shape, *, bits=4, block_size=None, zero_points=False):
    per_byte = 8 // bits
    fc1_scales = (EXPERTS, INTER) if block_size is None else (EXPERTS, INTER, HIDDEN // block_size)
    fc2_scales = (EXPERTS, HIDDEN) if block_size is None else (EXPERTS, HIDDEN, INTER // block_size)
    inputs: list[Operand]
    inputs = [In(F, input_shape), In(F, ("T", EXPERTS)),
              Const(RNG.integers(0, 256, (EXPERTS, INTER, HIDDEN // per_byte)), U8), Const(np.full(fc1_scales, 0.01)),
              None, Const(RNG.integers(0, 256, (EXPERTS, HIDDEN, INTER // per_byte)), U8),
              Const(np.full(fc2_scales, 0.01))]
    if zero_points:
        inputs += [None, None, None, None,
                   Const(np.full(fc1_scales[:-1] + (-(-fc1_scales[-1] * bits // 8),), 8), U8),
                   Const(np.full(fc2_scales[:-1] + (-(-fc2_scales[-1] * bits // 8),), 8), U8)]
    attributes = {"k": 2, "expert_weight_bits": bits, **({"block_size": block_size} if block_size else {})}
    return Case("QMoE", MS, inputs, attributes)


@pytest.mark.parametrize("input_shape", [("T", HIDDEN), ("B", "S", HIDDEN)])
@pytest.mark.parametrize("bits, block_size, zero_points", [(4, None, False), (8, None, False), (4, 16, False),
                                                           (4, 32, True)])
def test_qmoe_output_takes_the_input_shape(input_shape, bits, block_size, zero_points):
    verdict = check(qmoe_case(input_shape, bits=bits, block_size=block_size, zero_points=zero_points), SETTINGS)
    assert verdict.problems == []
    assert verdict.exact
    assert verdict.inferred[0] == (F, tuple(Sym(d) if isinstance(d, str) else d for d in input_shape))


def test_unknown_input_leaves_the_output_unknown():
    moe = run_rule("MoE", 1, [None, t(T, 4), t(4, 32, 64), None, t(4, 64, 32)], domain=MS,
              names=["x", "r", "w1", "", "w2"])
    qmoe = run_rule("QMoE", 1, [None, t(T, 4), t(4, 32, 32, elem=2), t(4, 32), None, t(4, 64, 16, elem=2), t(4, 64)],
               domain=MS, names=["x", "r", "w1", "s1", "", "w2", "s2"])
    assert moe.output_type(0).shape is None and qmoe.output_type(0).shape is None
