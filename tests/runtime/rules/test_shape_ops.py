"""Tests for opspec.runtime.rules.shape_ops: shapes and propagated data of the layout ops."""
import random

import numpy as np
import pytest

import opspec
from opspec.runtime.contract import InferenceContext, InferenceError
from opspec.runtime.contract import Data, TensorType

from opspec.runtime.rulebook import RULES
from opspec.runtime.shape import ShapeError, Sym, parse_dim
from opspec.runtime.testing import apply_rule, make_context

F, I64 = 1, 7
N, M = Sym("N"), Sym("M")
INT_MAX, INT_MIN = 2**63 - 1, -(2**63)


def t(*dims):
    """A float tensor type of the given shape (``t(None)`` for unknown rank)."""
    return TensorType(F, None if dims == (None,) else tuple(dims))


def vec(*values):
    """Known 1-D int64 data."""
    return Data((len(values),), tuple(values))


def ivec(n):
    """The type of a 1-D int64 input of length ``n``."""
    return TensorType(I64, (n,))


def run_layout(op, version, inputs, attributes=None, data=None, outputs=None):
    schema = opspec.get_schema(op, version)
    inputs = list(inputs)
    data = list(data or [])
    data += [None] * (len(inputs) - len(data))
    ctx = make_context(schema, inputs, dict(attributes or {}), data=data, output_count=outputs)
    apply_rule(ctx)
    return ctx


def shape(ctx, index=0):
    return ctx.output_type(index).shape


def data_in(shape_):
    """Data input: its type and its known contents."""
    return ivec(len(shape_)), vec(*shape_)


# ----------------------------------------------------------------------------- reshape

def reshape(source, target, version=14, attributes=None, source_data=None):
    if version == 1:
        return run_layout("Reshape", 1, [source], {"shape": list(target), **(attributes or {})}, [source_data])
    return run_layout("Reshape", version, [source, ivec(len(target))], attributes, [source_data, vec(*target)])


@pytest.mark.parametrize("source, target, expected", [
    ((2, 3, 4), (0, -1), (2, 12)),
    ((2, 3, 4), (-1,), (24,)),
    ((2, 3, 4), (4, 0, 2), (4, 3, 2)),
    ((2, 3, 4), (-1, 2, 2), (6, 2, 2)),
    ((0, 4), (0, -1), (0, None)),  # any size fits: left unknown
    ((N, 3, 4), (0, -1), (N, 12)),
    ((N, 3, 4), (-1, 12), (N, 12)),
    ((N, M), (-1,), (N * M,)),
    ((N, 6), (N, -1), (N, 6)),
    ((N, 6), (3, -1), (3, 2 * N)),
    ((N, None), (0, -1), (N, None)),
    ((None, 4), (2, 2, -1), (2, 2, None)),
    ((2, 3), (3, None), (3, None)),
])
def test_reshape_input(source, target, expected):
    assert shape(reshape(t(*source), target)) == expected


def test_reshape_attribute_version_1():
    assert shape(reshape(t(2, 3), (3, -1), version=1)) == (3, 2)
    assert shape(run_layout("Reshape", 1, [t(2, 3)])) is None  # no target at all


def test_reshape_allowzero():
    assert shape(reshape(t(0, 4), (4, 0), attributes={"allowzero": 1})) == (4, 0)
    assert shape(reshape(t(2, 4), (2, 0), attributes={"allowzero": 0})) == (2, 4)
    # Before version 14 there is no allowzero: 0 always copies.
    assert shape(reshape(t(2, 4), (2, 0), version=13)) == (2, 4)


def test_reshape_unknown_target():
    assert shape(run_layout("Reshape", 14, [t(2, 3), ivec(3)])) == (None, None, None)
    assert shape(run_layout("Reshape", 14, [t(2, 3), ivec(None)])) is None
    assert shape(run_layout("Reshape", 14, [t(2, 3), TensorType(I64, None)])) is None


def test_reshape_unknown_rank_input():
    assert shape(reshape(t(None), (2, -1))) == (2, None)
    assert shape(reshape(t(None), (0, 3))) == (None, 3)


@pytest.mark.parametrize("source, target, attributes, message", [
    ((2, 3), (4, -1), None, "not a multiple"),
    ((2, 3), (4, 2), None, "6 elements.*8 elements"),
    ((2, 3), (-1, -1), None, "more than one -1"),
    ((2, 3), (0, -1), {"allowzero": 1}, "both 0 and -1"),
    ((2, 3), (2, -2), None, "invalid entry -2"),
    ((2, 3), (2, 3, 0), None, "copies dim 2"),
    ((2, 3), (0, 4, -1), None, "into"),
    ((N, 2), (parse_dim("2*N+1"),), None, "2\\*N\\+1 elements"),
])
def test_reshape_errors(source, target, attributes, message):
    with pytest.raises(InferenceError, match=message):
        reshape(t(*source), target, attributes=attributes)


def test_reshape_rejects_a_2d_shape_input():
    with pytest.raises(InferenceError, match="1-D"):
        run_layout("Reshape", 14, [t(2, 3), TensorType(I64, (2, 1))])


