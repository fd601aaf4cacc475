"""Tests for the generator rules: constant, constant_of_shape and range."""
import math
from collections import namedtuple

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import opspec
from opspec.generated import opspec_ir_pb2 as ir
from opspec.runtime.contract import InferenceContext, InferenceError
from opspec.runtime.inference.read_tensors import sparse_tensor_value
from opspec.runtime.inference.read_tensors import tensor_value as engine_tensor_value
from opspec.runtime.contract import Data, TensorType
from opspec.runtime.contract.limits import DATA_LIMIT
from opspec.runtime.rules.generators import tensor_value
from opspec.runtime.testing import apply_rule, make_context


def given(tensor):
    """A tensor attribute as the engine hands it to rules (read once by convert)."""
    if isinstance(tensor, np.ndarray):
        tensor = numpy_helper.from_array(tensor)
    if isinstance(tensor, onnx.SparseTensorProto):
        return sparse_tensor_value(tensor)
    return engine_tensor_value(tensor)
from opspec.runtime.shape import Sym, SymbolTable

N, M = Sym("N"), Sym("M")
FLOAT, INT32, INT64, STRING, BOOL, DOUBLE = 1, 6, 7, 8, 9, 11

#: A tensor value in the plain form the engine may pass.
Tensor = namedtuple("Tensor", "elem shape values")


def run_generator(op, version, inputs=(), attributes=None, data=None, symbols=None, elem=0):
    schema = opspec.get_schema(op, version)
    ctx = make_context(schema, list(inputs), attributes or {}, data=data, symbols=symbols)
    ctx.set_output(0, TensorType(elem, None))  # the engine's binding (0 when T is open)
    apply_rule(ctx)
    return ctx


# ------------------------------------------------------------------------------ constant

def test_constant_from_opspec_tensor_proto():
    proto = ir.TensorProto(dims=[3], data_type=INT64, int64_data=[4, 5, 6])
    ctx = run_generator("Constant", 13, attributes={"value": given(proto)})
    assert ctx.output_type(0) == TensorType(INT64, (3,))
    assert ctx.output_data(0) == Data((3,), (4, 5, 6))


@pytest.mark.parametrize("array", [
    np.arange(6, dtype=np.float32).reshape(2, 3),
    np.array([1.5, -2.0], dtype=np.float64),
    np.array(7, dtype=np.int32),
    np.array([True, False]),
    np.array([1, 2], dtype=np.uint64),
    np.array([0.5, 2.0], dtype=np.float16),
])
def test_constant_from_onnx_tensor_proto(array):
    raw = numpy_helper.from_array(array)  # raw_data
    typed = onnx.helper.make_tensor("t", raw.data_type, array.shape, array.ravel().tolist())
    for proto in (raw, typed):
        ctx = run_generator("Constant", 13, attributes={"value": given(proto)})
        assert ctx.output_type(0) == TensorType(raw.data_type, array.shape)
        assert ctx.output_data(0) == Data(array.shape, tuple(array.ravel().tolist()))


def test_constant_bfloat16_and_undecodable_tensors():
    proto = onnx.helper.make_tensor("b", onnx.TensorProto.BFLOAT16, [2], [1.0, -2.5])
    assert run_generator("Constant", 13, attributes={"value": given(proto)}).output_data(0) == Data((2,), (1.0, -2.5))
    text = onnx.helper.make_tensor("s", onnx.TensorProto.STRING, [2], [b"a", b"b"])  # type: ignore[list-item]  # stubs: numbers only
    ctx = run_generator("Constant", 13, attributes={"value": given(text)})
    assert ctx.output_type(0) == TensorType(STRING, (2,)) and ctx.output_data(0) is None
    big = numpy_helper.from_array(np.zeros(DATA_LIMIT + 1, dtype=np.int64))
    ctx = run_generator("Constant", 13, attributes={"value": given(big)})
    assert ctx.output_type(0) == TensorType(INT64, (DATA_LIMIT + 1,))
    assert ctx.output_data(0) is None


