"""Tests for the reduction rules: reduce (attribute or input axes) and arg_reduce."""
import itertools
import random

import numpy as np
import pytest

import opspec
from opspec.runtime.contract import InferenceContext, InferenceError
from opspec.runtime.contract import INT64, Data, TensorType
from ruletest import apply_rule, make_context
from opspec.runtime.shape import Sym

N, M = Sym("N"), Sym("M")
FLOAT = 1
UNKNOWN = TensorType(FLOAT, None)


def infer(op, version, inputs, attributes=None, data=None):
    schema = opspec.get_schema(op, version)
    ctx = make_context(schema, inputs, attributes or {}, data=data)
    if inputs and inputs[0] is not None:  # the engine binds T from the data input
        ctx.set_output(0, TensorType(inputs[0].elem, None))
    apply_rule(ctx)
    return ctx.output_type(0)


def t(*shape):
    return TensorType(FLOAT, shape)


def axes_input(*values):
    """An axes input with known values, as (type, data)."""
    return TensorType(INT64, (len(values),)), Data((len(values),), tuple(values))


def reduce_with_input(op, version, shape, axes, attributes=None):
    axes_type, axes_data = axes_input(*axes)
    return infer(op, version, [t(*shape), axes_type], attributes, [None, axes_data])


# ------------------------------------------------------------------------------ attribute axes

@pytest.mark.parametrize("axes,keepdims,out", [
    ([1], 1, (2, 1, 4)),
    ([1], 0, (2, 4)),
    ([0, 2], 1, (1, 3, 1)),
    ([2, 0], 0, (3,)),
    (None, 1, (1, 1, 1)),
    (None, 0, ()),
    ([], 0, ()),
])
def test_reduce_attribute_axes(axes, keepdims, out):
    attributes = {"keepdims": keepdims}
    if axes is not None:
        attributes["axes"] = axes
    assert infer("ReduceSum", 1, [t(2, 3, 4)], attributes) == t(*out)
    assert infer("ReduceMax", 13, [t(2, 3, 4)], attributes) == t(*out)


def test_reduce_negative_axes_and_symbols():
    assert infer("ReduceMean", 13, [t(N, 3, M)], {"axes": [-1]}) == t(N, 3, 1)
    assert infer("ReduceMean", 11, [t(N, 3, M)], {"axes": [-3], "keepdims": 0}) == t(3, M)


def test_reduce_keepdims_default_is_one():
    assert infer("ReduceSum", 1, [t(2, 3)], {"axes": [0]}) == t(1, 3)


@pytest.mark.parametrize("axes,message", [([3], "out of range"), ([-4], "out of range"),
                                          ([1, -2], "reduced twice")])
def test_reduce_rejects_bad_axes(axes, message):
    with pytest.raises(InferenceError, match=message):
        infer("ReduceSum", 11, [t(2, 3, 4)], {"axes": axes})


def test_reduce_unknown_input_rank():
    assert infer("ReduceSum", 11, [UNKNOWN], {"axes": [0]}) == UNKNOWN
    assert infer("ReduceSum", 11, [UNKNOWN], {"axes": [0], "keepdims": 0}) == UNKNOWN
    assert infer("ReduceSum", 11, [UNKNOWN], {"keepdims": 0}) == t()  # all axes: a scalar
    assert infer("ReduceSum", 11, [UNKNOWN]) == UNKNOWN


# ------------------------------------------------------------------------------ input axes

def test_reduce_input_axes():
    assert reduce_with_input("ReduceSum", 13, (2, 3, 4), (1,)) == t(2, 1, 4)
    assert reduce_with_input("ReduceSum", 13, (2, 3, 4), (-1, 0), {"keepdims": 0}) == t(3,)
    assert reduce_with_input("ReduceMax", 18, (N, 3), (0,)) == t(1, 3)