def test_reshape_propagates_data():
    ctx = reshape(TensorType(I64, (3,)), (1, -1), source_data=vec(N, 4, 5))
    assert shape(ctx) == (1, 3)
    assert ctx.output_data(0) == Data((1, 3), (N, 4, 5))
    ctx = run_layout("Reshape", 14, [TensorType(I64, (1,)), ivec(0)], data=[vec(7), Data((0,), ())])
    assert shape(ctx) == ()
    assert ctx.output_data(0) == Data((), (7,))


def test_reshape_matches_numpy():
    rng = random.Random(1)
    for _ in range(200):
        source = tuple(rng.randint(1, 4) for _ in range(rng.randint(0, 4)))
        array = np.zeros(source)
        # A random target: regroup the elements by factoring the total.
        total, target = array.size, []
        while total > 1:
            factor = rng.choice([f for f in range(1, total + 1) if total % f == 0])
            target.append(factor)
            total //= factor
        rng.shuffle(target)
        target = target or [1]
        expected = array.reshape(target).shape
        request = list(target)
        request[rng.randrange(len(request))] = -1
        for i, d in enumerate(request):
            if i < len(source) and d == source[i] and rng.random() < 0.5:
                request[i] = 0
        if request.count(-1) > 1:
            continue
        assert shape(reshape(t(*source), request)) == expected, (source, request)


# ----------------------------------------------------------------------------- flatten

@pytest.mark.parametrize("version, source, axis, expected", [
    (1, (2, 3, 4), None, (2, 12)),
    (9, (2, 3, 4), 0, (1, 24)),
    (13, (2, 3, 4), 3, (24, 1)),
    (11, (2, 3, 4), -1, (6, 4)),
    (13, (2, 3, 4), -3, (1, 24)),
    (13, (N, 3, 4), 1, (N, 12)),
    (13, (N, 3, 4), 2, (3 * N, 4)),
    (13, (N, None, 4), 1, (N, None)),
    (13, (), 0, (1, 1)),
    (13, None, 0, (1, None)),
    (13, None, 2, (None, None)),
])
def test_flatten(version, source, axis, expected):
    attributes = {} if axis is None else {"axis": axis}
    source = t(None) if source is None else t(*source)
    assert shape(run_layout("Flatten", version, [source], attributes)) == expected


def test_flatten_errors():
    with pytest.raises(InferenceError, match="negative"):
        run_layout("Flatten", 9, [t(2, 3, 4)], {"axis": -1})
    with pytest.raises(InferenceError, match="out of range"):
        run_layout("Flatten", 13, [t(2, 3, 4)], {"axis": 4})
    with pytest.raises(InferenceError, match="out of range"):
        run_layout("Flatten", 13, [t(2, 3, 4)], {"axis": -4})


def test_flatten_propagates_data():
    ctx = run_layout("Flatten", 13, [TensorType(I64, (2,))], {"axis": 0}, [vec(3, 4)])
    assert ctx.output_data(0) == Data((1, 2), (3, 4))


def test_flatten_matches_numpy():
    rng = random.Random(2)
    for _ in range(100):
        source = tuple(rng.randint(1, 4) for _ in range(rng.randint(0, 4)))
        axis = rng.randint(-len(source), len(source))
        a = axis + len(source) if axis < 0 else axis
        expected = np.zeros(source).reshape(int(np.prod(source[:a])), -1).shape
        assert shape(run_layout("Flatten", 13, [t(*source)], {"axis": axis})) == expected


# ----------------------------------------------------------------------------- transpose

def test_transpose():
    assert shape(run_layout("Transpose", 13, [t(2, 3, 4)], {"perm": [1, 0, 2]})) == (3, 2, 4)
    assert shape(run_layout("Transpose", 1, [t(2, N, 4)])) == (4, N, 2)
    assert shape(run_layout("Transpose", 13, [t(None)], {"perm": [1, 0]})) == (None, None)
    assert shape(run_layout("Transpose", 13, [t(None)])) is None
    assert shape(run_layout("Transpose", 13, [t()])) == ()


@pytest.mark.parametrize("perm, message", [
    ([0, 0, 1], "not a permutation"),
    ([-1, 0, 1], "not a permutation"),
    ([0, 1, 3], "not a permutation"),
    ([1, 0], "has 2 entries but the input"),
])
def test_transpose_errors(perm, message):
    with pytest.raises(InferenceError, match=message):
        run_layout("Transpose", 13, [t(2, 3, 4)], {"perm": perm})


def test_transpose_propagates_data():
    ctx = run_layout("Transpose", 13, [TensorType(I64, (2, 3))], {}, [Data((2, 3), (1, 2, 3, 4, 5, 6))])
    assert ctx.output_data(0) == Data((3, 2), (1, 4, 2, 5, 3, 6))


def test_transpose_matches_numpy():
    rng = np.random.default_rng(3)
    for _ in range(100):
        source = tuple(int(d) for d in rng.integers(1, 5, size=rng.integers(0, 5)))
        perm = [int(p) for p in rng.permutation(len(source))]
        array = rng.integers(0, 100, size=source)
        ctx = run_layout("Transpose", 13, [TensorType(I64, source)], {"perm": perm},
                  [Data(source, tuple(int(v) for v in array.ravel()))])
        expected = np.transpose(array, perm)
        assert shape(ctx) == expected.shape
        assert ctx.output_data(0).values == tuple(int(v) for v in expected.ravel())


# ----------------------------------------------------------------------------- concat

