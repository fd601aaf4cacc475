"""Tests for the matrix-product rules: matmul and gemm."""
import random

import numpy as np
import pytest

import opspec
from opspec.runtime.contract import InferenceContext, InferenceError
from opspec.runtime.contract import TensorType
from opspec.runtime.shape import Sym
from opspec.runtime.testing import apply_rule, make_context

N, M, K = Sym("N"), Sym("M"), Sym("K")
FLOAT = 1
UNKNOWN = TensorType(FLOAT, None)


def infer(op, version, inputs, attributes=None):
    schema = opspec.get_schema(op, version)
    ctx = make_context(schema, inputs, attributes or {})
    ctx.set_output(0, TensorType(FLOAT, None))  # the engine's binding of T
    apply_rule(ctx)
    return ctx.output_type(0)


def t(*shape):
    return TensorType(FLOAT, shape)


# ------------------------------------------------------------------------------ matmul

@pytest.mark.parametrize("a,b,out", [
    ((2, 3), (3, 4), (2, 4)),
    ((3,), (3, 4), (4,)),
    ((2, 3), (3,), (2,)),
    ((3,), (3,), ()),
    ((5, 2, 3), (3, 4), (5, 2, 4)),
    ((3,), (5, 3, 4), (5, 4)),
    ((5, 2, 3), (3,), (5, 2)),
    ((1, 6, 2, 3), (7, 1, 3, 4), (7, 6, 2, 4)),
    ((N, 2, K), (K, M), (N, 2, M)),
    ((None, 3), (None, 4), (None, 4)),
    ((2, N), (3, 4), (2, 4)),
])
def test_matmul(a, b, out):
    assert infer("MatMul", 13, [t(*a), t(*b)]) == t(*out)


def test_matmul_unknown_rank():
    assert infer("MatMul", 13, [UNKNOWN, t(3, 4)]) == UNKNOWN
    assert infer("MatMul", 1, [t(3, 4), UNKNOWN]) == UNKNOWN


@pytest.mark.parametrize("a,b,message", [
    ((2, 3), (4, 5), r"cannot multiply \(2, 3\) by \(4, 5\): inner dims 3 and 4 differ"),
    ((3,), (4,), "inner dims 3 and 4 differ"),
    ((2, 2, 3), (3, 3, 4), "batch dims do not broadcast"),
    ((), (3,), r"A: shape \(\) must have rank at least 1"),
])
def test_matmul_failures(a, b, message):
    with pytest.raises(InferenceError, match=message):
        infer("MatMul", 13, [t(*a), t(*b)])


def test_matmul_agrees_with_numpy():
    rng = random.Random(5)
    for _ in range(300):
        k = rng.randint(1, 4)
        batch = [rng.randint(1, 3) for _ in range(rng.randint(0, 3))]
        a = tuple(d if rng.random() < 0.7 else 1 for d in batch[rng.randint(0, len(batch)):])
        b = tuple(d if rng.random() < 0.7 else 1 for d in batch[rng.randint(0, len(batch)):])
        a = a + (rng.randint(1, 4), k) if rng.random() < 0.8 else (k,)
        b = b + (k, rng.randint(1, 4)) if rng.random() < 0.8 else (k,)
        if rng.random() < 0.1:
            b = b[:-2] + (k + 1,) + b[-1:] if len(b) > 1 else (k + 1,)
        try:
            expected = np.matmul(np.zeros(a), np.zeros(b)).shape
        except ValueError:
            with pytest.raises(InferenceError):
                infer("MatMul", 13, [t(*a), t(*b)])
            continue
        assert infer("MatMul", 13, [t(*a), t(*b)]) == t(*expected)


# ------------------------------------------------------------------------------ gemm

@pytest.mark.parametrize("attributes,a,b,out", [
    ({}, (2, 3), (3, 4), (2, 4)),
    ({"transA": 1}, (3, 2), (3, 4), (2, 4)),
    ({"transB": 1}, (2, 3), (4, 3), (2, 4)),
    ({"transA": 1, "transB": 1}, (3, 2), (4, 3), (2, 4)),
    ({}, (M, K), (K, N), (M, N)),
    ({}, (None, 3), (None, None), (None, None)),
])
def test_gemm(attributes, a, b, out):
    assert infer("Gemm", 13, [t(*a), t(*b)], attributes) == t(*out)
    assert infer("Gemm", 13, [t(*a), t(*b), t()], attributes) == t(*out)


def test_gemm_bias_broadcasts_and_refines():
    assert infer("Gemm", 13, [t(2, 3), t(3, 4), t(4)]) == t(2, 4)
    assert infer("Gemm", 13, [t(2, 3), t(3, 4), t(2, 1)]) == t(2, 4)
    assert infer("Gemm", 13, [t(M, 3), t(3, None), t(5, 7)]) == t(5, 7)
    assert infer("Gemm", 9, [t(2, 3), t(3, 4), UNKNOWN]) == t(2, 4)
    assert infer("Gemm", 11, [t(2, 3), t(3, 4), None]) == t(2, 4)  # C omitted


def test_gemm_unknown_operands():
    assert infer("Gemm", 13, [UNKNOWN, t(3, 4)]) == t(None, 4)
    assert infer("Gemm", 13, [t(2, 3), UNKNOWN], {"transA": 1}) == t(3, None)


def test_gemm_legacy_broadcast_attribute_is_ignored():
    assert infer("Gemm", 6, [t(2, 3), t(3, 4), t(4)], {"broadcast": 1}) == t(2, 4)
    assert infer("Gemm", 1, [t(2, 3), t(3, 4), t(2, 4)]) == t(2, 4)


@pytest.mark.parametrize("inputs,attributes,message", [
    ([(2, 3), (4, 5)], {}, "inner dims 3 and 4 differ"),
    ([(2, 3), (3, 4)], {"transB": 1}, "inner dims 3 and 4 differ"),
    ([(2, 3, 1), (3, 4)], {}, r"A: shape \(2, 3, 1\) must have rank 2"),
    ([(2, 3), (3,)], {}, r"B: shape \(3,\) must have rank 2"),
    ([(2, 3), (3, 4), (3, 4)], {}, r"bias C of shape \(3, 4\) does not fit the product \(2, 4\)"),
    ([(2, 3), (3, 4), (1, 2, 4)], {}, "bias C"),
])
def test_gemm_failures(inputs, attributes, message):
    with pytest.raises(InferenceError, match=message):
        infer("Gemm", 13, [t(*s) for s in inputs], attributes)


def test_gemm_agrees_with_numpy():
    rng = random.Random(9)
    for _ in range(100):
        m, k, n = (rng.randint(1, 5) for _ in range(3))
        ta, tb = rng.randint(0, 1), rng.randint(0, 1)
        a = (k, m) if ta else (m, k)
        b = (n, k) if tb else (k, n)
        c = rng.choice([(), (n,), (1, n), (m, 1), (m, n)])
        x, y = np.zeros(a), np.zeros(b)
        expected = ((x.T if ta else x) @ (y.T if tb else y) + np.zeros(c)).shape
        out = infer("Gemm", 13, [t(*a), t(*b), t(*c)], {"transA": ta, "transB": tb})
        assert out == t(*expected)