def test_constant_from_engine_tensor_values():
    proto = numpy_helper.from_array(np.array([[1, 2, 3]], dtype=np.int64))
    ctx = run_generator("Constant", 13, attributes={"value": engine_tensor_value(proto)})
    assert ctx.output_type(0) == TensorType(INT64, (1, 3))
    assert ctx.output_data(0) == Data((1, 3), (1, 2, 3))
    values = numpy_helper.from_array(np.array([5.0], dtype=np.float32))
    sparse = onnx.helper.make_sparse_tensor(values, numpy_helper.from_array(np.array([2])), [4])
    ctx = run_generator("Constant", 13, attributes={"sparse_value": sparse_tensor_value(sparse)})
    assert ctx.output_type(0) == TensorType(FLOAT, (4,))
    assert ctx.output_data(0) == Data((4,), (0.0, 0.0, 5.0, 0.0))
    fill = engine_tensor_value(numpy_helper.from_array(np.array([3], dtype=np.int32)))
    ctx = run_generator("ConstantOfShape", 9, [TensorType(INT64, (1,))], {"value": fill}, [Data((1,), (2,))])
    assert ctx.output_type(0) == TensorType(INT32, (2,)) and ctx.output_data(0) == Data((2,), (3, 3))


def test_bool_data_is_zero_and_one():
    ctx = run_generator("Constant", 13, attributes={"value": given(np.array([True, False]))})
    assert ctx.output_data(0).values == (1, 0) and all(type(v) is int for v in ctx.output_data(0).values)


def test_constant_from_plain_values_and_arrays():
    ctx = run_generator("Constant", 1, attributes={"value": Tensor(FLOAT, (2,), (1.0, 2.0))})
    assert ctx.output_type(0) == TensorType(FLOAT, (2,))
    assert ctx.output_data(0) == Data((2,), (1.0, 2.0))
    ctx = run_generator("Constant", 13, attributes={"value": Tensor(INT64, (2, 2), None)})
    assert ctx.output_type(0) == TensorType(INT64, (2, 2)) and ctx.output_data(0) is None
    ctx = run_generator("Constant", 13, attributes={"value": given(np.array([[3, 4]], dtype=np.int64))})
    assert ctx.output_type(0) == TensorType(INT64, (1, 2))
    assert ctx.output_data(0) == Data((1, 2), (3, 4))


def test_constant_sparse_value():
    values = numpy_helper.from_array(np.array([5.0, 7.0], dtype=np.float32))
    linear = numpy_helper.from_array(np.array([1, 4], dtype=np.int64))
    sparse = onnx.helper.make_sparse_tensor(values, linear, [2, 3])
    ctx = run_generator("Constant", 11, attributes={"sparse_value": given(sparse)})
    assert ctx.output_type(0) == TensorType(FLOAT, (2, 3))
    assert ctx.output_data(0) == Data((2, 3), (0.0, 5.0, 0.0, 0.0, 7.0, 0.0))
    coords = numpy_helper.from_array(np.array([[0, 1], [1, 1]], dtype=np.int64))
    sparse = onnx.helper.make_sparse_tensor(values, coords, [2, 3])
    assert run_generator("Constant", 13, attributes={"sparse_value": given(sparse)}).output_data(0) == \
        Data((2, 3), (0.0, 5.0, 0.0, 0.0, 7.0, 0.0))


@pytest.mark.parametrize("name,value,out,data", [
    ("value_float", 2.5, TensorType(FLOAT, ()), Data((), (2.5,))),
    ("value_floats", [1.0, 2.0], TensorType(FLOAT, (2,)), Data((2,), (1.0, 2.0))),
    ("value_int", 3, TensorType(INT64, ()), Data((), (3,))),
    ("value_ints", [1, -1, 0], TensorType(INT64, (3,)), Data((3,), (1, -1, 0))),
    ("value_ints", [], TensorType(INT64, (0,)), Data((0,), ())),
    ("value_string", "x", TensorType(STRING, ()), None),
    ("value_strings", ["a", "b"], TensorType(STRING, (2,)), None),
])
def test_constant_shorthand_attributes(name, value, out, data):
    ctx = run_generator("Constant", 12, attributes={name: value})
    assert ctx.output_type(0) == out
    assert ctx.output_data(0) == data


def test_constant_needs_exactly_one_value():
    with pytest.raises(InferenceError, match="exactly one of value, sparse_value, value_float.*got none"):
        run_generator("Constant", 12)
    with pytest.raises(InferenceError, match="got value_int, value_ints"):
        run_generator("Constant", 12, attributes={"value_int": 1, "value_ints": [1]})
    # version 11 has no shorthand attributes: value_int is not one of its choices
    with pytest.raises(InferenceError, match="exactly one of value, sparse_value must be set, got none"):
        run_generator("Constant", 11, attributes={"value_int": 1})
    with pytest.raises(InferenceError, match="attribute 'value' must be set, got none"):
        run_generator("Constant", 1)


