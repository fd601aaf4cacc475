"""Tests for the reduction rules: reduce (attribute or input axes) and arg_reduce."""
import itertools
import random

import numpy as np
import pytest

import opspec
from opspec.runtime.contract import InferenceContext, InferenceError
from opspec.runtime.contract import INT64, Data, TensorType
from opspec.runtime.shape import Sym
from opspec.runtime.testing import apply_rule, make_context, run_rule, vec

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
        attributes: dict[str, object] = {"keepdims": keepdims}
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


def _reduced_data(op, version, data, attributes=None, axes=None):
    """The output data of ``op`` on known int64 ``data`` (and known ``axes`` input data when given)."""
    inputs = [TensorType(INT64, tuple(data.shape))]
    datas = [data]
    if axes is not None:
        inputs.append(TensorType(INT64, (len(axes),)))
        datas.append(vec(*axes))
    return run_rule(op, version, inputs, attributes, data=datas).output_data(0)


def test_reduce_min_propagates_min_of_a_count_and_a_constant():
    # k = ReduceMin(Concat(Unsqueeze(Gather(Shape(x), 0)), [10])) as exporters write min(N, 10)
    assert _reduced_data("ReduceMin", 13, Data((2,), (N, 10))) == Data((1,), (Sym.min(N, 10),))
    assert _reduced_data("ReduceMin", 18, Data((2,), (N, 10)), {"keepdims": 0}) == Data((), (Sym.min(N, 10),))
    assert _reduced_data("ReduceMax", 18, Data((3,), (4, 9, 2)), axes=[0]) == Data((1,), (9,))


@pytest.mark.parametrize("op, compute", [("ReduceMin", np.min), ("ReduceMax", np.max), ("ReduceSum", np.sum),
                                         ("ReduceProd", np.prod)])
@pytest.mark.parametrize("axes", [[0], [1], [-1], [0, 2], []])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reduce_data_matches_numpy(op, compute, axes, keepdims):
    values = np.arange(24, dtype=np.int64).reshape(2, 3, 4) % 7 - 3
    result = _reduced_data(op, 18, Data(values.shape, tuple(int(v) for v in values.flat)), {"keepdims": keepdims},
                           axes=axes if axes else None)
    expected = compute(values, axis=tuple(axes) if axes else None, keepdims=bool(keepdims))
    assert result == Data(expected.shape, tuple(int(v) for v in np.asarray(expected).flat))


def test_reduce_data_unknown_where_it_must_be():
    empty = Data((0, 2), ())
    assert _reduced_data("ReduceMin", 18, empty, axes=[0]) is None  # min over nothing: no element to take
    assert _reduced_data("ReduceMin", 18, Data((2,), (N, 10)), {"noop_with_empty_axes": 1}) == Data((2,), (N, 10))
    floats = run_rule("ReduceSum", 18, [TensorType(FLOAT, (2,))], data=[Data((2,), (0.1, 0.2))]).output_data(0)
    assert floats is None  # a float sum rounds as the runtime does
    ctx = run_rule("ReduceMin", 18, [TensorType(INT64, (2,)), TensorType(INT64, (1,))], data=[Data((2,), (N, 10)), None])
    assert ctx.output_data(0) is None  # axes present but unknown


@pytest.mark.parametrize("op, values, elem", [
    ("ReduceProd", (2**62, 4), INT64),  # 2**64 wraps around in int64
    ("ReduceSum", (2**31 - 1, 1), 6),  # 2**31 wraps around in int32
])
def test_sums_and_products_past_the_type_range_are_unknown(op, values, elem):
    data = Data((len(values),), values)
    assert run_rule(op, 18, [TensorType(elem, data.shape)], data=[data]).output_data(0) == Data((1,), (None,))
    within = Data((2,), (-(2**31), 2**31 - 1))
    assert run_rule(op, 18, [TensorType(elem, (2,))], data=[within]).output_data(0) == \
        Data((1,), (-1 if op == "ReduceSum" else -(2**62) + 2**31,))