@pytest.mark.parametrize("version, inputs, axis, expected", [
    (4, [(2, 3), (2, 5)], 1, (2, 8)),
    (13, [(2, 3), (4, 3), (1, 3)], 0, (7, 3)),
    (11, [(2, 3), (2, 5)], -1, (2, 8)),
    (13, [(2, N), (2, 3)], 1, (2, N + 3)),
    (13, [(N, 3), (M, 3)], 0, (N + M, 3)),
    (13, [(None, 3), (2, None)], 0, (None, 3)),
    (13, [(None, 3), (2, None)], 1, (2, None)),
    (13, [(N, 3), None], 1, (N, None)),
    (13, [None, None], 0, None),
    (13, [(2, 3)], 0, (2, 3)),
])
def test_concat(version, inputs, axis, expected):
    types = [t(None) if s is None else t(*s) for s in inputs]
    assert shape(run_layout("Concat", version, types, {"axis": axis})) == expected


def test_concat_version_1_defaults_to_axis_1():
    assert shape(run_layout("Concat", 1, [t(2, 3), t(2, 5)])) == (2, 8)


@pytest.mark.parametrize("version, inputs, axis, message", [
    (13, [(2, 3), (2, 3, 1)], 0, "rank"),
    (13, [(2, 3), (3, 3)], 1, "dim 3 at axis 0"),
    (4, [(2, 3), (2, 3)], -1, "negative"),
    (13, [(2, 3), (2, 3)], 2, "out of range"),
    (13, [(), ()], 0, "scalars"),
    (4, [(2, 3), (2, 3)], None, "required"),
])
def test_concat_errors(version, inputs, axis, message):
    attributes = {} if axis is None else {"axis": axis}
    with pytest.raises(InferenceError, match=message):
        run_layout("Concat", version, [t(*s) for s in inputs], attributes)


def test_concat_propagates_data_with_unknown_pieces():
    ctx = run_layout("Concat", 13, [ivec(1), ivec(1), ivec(2)], {"axis": 0}, [vec(N), None, vec(-1, 3)])
    assert shape(ctx) == (4,)
    assert ctx.output_data(0) == vec(N, None, -1, 3)
    # No piece known: nothing to propagate.
    assert run_layout("Concat", 13, [ivec(1), ivec(1)], {"axis": 0}).output_data(0) is None
    # A piece of unknown length breaks the positions of everything after it.
    assert run_layout("Concat", 13, [ivec(1), ivec(None)], {"axis": 0}, [vec(1)]).output_data(0) is None


def test_concat_matches_numpy():
    rng = random.Random(4)
    for _ in range(100):
        rank = rng.randint(1, 4)
        base = [rng.randint(1, 4) for _ in range(rank)]
        axis = rng.randrange(-rank, rank)
        arrays = []
        for _ in range(rng.randint(1, 4)):
            s = list(base)
            s[axis] = rng.randint(0, 4)
            arrays.append(np.zeros(s))
        expected = np.concatenate(arrays, axis=axis).shape
        assert shape(run_layout("Concat", 13, [t(*a.shape) for a in arrays], {"axis": axis})) == expected


# ----------------------------------------------------------------------------- split

def shapes(ctx):
    return [shape(ctx, i) for i in range(ctx.output_count)]


def test_split_attribute():
    ctx = run_layout("Split", 2, [t(2, 10)], {"axis": 1, "split": [3, 7]}, outputs=2)
    assert shapes(ctx) == [(2, 3), (2, 7)]
    ctx = run_layout("Split", 11, [t(2, 10)], {"axis": -1, "split": [3, 7]}, outputs=2)
    assert shapes(ctx) == [(2, 3), (2, 7)]


def test_split_version_1_input_or_attribute():
    ctx = run_layout("Split", 1, [t(6, 2), ivec(2)], {"axis": 0}, [None, vec(1, 5)], outputs=2)
    assert shapes(ctx) == [(1, 2), (5, 2)]
    ctx = run_layout("Split", 1, [t(6, 2)], {"axis": 0, "split": [4, 2]}, outputs=2)
    assert shapes(ctx) == [(4, 2), (2, 2)]


def test_split_input():
    ctx = run_layout("Split", 13, [t(6, N), ivec(3)], {"axis": 0}, [None, vec(1, 2, 3)], outputs=3)
    assert shapes(ctx) == [(1, N), (2, N), (3, N)]
    ctx = run_layout("Split", 13, [t(None, 4), ivec(2)], {}, [None, vec(1, 2)], outputs=2)
    assert shapes(ctx) == [(1, 4), (2, 4)]
    # Sizes unknown: the split axis is unknown in every piece.
    ctx = run_layout("Split", 13, [t(6, 4), ivec(2)], {"axis": 1}, outputs=2)
    assert shapes(ctx) == [(6, None), (6, None)]


def test_split_evenly():
    assert shapes(run_layout("Split", 13, [t(6, 4)], {}, outputs=3)) == [(2, 4)] * 3
    assert shapes(run_layout("Split", 13, [t(2 * N, 4)], {}, outputs=2)) == [(N, 4)] * 2
    assert shapes(run_layout("Split", 13, [t(None, 4)], {}, outputs=2)) == [(None, 4)] * 2
    assert shapes(run_layout("Split", 13, [t(None)], {}, outputs=2)) == [None, None]