def test_tensor_value_rejects_other_objects():
    with pytest.raises(TypeError):
        tensor_value(3)
    with pytest.raises(InferenceError, match="attribute .value. must be a tensor"):
        run_generator("Constant", 13, attributes={"value": "text"})


# ------------------------------------------------------------------------------ constant_of_shape

def shape_input(*values):
    return [TensorType(INT64, (len(values),))], [Data((len(values),), tuple(values))]


def test_constant_of_shape_known_values():
    inputs, data = shape_input(2, 3)
    ctx = run_generator("ConstantOfShape", 9, inputs, data=data)
    assert ctx.output_type(0) == TensorType(FLOAT, (2, 3))
    assert ctx.output_data(0) == Data((2, 3), (0.0,) * 6)


def test_constant_of_shape_value_attribute():
    inputs, data = shape_input(3)
    value = numpy_helper.from_array(np.array([7], dtype=np.int64))
    ctx = run_generator("ConstantOfShape", 20, inputs, {"value": given(value)}, data)
    assert ctx.output_type(0) == TensorType(INT64, (3,))
    assert ctx.output_data(0) == Data((3,), (7, 7, 7))
    ctx = run_generator("ConstantOfShape", 9, inputs, {"value": Tensor(BOOL, (1,), (True,))}, data)
    assert ctx.output_type(0) == TensorType(BOOL, (3,)) and ctx.output_data(0).values == (True,) * 3


def test_constant_of_shape_symbolic_and_partial_values():
    inputs, data = shape_input(N, 4, None)
    ctx = run_generator("ConstantOfShape", 9, inputs, data=data, symbols=SymbolTable(["N"]))
    shape = ctx.output_type(0).shape
    assert shape[:2] == (N, 4) and type(shape[2]) is Sym and shape[2] != N
    assert ctx.output_data(0) is None
    ctx = run_generator("ConstantOfShape", 9, inputs, data=data)  # no symbol table: unknown dims
    assert ctx.output_type(0) == TensorType(FLOAT, (N, 4, None))


def test_constant_of_shape_empty_gives_scalar():
    inputs, data = shape_input()
    ctx = run_generator("ConstantOfShape", 9, inputs, data=data)
    assert ctx.output_type(0) == TensorType(FLOAT, ())
    assert ctx.output_data(0) == Data((), (0.0,))


def test_constant_of_shape_unknown_values():
    symbols = SymbolTable(["unk__0"])
    ctx = run_generator("ConstantOfShape", 9, [TensorType(INT64, (3,))], symbols=symbols)
    shape = ctx.output_type(0).shape
    assert len(shape) == 3 and len(set(shape)) == 3 and Sym("unk__0") not in shape
    ctx = run_generator("ConstantOfShape", 9, [TensorType(INT64, (2,))])
    assert ctx.output_type(0) == TensorType(FLOAT, (None, None))
    assert run_generator("ConstantOfShape", 9, [TensorType(INT64, (N,))]).output_type(0) == TensorType(FLOAT, None)
    assert run_generator("ConstantOfShape", 9, [TensorType(INT64, None)]).output_type(0) == TensorType(FLOAT, None)


def test_constant_of_shape_failures():
    inputs, data = shape_input(2, -1)
    with pytest.raises(InferenceError, match="negative dim"):
        run_generator("ConstantOfShape", 9, inputs, data=data)
    with pytest.raises(InferenceError, match="must be 1-D"):
        run_generator("ConstantOfShape", 9, [TensorType(INT64, (1, 2))])
    two = numpy_helper.from_array(np.array([1.0, 2.0], dtype=np.float32))
    with pytest.raises(InferenceError, match="a 1-D tensor of one element"):
        run_generator("ConstantOfShape", 9, [TensorType(INT64, (1,))], {"value": given(two)})
    scalar = numpy_helper.from_array(np.array(1.0, dtype=np.float32))  # one element, but not 1-D
    with pytest.raises(InferenceError, match="a 1-D tensor of one element"):
        run_generator("ConstantOfShape", 9, [TensorType(INT64, (1,))], {"value": given(scalar)})


# ------------------------------------------------------------------------------ range