def test_reduce_input_axes_absent_or_empty():
    assert infer("ReduceSum", 13, [t(2, 3)]) == t(1, 1)
    assert infer("ReduceSum", 13, [t(2, 3), None], {"keepdims": 0}) == t()
    assert reduce_with_input("ReduceSum", 13, (2, 3), ()) == t(1, 1)
    assert infer("ReduceSum", 13, [t(2, 3), TensorType(INT64, (0,))], {"keepdims": 0}) == t()


def test_reduce_noop_with_empty_axes():
    attributes = {"noop_with_empty_axes": 1, "keepdims": 0}
    assert infer("ReduceSum", 13, [t(2, N)], attributes) == t(2, N)
    assert reduce_with_input("ReduceSum", 13, (2, N), (), attributes) == t(2, N)
    assert reduce_with_input("ReduceSum", 13, (2, N), (1,), attributes) == t(2)


def test_reduce_unknown_axes_values():
    axes = TensorType(INT64, (2,))
    assert infer("ReduceSum", 13, [t(2, 1, N), axes]) == t(None, 1, None)
    assert infer("ReduceSum", 13, [t(2, 1, N), axes], {"keepdims": 0}) == t(None)
    assert infer("ReduceSum", 13, [t(2, 1, N), TensorType(INT64, (None,))], {"keepdims": 0}) == UNKNOWN
    assert infer("ReduceSum", 13, [t(2, 1, N), TensorType(INT64, None)], {"keepdims": 0}) == UNKNOWN
    noop = {"keepdims": 0, "noop_with_empty_axes": 1}
    assert infer("ReduceSum", 13, [t(2, 1, N), axes], noop) == UNKNOWN
    data = [None, Data((2,), (0, None))]  # partly known values count as unknown
    assert infer("ReduceSum", 13, [t(2, 1, N), axes], {}, data) == t(None, 1, None)
    with pytest.raises(InferenceError, match="cannot reduce 4 axes"):
        infer("ReduceSum", 13, [t(2, 3), TensorType(INT64, (4,))], {"keepdims": 0})


def test_reduce_axes_kind_follows_the_version():
    # ReduceMax takes axes as an attribute up to version 13, as an input from 18.
    assert "axes" in opspec.get_schema("ReduceMax", 13).attributes
    assert infer("ReduceMax", 13, [t(2, 3)], {"axes": [1]}) == t(2, 1)
    assert reduce_with_input("ReduceMax", 18, (2, 3), (1,)) == t(2, 1)
    # an 'axes' attribute on a version that takes an input is not consulted
    assert infer("ReduceMax", 18, [t(2, 3)], {"axes": [1]}) == t(1, 1)


def test_reduce_agrees_with_numpy():
    rng = random.Random(11)
    for _ in range(200):
        shape = tuple(rng.randint(1, 4) for _ in range(rng.randint(1, 4)))
        count = rng.randint(0, len(shape))
        axes = rng.sample(range(-len(shape), len(shape)), count)
        if len({a % len(shape) for a in axes}) != len(axes):
            continue
        keepdims = rng.randint(0, 1)
        expected = np.sum(np.zeros(shape), axis=tuple(axes) if axes else None, keepdims=bool(keepdims)).shape
        attributes = {"keepdims": keepdims}
        if axes:
            attributes["axes"] = axes
        assert infer("ReduceSum", 11, [t(*shape)], attributes) == t(*expected)
        assert reduce_with_input("ReduceSum", 13, shape, tuple(axes), {"keepdims": keepdims}) == t(*expected)


# ------------------------------------------------------------------------------ arg_reduce

def test_arg_reduce():
    out = infer("ArgMax", 13, [t(2, N, 4)], {"axis": 1})
    assert out == TensorType(INT64, (2, 1, 4))
    assert infer("ArgMax", 13, [t(2, N, 4)], {"axis": -1, "keepdims": 0}) == TensorType(INT64, (2, N))
    assert infer("ArgMax", 1, [t(2, 3)]) == TensorType(INT64, (1, 3))
    assert infer("ArgMax", 13, [UNKNOWN]) == TensorType(INT64, None)