def test_split_num_outputs():
    assert shapes(run_layout("Split", 18, [t(7, 2)], {"num_outputs": 3}, outputs=3)) == [(3, 2), (3, 2), (1, 2)]
    assert shapes(run_layout("Split", 18, [t(6)], {"num_outputs": 3}, outputs=3)) == [(2,), (2,), (2,)]
    assert shapes(run_layout("Split", 18, [t(4)], {"num_outputs": 3}, outputs=3)) == [(2,), (2,), (0,)]
    pieces = shapes(run_layout("Split", 18, [t(N)], {"num_outputs": 3}, outputs=3))
    for n in range(7, 20):
        expected = [len(p) for p in np.array_split(np.zeros(n), range(-(-n // 3), n, -(-n // 3)))]
        assert [p[0].evaluate({"N": n}) for p in pieces] == expected


@pytest.mark.parametrize("version, inputs, attributes, data, outputs, message", [
    (13, [(7, 2)], {}, [], 2, "do not divide evenly"),
    (2, [(7, 2)], {"split": [3, 3]}, [], 2, "adds up to 6"),
    (2, [(7, 2)], {"split": [3, 4]}, [], 3, "2 entries but the node has 3"),
    (13, [(7, 2), 2], {}, [None, vec(8, -1)], 2, "negative size"),
    (18, [(5,)], {"num_outputs": 4}, [], 4, "too few"),
    (18, [(6,)], {"num_outputs": 3}, [], 2, "3 but the node has 2"),
    (18, [(6,), 2], {"num_outputs": 2}, [None, vec(3, 3)], 2, "cannot both"),
    (2, [(6, 2)], {"axis": 2}, [], 2, "out of range"),
    (2, [(6, 2)], {"axis": -1}, [], 2, "negative"),
])
def test_split_errors(version, inputs, attributes, data, outputs, message):
    types = [ivec(s) if isinstance(s, int) else t(*s) for s in inputs]
    with pytest.raises(InferenceError, match=message):
        run_layout("Split", version, types, attributes, data, outputs=outputs)


def test_split_propagates_data():
    ctx = run_layout("Split", 13, [ivec(3), ivec(2)], {}, [vec(N, 3, 4), vec(1, 2)], outputs=2)
    assert [ctx.output_data(i) for i in range(2)] == [vec(N), vec(3, 4)]


def test_split_matches_numpy():
    rng = random.Random(5)
    for _ in range(100):
        source = [rng.randint(1, 6) for _ in range(rng.randint(1, 3))]
        axis = rng.randrange(len(source))
        cuts = sorted(rng.randint(0, source[axis]) for _ in range(rng.randint(0, 3)))
        expected = [a.shape for a in np.split(np.zeros(source), cuts, axis=axis)]
        sizes = [e[axis] for e in expected]
        ctx = run_layout("Split", 13, [t(*source), ivec(len(sizes))], {"axis": axis}, [None, vec(*sizes)],
                  outputs=len(sizes))
        assert shapes(ctx) == expected


# ----------------------------------------------------------------------------- slice

def slice_(source, starts, ends, axes=None, steps=None, version=13, data=None):
    inputs = [source, ivec(len(starts)), ivec(len(ends))]
    values = [data, vec(*starts), vec(*ends)]
    if axes is not None or steps is not None:
        inputs.append(None if axes is None else ivec(len(axes)))
        values.append(None if axes is None else vec(*axes))
    if steps is not None:
        inputs.append(ivec(len(steps)))
        values.append(vec(*steps))
    return run_layout("Slice", version, inputs, {}, values)


@pytest.mark.parametrize("source, starts, ends, axes, steps, expected", [
    ((10, 8), (1,), (4,), None, None, (3, 8)),
    ((10, 8), (1, 2), (4, 8), None, None, (3, 6)),
    ((10, 8), (2,), (INT_MAX,), (1,), None, (10, 6)),
    ((10, 8), (-3,), (INT_MAX,), (-2,), None, (3, 8)),
    ((10, 8), (-1,), (INT_MIN,), (0,), (-1,), (10, 8)),
    ((10, 8), (INT_MAX,), (INT_MIN,), (0,), (-2,), (5, 8)),
    ((10, 8), (0,), (10,), (0,), (3,), (4, 8)),
    ((10, 8), (5,), (2,), (0,), None, (0, 8)),
    ((10, 8), (1,), (4,), (1,), None, (10, 3)),
    ((N, 8), (1,), (INT_MAX,), (0,), None, (N - 1, 8)),
    ((N, 8), (0,), (-1,), (0,), None, (N - 1, 8)),
    ((N, 8), (0,), (INT_MAX,), (0,), None, (N, 8)),
    ((N, 8), (-1,), (INT_MIN,), (0,), (-1,), (N, 8)),
    ((N, 8), (0,), (2,), (0,), None, (Sym.min(N, 2), 8)),
    ((N, 8), (1,), (4,), (1,), None, (N, 3)),
    ((None, 8), (1,), (4,), (0,), None, (None, 8)),
    ((None, 8), (4,), (1,), (0,), None, (0, 8)),
])
def test_slice(source, starts, ends, axes, steps, expected):
    assert shape(slice_(t(*source), starts, ends, axes, steps)) == expected


def test_slice_version_1_attributes():
    ctx = run_layout("Slice", 1, [t(10, 8)], {"starts": [1, 2], "ends": [4, 100], "axes": [0, 1]})
    assert shape(ctx) == (3, 6)
    ctx = run_layout("Slice", 1, [t(10, 8)], {"starts": [1], "ends": [-1]})
    assert shape(ctx) == (8, 8)


def test_slice_negative_axes_need_version_11():
    assert shape(slice_(t(10, 8), (1,), (3,), (-1,), version=11)) == (10, 2)
    with pytest.raises(InferenceError, match="negative"):
        slice_(t(10, 8), (1,), (3,), (-1,), version=10)


def test_slice_unknown_bounds():
    # Unknown starts: the listed axes become unknown.
    ctx = run_layout("Slice", 13, [t(10, 8, 6), ivec(1), ivec(1), ivec(1)], {}, [None, None, vec(3), vec(1)])
    assert shape(ctx) == (10, None, 6)
    # Unknown starts without axes: the first len(starts) axes.
    ctx = run_layout("Slice", 13, [t(10, 8, 6), ivec(2), ivec(2)], {}, [None, vec(1, 2)])
    assert shape(ctx) == (None, None, 6)
    # Unknown axes: every axis.
    ctx = run_layout("Slice", 13, [t(10, 8, 6), ivec(1), ivec(1), ivec(1)], {}, [None, vec(0), vec(3)])
    assert shape(ctx) == (None, None, None)
    # Unknown steps: the listed axes.
    ctx = run_layout("Slice", 13, [t(10, 8), ivec(1), ivec(1), ivec(1), ivec(1)], {},
              [None, vec(0), vec(3), vec(1)])
    assert shape(ctx) == (10, None)
    # Partially known bounds: per axis.
    ctx = slice_(t(10, 8), (None, 1), (3, 4))
    assert shape(ctx) == (None, 3)
    # Nothing known about the lengths either.
    ctx = run_layout("Slice", 13, [t(10, 8), ivec(None), ivec(None)])
    assert shape(ctx) == (None, None)
    assert shape(slice_(t(None), (1,), (3,))) is None


@pytest.mark.parametrize("starts, ends, axes, steps, message", [
    ((0,), (1,), (0,), (0,), "step 0"),
    ((0, 1), (1,), None, None, "one length"),
    ((0, 0), (1, 1), (0, 0), None, "repeat"),
    ((0,), (1,), (2,), None, "out of range"),
    ((0, 0, 0), (1, 1, 1), None, None, "3 starts for an input of rank 2"),
])
def test_slice_errors(starts, ends, axes, steps, message):
    with pytest.raises(InferenceError, match=message):
        slice_(t(10, 8), starts, ends, axes, steps)


def test_slice_propagates_data():
    ctx = slice_(ivec(4), (1,), (INT_MAX,), data=vec(N, 3, 4, M))
    assert ctx.output_data(0) == vec(3, 4, M)
    ctx = slice_(ivec(4), (-1,), (INT_MIN,), (0,), (-2,), data=vec(1, 2, 3, 4))
    assert ctx.output_data(0) == vec(4, 2)
    ctx = run_layout("Slice", 13, [ivec(4), ivec(1), ivec(1), ivec(1)], {}, [vec(1, 2, 3, 4), None, vec(2), vec(0)])
    assert shape(ctx) == (None,)
    assert ctx.output_data(0) is None



@pytest.mark.parametrize("starts, ends, axes, steps", [
    ((-1,), (INT_MIN,), (0,), (-1,)),  # torch's pad lowering reverses the (begin, end) rows
    ((1, 0), (3, INT_MAX), (0, 1), (1, 2)),
    ((0,), (2,), (-1,), None),
    ((2, -1), (0, INT_MIN), (1, 0), (-1, -2)),
    ((5,), (6,), (0,), None),
])
def test_slice_propagates_data_of_any_rank(starts, ends, axes, steps):
    values = np.arange(12).reshape(4, 3)
    data = Data((4, 3), tuple(Sym(f"d{v}") if v % 5 == 0 else int(v) for v in values.flat))
    ctx = run_layout("Slice", 13, [TensorType(I64, (4, 3)), ivec(len(starts)), ivec(len(ends)), ivec(len(axes))]
              + ([ivec(len(steps))] if steps else []), {},
              [data, vec(*starts), vec(*ends), vec(*axes)] + ([vec(*steps)] if steps else []))
    window = [slice(None)] * 2
    for k, axis in enumerate(axes):
        window[axis] = slice(starts[k], ends[k], steps[k] if steps else 1)
    expected = values[tuple(window)]
    assert ctx.output_data(0) == Data(expected.shape, tuple(data.values[int(i)] for i in expected.flat))
    assert shape(ctx) == expected.shape

BOUNDS = [-12, -7, -5, -3, -2, -1, 0, 1, 2, 3, 5, 7, 12, INT_MAX, INT_MIN, 2**31 - 1, -(2**31)]


def test_slice_matches_numpy():
    rng = random.Random(6)
    for _ in range(500):
        source = [rng.randint(0, 7) for _ in range(rng.randint(1, 3))]
        axes = rng.sample(range(len(source)), rng.randint(1, len(source)))
        starts = [rng.choice(BOUNDS) for _ in axes]
        ends = [rng.choice(BOUNDS) for _ in axes]
        steps = [rng.choice([-3, -2, -1, 1, 2, 3]) for _ in axes]
        index = [slice(None)] * len(source)
        for a, s, e, k in zip(axes, starts, ends, steps):
            index[a] = slice(s, e, k)
        expected = np.zeros(source)[tuple(index)].shape
        assert shape(slice_(t(*source), starts, ends, axes, steps)) == expected


def test_symbolic_slice_agrees_with_numpy_for_every_size():
    """A symbolic result, evaluated at N = n, is numpy's length (a negative value reads as 0)."""
    for start in BOUNDS:
        for end in BOUNDS:
            for step in (-3, -2, -1, 1, 2, 3):
                dim = shape(slice_(t(N), (start,), (end,), (0,), (step,)))[0]
                for n in range(0, 9):
                    expected = len(range(n)[start:end:step])
                    value = dim if type(dim) is int else dim.evaluate({"N": n})
                    assert max(0, value) == expected, (start, end, step, n, dim)


S = Sym("S")


@pytest.mark.parametrize("dim", [N, 6])
def test_symbolic_bounds_agree_with_numpy_for_every_size(dim):
    """A bound read from a shape (``x[:S]``, ``x[S:]``, ``x[1:S-1]``) on a known or symbolic dim."""
    bounds: list[tuple[int | Sym, int | Sym]] = [(0, S), (S, INT_MAX), (1, S - 1), (S, S + 2), (2, 2 * S),
                                                 (S - 1, INT_MAX)]
    for start, end in bounds:
        for step in (1, 2):
            length = shape(slice_(t(dim), (start,), (end,), (0,), (step,)))[0]
            assert length is not None, (start, end, step)
            for n in range(0, 9):
                for s in range(0, 9):
                    size = dim if type(dim) is int else n
                    begin = start if isinstance(start, int) else start.evaluate({"S": s})
                    stop = end if isinstance(end, int) else end.evaluate({"S": s})
                    if begin < 0 or stop < 0:
                        continue  # S-1 at S = 0: outside the convention that S-1 stands for a count
                    value = length if type(length) is int else length.evaluate({"N": n, "S": s})
                    assert max(0, value) == len(range(size)[begin:stop:step]), (start, end, step, n, s, length)


@pytest.mark.parametrize("start, end", [(-S, INT_MAX), (0, -S), (0, N - S), (S - N, INT_MAX)])
def test_bounds_that_may_count_from_the_end_leave_the_dim_unknown(start, end):
    assert shape(slice_(t(N), (start,), (end,), (0,))) == (None,)
    assert shape(slice_(t(8), (start,), (end,), (0,))) == (None,)


# ----------------------------------------------------------------------------- squeeze / unsqueeze

@pytest.mark.parametrize("version, source, axes, expected", [
    (1, (1, 3, 1, 5), [0, 2], (3, 5)),
    (11, (1, 3, 1, 5), [-2], (1, 3, 5)),
    (1, (1, 3, 1, 5), None, (3, 5)),
    (13, (1, 3, 1, 5), None, (3, 5)),
    (13, (1, 3, N, 5), None, None),
    (13, (1, 3, None), None, None),
    (13, (1, N, None), [0], (N, None)),
    (13, (N, 3), [0], (3,)),
    (13, (None, 3), [0], (3,)),
    (13, None, [0], None),
    (13, None, None, None),
    (13, (1,), None, ()),
])
def test_squeeze(version, source, axes, expected):
    source = t(None) if source is None else t(*source)
    if version < 13:
        ctx = run_layout("Squeeze", version, [source], {} if axes is None else {"axes": axes})
    elif axes is None:
        ctx = run_layout("Squeeze", version, [source])
    else:
        ctx = run_layout("Squeeze", version, [source, ivec(len(axes))], {}, [None, vec(*axes)])
    assert shape(ctx) == expected


def test_squeeze_unknown_axes():
    assert shape(run_layout("Squeeze", 13, [t(1, 3, 1), ivec(2)])) == (None,)
    assert shape(run_layout("Squeeze", 13, [t(1, 3, 1), ivec(None)])) is None


@pytest.mark.parametrize("version, axes, message", [
    (13, [1], "its size is 3, not 1"),
    (1, [-1], "negative"),
    (13, [0, 0], "repeat"),
    (13, [4], "out of range"),
])
def test_squeeze_errors(version, axes, message):
    with pytest.raises(InferenceError, match=message):
        if version < 13:
            run_layout("Squeeze", version, [t(1, 3, 1)], {"axes": axes})
        else:
            run_layout("Squeeze", version, [t(1, 3, 1), ivec(len(axes))], {}, [None, vec(*axes)])


def test_squeeze_propagates_data():
    ctx = run_layout("Squeeze", 13, [ivec(1), ivec(1)], {}, [vec(N), vec(0)])
    assert ctx.output_data(0) == Data((), (N,))


@pytest.mark.parametrize("version, source, axes, expected", [
    (1, (3, 4, 5), [0, 4], (1, 3, 4, 5, 1)),
    (11, (3, 4, 5), [-1], (3, 4, 5, 1)),
    (13, (3, 4, 5), [2, 0], (1, 3, 1, 4, 5)),
    (13, (), [0], (1,)),
    (13, (N,), [0, -1], (1, N, 1)),
    (13, None, [0], None),
])
def test_unsqueeze(version, source, axes, expected):
    source = t(None) if source is None else t(*source)
    if version < 13:
        ctx = run_layout("Unsqueeze", version, [source], {"axes": axes})
    else:
        ctx = run_layout("Unsqueeze", version, [source, ivec(len(axes))], {}, [None, vec(*axes)])
    assert shape(ctx) == expected


def test_unsqueeze_unknown_axes():
    assert shape(run_layout("Unsqueeze", 13, [t(3, 4), ivec(2)])) == (None,) * 4
    assert shape(run_layout("Unsqueeze", 13, [t(3, 4), ivec(None)])) is None


@pytest.mark.parametrize("version, axes, message", [
    (13, [0, 0], "repeat"),
    (13, [0, -4], "repeat"),
    (13, [3], "out of range"),
    (1, [-1], "negative"),
])
def test_unsqueeze_errors(version, axes, message):
    with pytest.raises(InferenceError, match=message):
        if version < 13:
            run_layout("Unsqueeze", version, [t(3, 4)], {"axes": axes})
        else:
            run_layout("Unsqueeze", version, [t(3, 4), ivec(len(axes))], {}, [None, vec(*axes)])
    with pytest.raises(InferenceError, match="required"):
        run_layout("Unsqueeze", 1, [t(3, 4)])


def test_unsqueeze_propagates_data():
    ctx = run_layout("Unsqueeze", 13, [TensorType(I64, ()), ivec(1)], {}, [Data((), (N,)), vec(0)])
    assert shape(ctx) == (1,)
    assert ctx.output_data(0) == vec(N)


def test_squeeze_and_unsqueeze_match_numpy():
    rng = random.Random(7)
    for _ in range(200):
        source = tuple(rng.choice([1, 1, 2, 3]) for _ in range(rng.randint(0, 4)))
        array = np.zeros(source)
        ones = [i for i, d in enumerate(source) if d == 1]
        axes = [a - len(source) if rng.random() < 0.5 else a for a in rng.sample(ones, rng.randint(0, len(ones)))]
        if axes:
            ctx = run_layout("Squeeze", 13, [t(*source), ivec(len(axes))], {}, [None, vec(*axes)])
            assert shape(ctx) == np.squeeze(array, tuple(axes)).shape
        assert shape(run_layout("Squeeze", 13, [t(*source)])) == np.squeeze(array).shape
        rank = len(source) + rng.randint(1, 3)
        axes = rng.sample(range(-rank, rank), rank - len(source))
        if len({a % rank for a in axes}) != len(axes):
            continue
        ctx = run_layout("Unsqueeze", 13, [t(*source), ivec(len(axes))], {}, [None, vec(*axes)])
        assert shape(ctx) == np.expand_dims(array, tuple(axes)).shape


# ----------------------------------------------------------------------------- gather

@pytest.mark.parametrize("source, indices, axis, expected", [
    ((5, 4), (2, 3), 0, (2, 3, 4)),
    ((5, 4), (2, 3), 1, (5, 2, 3)),
    ((5, 4), (2,), -1, (5, 2)),
    ((5, 4), (), 0, (4,)),
    ((N, M), (7,), 1, (N, 7)),
    ((5, 4), None, 0, None),
    (None, (2,), 0, None),
])
def test_gather(source, indices, axis, expected):
    source = t(None) if source is None else t(*source)
    indices = TensorType(I64, indices)
    assert shape(run_layout("Gather", 13, [source, indices], {"axis": axis})) == expected


def test_gather_errors():
    with pytest.raises(InferenceError, match="out of range"):
        run_layout("Gather", 13, [t(5, 4), ivec(2)], {"axis": 2})
    with pytest.raises(InferenceError, match="scalar"):
        run_layout("Gather", 13, [t(), ivec(2)])
    with pytest.raises(InferenceError, match="index 4 is out of range"):
        run_layout("Gather", 13, [ivec(3), TensorType(I64, ())], {}, [vec(1, 2, 3), Data((), (4,))])


def test_gather_propagates_data():
    dims = vec(N, 3, M)
    ctx = run_layout("Gather", 13, [ivec(3), TensorType(I64, ())], {}, [dims, Data((), (0,))])
    assert shape(ctx) == ()
    assert ctx.output_data(0) == Data((), (N,))
    ctx = run_layout("Gather", 13, [ivec(3), ivec(3)], {}, [dims, vec(-1, 1, None)])
    assert ctx.output_data(0) == vec(M, 3, None)
    assert run_layout("Gather", 13, [ivec(3), ivec(1)], {}, [dims, None]).output_data(0) is None


def test_gather_matches_numpy():
    rng = np.random.default_rng(8)
    for _ in range(100):
        source = tuple(int(d) for d in rng.integers(1, 4, size=rng.integers(1, 4)))
        indices = tuple(int(d) for d in rng.integers(1, 4, size=rng.integers(0, 3)))
        axis = int(rng.integers(-len(source), len(source)))
        picks = rng.integers(0, source[axis], size=indices)
        expected = np.take(np.zeros(source), picks, axis=axis).shape
        assert shape(run_layout("Gather", 13, [t(*source), TensorType(I64, indices)], {"axis": axis})) == expected


# ----------------------------------------------------------------------------- expand

@pytest.mark.parametrize("source, target, expected", [
    ((3, 1), (2, 1, 6), (2, 3, 6)),
    ((3, 4), (1, 1), (3, 4)),
    ((1,), (N, 3), (N, 3)),
    ((N, 1), (1, 5), (N, 5)),
    ((None, 1), (4, 5), (4, 5)),
    ((2, 1), (None, 5), (2, 5)),
    ((1, 1), (None, 5), (None, 5)),
])
def test_expand(source, target, expected):
    ctx = run_layout("Expand", 13, [t(*source), ivec(len(target))], {}, [None, vec(*target)])
    assert shape(ctx) == expected


def test_expand_unknown_target():
    assert shape(run_layout("Expand", 13, [t(4, 1), ivec(3)])) == (None, 4, None)
    assert shape(run_layout("Expand", 8, [t(2, 3, 4), ivec(2)])) == (2, 3, 4)
    assert shape(run_layout("Expand", 13, [t(4, 1), ivec(None)])) is None
    assert shape(run_layout("Expand", 13, [t(None), ivec(2)], {}, [None, vec(2, 3)])) is None


def test_expand_errors():
    with pytest.raises(ShapeError, match="cannot broadcast"):
        run_layout("Expand", 13, [t(3, 4), ivec(1)], {}, [None, vec(5)])
    with pytest.raises(InferenceError, match="negative"):
        run_layout("Expand", 13, [t(3, 4), ivec(1)], {}, [None, vec(-1)])


def test_expand_matches_numpy():
    rng = random.Random(9)
    for _ in range(200):
        source = [rng.choice([1, 1, 2, 3]) for _ in range(rng.randint(0, 3))]
        target = [rng.choice([1, 1, 2, 3]) for _ in range(rng.randint(0, 3))]
        try:
            expected = np.broadcast_shapes(tuple(source), tuple(target))
        except ValueError:
            with pytest.raises(ShapeError):
                run_layout("Expand", 13, [t(*source), ivec(len(target))], {}, [None, vec(*target)])
            continue
        ctx = run_layout("Expand", 13, [t(*source), ivec(len(target))], {}, [None, vec(*target)])
        assert shape(ctx) == expected
        assert np.broadcast_to(np.zeros(source), expected).shape == expected


# ----------------------------------------------------------------------------- shape / size

def test_shape():
    ctx = run_layout("Shape", 13, [t(N, 3, None)])
    assert ctx.output_type(0) == TensorType(I64, (3,))
    assert ctx.output_data(0) == vec(N, 3, None)
    ctx = run_layout("Shape", 1, [t()])
    assert ctx.output_type(0) == TensorType(I64, (0,))
    assert ctx.output_data(0) == Data((0,), ())


@pytest.mark.parametrize("start, end, expected", [
    (None, None, (2, 3, 4)),
    (1, None, (3, 4)),
    (None, -1, (2, 3)),
    (-2, None, (3, 4)),
    (-10, 10, (2, 3, 4)),
    (2, 1, ()),
    (5, None, ()),
    (1, 2, (3,)),
])
def test_shape_start_end(start, end, expected):
    attributes = {k: v for k, v in (("start", start), ("end", end)) if v is not None}
    ctx = run_layout("Shape", 15, [t(2, 3, 4)], attributes)
    assert ctx.output_type(0) == TensorType(I64, (len(expected),))
    assert ctx.output_data(0) == vec(*expected)
    assert expected == np.zeros((2, 3, 4)).shape[slice(start, end)]


def test_shape_unknown_rank():
    ctx = run_layout("Shape", 15, [t(None)])
    assert ctx.output_type(0) == TensorType(I64, (None,))
    assert ctx.output_data(0) is None
    assert shape(run_layout("Shape", 15, [t(None)], {"start": 2, "end": 1})) == (0,)


def test_shape_ignores_start_before_version_15():
    assert shape(run_layout("Shape", 13, [t(2, 3)], {"start": 1})) == (2,)


def size(source):
    """The size rule over Size's schema."""
    ctx = InferenceContext(opspec.get_schema("Size", 21), [source], {})

    rule = RULES.lookup("size")
    assert rule is not None
    rule(ctx)
    return ctx


def test_size():
    ctx = size(t(2, 3, 4))
    assert ctx.output_type(0) == TensorType(I64, ())
    assert ctx.output_data(0) == Data((), (24,))
    assert size(t(N, 3)).output_data(0) == Data((), (3 * N,))
    assert size(t(N, None)).output_data(0) == Data((), (None,))
    assert size(t()).output_data(0) == Data((), (1,))
    ctx = size(t(None))
    assert ctx.output_type(0) == TensorType(I64, ())
    assert ctx.output_data(0) is None


# ----------------------------------------------------------------------------- propagation chain

def test_shape_data_drives_a_reshape():
    """Shape -> Gather -> Unsqueeze -> Concat -> Reshape keeps the symbolic batch dim."""
    x = t(N, 3, 4)
    dims = run_layout("Shape", 13, [x]).output_data(0)
    batch = run_layout("Gather", 13, [ivec(3), TensorType(I64, ())], {}, [dims, Data((), (0,))]).output_data(0)
    batch = run_layout("Unsqueeze", 13, [TensorType(I64, ()), ivec(1)], {}, [batch, vec(0)]).output_data(0)
    target = run_layout("Concat", 13, [ivec(1), ivec(1)], {"axis": 0}, [batch, vec(-1)]).output_data(0)
    assert target == vec(N, -1)
    assert shape(run_layout("Reshape", 14, [x, ivec(2)], {}, [None, target])) == (N, 12)