def scalar_inputs(elem, *values):
    types = [TensorType(elem, ())] * 3
    data = [None if v is None else Data((), (v,)) for v in values]
    return types, data


@pytest.mark.parametrize("start,limit,delta", [
    (0, 10, 3), (0, 9, 3), (10, 0, -3), (5, 5, 1), (5, 0, 1), (-4, 4, 2), (3, 100, 7),
])
def test_range_int(start, limit, delta):
    types, data = scalar_inputs(INT64, start, limit, delta)
    ctx = run_generator("Range", 11, types, data=data, elem=INT64)
    expected = np.arange(start, limit, delta)
    assert ctx.output_type(0) == TensorType(INT64, expected.shape)
    assert ctx.output_data(0) == Data(expected.shape, tuple(expected.tolist()))


@pytest.mark.parametrize("start,limit,delta", [(0.0, 1.0, 0.25), (1.0, 0.0, -0.3), (0.5, 0.5, 1.0),
                                               (0.0, 2.0, 0.7)])
def test_range_float(start, limit, delta):
    types, data = scalar_inputs(FLOAT, start, limit, delta)
    ctx = run_generator("Range", 11, types, data=data, elem=FLOAT)
    expected = np.arange(start, limit, delta)
    assert ctx.output_type(0) == TensorType(FLOAT, expected.shape)
    assert np.allclose(ctx.output_data(0).values, expected)


def test_range_symbolic():
    types, data = scalar_inputs(INT64, 0, N, 1)
    assert run_generator("Range", 11, types, data=data).output_type(0).shape == (N,)
    types, data = scalar_inputs(INT64, 1, 2 * N + 1, 2)
    ctx = run_generator("Range", 11, types, data=data)
    assert ctx.output_type(0).shape == (N,) and ctx.output_data(0) is None
    types, data = scalar_inputs(INT64, N, N + 5, 2)
    assert run_generator("Range", 11, types, data=data).output_type(0).shape == (3,)
    types, data = scalar_inputs(INT64, N, 0, -1)
    assert run_generator("Range", 11, types, data=data).output_type(0).shape == (N,)


def test_range_unknown_length():
    types, data = scalar_inputs(INT64, 0, None, 1)
    ctx = run_generator("Range", 11, types, data=data, symbols=SymbolTable())
    (dim,) = ctx.output_type(0).shape
    assert type(dim) is Sym and ctx.output_data(0) is None
    assert run_generator("Range", 11, types, data=data).output_type(0).shape == (None,)
    assert run_generator("Range", 27, [None, None, None]).output_type(0).shape == (None,)
    types, data = scalar_inputs(INT64, 0, N, M)
    assert run_generator("Range", 11, types, data=data).output_type(0).shape == (None,)


def test_range_failures():
    types, data = scalar_inputs(INT64, 0, 5, 0)
    with pytest.raises(InferenceError, match="delta must not be zero"):
        run_generator("Range", 11, types, data=data)
    with pytest.raises(InferenceError, match=r"limit must be a scalar, got shape \(2,\)"):
        run_generator("Range", 11, [TensorType(INT64, ()), TensorType(INT64, (2,)), TensorType(INT64, ())])


def test_range_accepts_one_element_tensors():
    types = [TensorType(INT64, (1,))] * 3
    data = [Data((1,), (v,)) for v in (0, 4, 1)]
    assert run_generator("Range", 11, types, data=data).output_type(0).shape == (4,)


def test_range_float_length_matches_numpy():
    rng = np.random.default_rng(2)
    for _ in range(100):
        start, limit = rng.uniform(-10, 10, 2).tolist()
        delta = float(rng.choice([-1, 1]) * rng.uniform(0.1, 3))
        types, data = scalar_inputs(DOUBLE, start, limit, delta)
        out = run_generator("Range", 11, types, data=data, elem=DOUBLE).output_type(0)
        expected = np.arange(start, limit, delta).shape
        assert out.shape == (max(math.ceil((limit - start) / delta), 0),) == expected


def test_raw_bfloat16_tensors_are_read():
    import struct

    proto = onnx.TensorProto(name="b", data_type=onnx.TensorProto.BFLOAT16, dims=[2])
    proto.raw_data = struct.pack("<2H", 0x3F80, 0xC020)  # 1.0 and -2.5 as bfloat16 bit patterns
    assert run_generator("Constant", 13, attributes={"value": given(proto)}).output_data(0) == Data((2,), (1.0, -2.5))