@pytest.mark.parametrize("shape,axis", [((2, 3), 2), ((2, 3), -3), ((), 0)])
def test_arg_reduce_rejects_bad_axis(shape, axis):
    with pytest.raises(InferenceError, match="out of range"):
        infer("ArgMax", 13, [t(*shape)], {"axis": axis})


def test_arg_reduce_agrees_with_numpy():
    for shape in [(3,), (2, 3), (2, 1, 4), (5, 2, 3, 1)]:
        for axis, keepdims in itertools.product(range(-len(shape), len(shape)), (0, 1)):
            expected = np.argmax(np.zeros(shape), axis=axis, keepdims=bool(keepdims)).shape
            out = infer("ArgMax", 13, [t(*shape)], {"axis": axis, "keepdims": keepdims})
            assert out == TensorType(INT64, expected)


# ----------------------------------------------------------------------------- data propagation

def reduce_data(op, version, shape, values, attributes=None, axes=None, elem=INT64):
    """A reduction over known data (int64 unless ``elem``); returns the context."""
    schema = opspec.get_schema(op, version)
    inputs, data = [TensorType(elem, shape)], [Data(shape, tuple(values))]
    if axes is not None:
        axes_type, axes_data = axes_input(*axes)
        inputs.append(axes_type)
        data.append(axes_data)
    ctx = make_context(schema, inputs, attributes or {}, data=data)
    ctx.set_output(0, TensorType(elem, None))
    apply_rule(ctx)
    return ctx


@pytest.mark.parametrize("op, expected", [("ReduceMin", Sym.min(N, 10)), ("ReduceMax", Sym.max(N, 10))])
def test_reducing_a_whole_shape_vector_propagates_its_extreme(op, expected):
    # min(N, 10) as exporters compute a top-k count: Concat([N], [10]) -> ReduceMin keepdims=1.
    ctx = reduce_data(op, 18, (2,), (N, 10))
    assert ctx.output_type(0).shape == (1,)
    assert ctx.output_data(0) == Data((1,), (expected,))
    scalar = reduce_data(op, 13, (2,), (3, 7), {"keepdims": 0, "axes": [0]})
    assert scalar.output_data(0) == Data((), (3 if op == "ReduceMin" else 7,))


def test_partial_or_unknown_reductions_propagate_nothing():
    assert reduce_data("ReduceMin", 18, (2, 2), (1, 2, 3, 4), axes=[0]).output_data(0) is None
    assert reduce_data("ReduceMin", 18, (2,), (N, None)).output_data(0).values == (None,)
    assert reduce_data("ReduceMin", 18, (0,), ()).output_data(0) is None
    noop = reduce_data("ReduceMin", 18, (2,), (4, 1), {"noop_with_empty_axes": 1})
    assert noop.output_type(0).shape == (2,) and noop.output_data(0) is None


def test_products_and_sums_of_shape_elements_propagate():
    # Flatten as exporters write it: ReduceProd of Shape(x)[1:] gives C*H*W.
    H, W = Sym("H"), Sym("W")
    assert reduce_data("ReduceProd", 18, (3,), (3, H, W)).output_data(0) == Data((1,), (3 * H * W,))
    assert reduce_data("ReduceSum", 13, (3,), (N, 2, M)).output_data(0) == Data((1,), (N + M + 2,))
    assert reduce_data("ReduceProd", 18, (2,), (0, None)).output_data(0) == Data((1,), (0,))


@pytest.mark.parametrize("op, values, elem", [
    ("ReduceProd", (2**62, 4), INT64),  # wraps around in int64
    ("ReduceSum", (2**31 - 1, 1), 6),  # wraps around in int32
    ("ReduceSum", (0.1, 0.2, 0.3), FLOAT),  # a float sum depends on the order of the additions
])
def test_sums_and_products_that_cannot_be_known_exactly_propagate_nothing(op, values, elem):
    assert reduce_data(op, 18, (len(values),), values, elem=elem).output_data(0) is None
