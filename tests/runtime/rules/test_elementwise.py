"""Tests for the elementwise rule family: elementwise, broadcast, broadcast_legacy, same_shape."""
import math
import random

import numpy as np
import pytest

import opspec
from opspec.runtime.contract import InferenceContext, InferenceError
from opspec.runtime.contract import BOOL, Data, SequenceType, TensorType
from opspec.runtime.shape import ShapeError, Sym, SymbolTable
from opspec.runtime.contract.elements import ELEMENT_TYPES
from opspec.runtime.testing import apply_rule, make_context

N, M = Sym("N"), Sym("M")
FLOAT, INT32, INT64 = 1, 6, 7


def prebind(ctx: InferenceContext) -> None:
    """Give outputs their element types as the engine does before a rule runs."""
    for index, param in enumerate(ctx.schema.outputs[: ctx.output_count]):
        allowed = sorted(param.types)
        if len(allowed) == 1 and allowed[0].startswith("tensor("):
            ctx.set_output(index, TensorType(ELEMENT_TYPES[allowed[0][7:-1]], None))
            continue
        for i, formal in enumerate(ctx.schema.inputs):
            if formal.type_str == param.type_str and ctx.input_elem(i):
                ctx.set_output(index, TensorType(ctx.input_elem(i), None))
                break


def infer(op, version, inputs, attributes=None, data=None, **kwargs):
    schema = opspec.get_schema(op, version)
    ctx = make_context(schema, inputs, attributes or {}, data=data, **kwargs)
    prebind(ctx)
    apply_rule(ctx)
    return ctx


def t(*shape, elem=FLOAT):
    return TensorType(elem, shape)


def vec(*values):
    return Data((len(values),), tuple(values))


# ------------------------------------------------------------------------------ elementwise

@pytest.mark.parametrize("op,version", [("Relu", 14), ("Sigmoid", 13), ("Softmax", 13), ("Exp", 13),
                                        ("Clip", 13), ("LeakyRelu", 16), ("Abs", 13)])
def test_elementwise_keeps_shape_and_type(op, version):
    ctx = infer(op, version, [t(2, N, None)])
    assert ctx.output_type(0) == t(2, N, None)


def test_elementwise_unknown_rank_and_missing_input():
    assert infer("Relu", 14, [TensorType(FLOAT, None)]).output_type(0) == TensorType(FLOAT, None)
    assert infer("Relu", 14, [None]).output_type(0) == TensorType(0, None)


def test_cast_sets_elem_from_to():
    ctx = infer("Cast", 13, [t(2, 3)], {"to": INT64})
    assert ctx.output_type(0) == t(2, 3, elem=INT64)


def test_cast_version_1_reads_type_names():
    assert infer("Cast", 1, [t(4)], {"to": "INT32"}).output_type(0) == t(4, elem=INT32)
    assert infer("Cast", 1, [t(4)], {"to": b"DOUBLE"}).output_type(0) == t(4, elem=11)


@pytest.mark.parametrize("to", [0, 99, "NOT_A_TYPE"])
def test_cast_rejects_unknown_types(to):
    version = 1 if isinstance(to, str) else 13
    with pytest.raises(InferenceError, match="which is no element type"):
        infer("Cast", version, [t(4)], {"to": to})


def test_dropout_mask_takes_the_shape():
    ctx = infer("Dropout", 13, [t(2, N), None, None], output_count=2)
    assert ctx.output_type(0) == t(2, N)
    assert ctx.output_type(1) == t(2, N, elem=BOOL)
    ctx = infer("Dropout", 1, [t(5)], output_count=1)
    assert ctx.output_count == 1 and ctx.output_type(0) == t(5)


def test_identity_passes_sequences_through():
    seq = SequenceType(t(2, 3))
    assert infer("Identity", 14, [seq]).output_type(0) == seq


# ------------------------------------------------------------------------------ unary data

def unary(op, version, data, elem=INT64, attributes=None):
    ctx = infer(op, version, [TensorType(elem, data.shape)], attributes, data=[data])
    return ctx.output_data(0)


def test_identity_data():
    data = vec(2, N, None)
    assert unary("Identity", 13, data) == data


def test_cast_data():
    assert unary("Cast", 13, vec(1, 2), attributes={"to": FLOAT}).values == (1.0, 2.0)
    assert unary("Cast", 13, vec(1.7, -1.7, 2.0), FLOAT, {"to": INT32}).values == (1, -1, 2)
    assert unary("Cast", 13, vec(300, -1), attributes={"to": 3}).values == (44, -1)  # int8 wraps
    assert unary("Cast", 13, vec(-1), attributes={"to": 2}).values == (255,)  # uint8
    assert unary("Cast", 13, vec(N, None, 3), attributes={"to": INT32}).values == (N, None, 3)
    assert unary("Cast", 13, vec(N, 3), attributes={"to": FLOAT}).values == (None, 3.0)
    assert unary("Cast", 13, vec(0, 2, 0.0), attributes={"to": BOOL}).values == (False, True, False)
    assert unary("Cast", 13, vec(True, False), BOOL, {"to": INT64}).values == (1, 0)
    assert unary("Cast", 13, vec(math.nan, math.inf), FLOAT, {"to": INT64}).values == (None, None)
    assert unary("Cast", 13, vec(0.1), 11, {"to": FLOAT}).values == (float(np.float32(0.1)),)
    assert unary("Cast", 13, vec(1e40), 11, {"to": FLOAT}).values == (math.inf,)
    assert unary("Cast", 13, vec(1, 2), attributes={"to": 8}) is None  # to string: not tracked


def test_cast_keeps_int64_data_as_is():
    data = vec(3, 4)
    assert unary("Cast", 13, data, INT32, {"to": INT64}) == data


def test_unary_compute_functions():
    assert unary("Neg", 13, vec(2, N, None, -1.5)).values == (-2, -N, None, 1.5)
    assert unary("Abs", 13, vec(-2, N, -0.5)).values == (2, None, 0.5)
    assert unary("Floor", 13, vec(1.5, -1.5, 3, N), FLOAT).values == (1.0, -2.0, 3, N)
    assert unary("Ceil", 13, vec(1.5, -1.5, math.inf), FLOAT).values == (2.0, -1.0, math.inf)
    sqrt = unary("Sqrt", 13, vec(4.0, 2, N), FLOAT).values
    assert sqrt[:2] == (2.0, math.sqrt(2)) and sqrt[2] is None
    assert math.isnan(unary("Sqrt", 13, vec(-1.0), FLOAT).values[0])
    assert unary("Reciprocal", 13, vec(4.0, 0.0, -0.0, N), FLOAT).values == (0.25, math.inf, -math.inf, None)
    assert unary("Not", 1, vec(True, False, None), BOOL).values == (False, True, None)


def test_unary_compute_scalar_data_and_shape():
    data = Data((), (5,))
    out = unary("Neg", 13, data)
    assert out == Data((), (-5,))
    ctx = infer("Neg", 13, [t(elem=INT64)], data=[data])
    assert ctx.output_type(0) == t(elem=INT64)


def test_unary_without_data_sets_none():
    assert infer("Neg", 13, [t(3, elem=INT64)]).output_data(0) is None


# ------------------------------------------------------------------------------ broadcast

@pytest.mark.parametrize("a,b,out", [
    ((2, 3), (3,), (2, 3)),
    ((8, 1, 6, 1), (7, 1, 5), (8, 7, 6, 5)),
    ((), (4, 5), (4, 5)),
    ((N, 1), (1, M), (N, M)),
    ((N, 3), (None, 3), (None, 3)),
    ((None, 1), (5,), (None, 5)),
    ((N, 4), (N, 4), (N, 4)),
])
def test_broadcast_shapes(a, b, out):
    assert infer("Add", 14, [t(*a), t(*b)]).output_type(0) == t(*out)


def test_two_symbols_that_may_be_1_broadcast_to_a_fresh_symbol():
    # N and M broadcast to N, to M, or to both when equal: the axis has a size all the same
    symbols = SymbolTable(["N", "M"])
    for op, version, inputs, rest in (("Add", 14, [t(N, 3), t(M, 3)], (3,)),
                                      ("MatMul", 13, [t(N, 2, 3), t(M, 3, 4)], (2, 4)),
                                      ("Where", 16, [t(N, elem=BOOL), t(M), t(1)], ())):
        shape = infer(op, version, inputs, symbols=symbols).output_type(0).shape
        assert type(shape[0]) is Sym and (shape[0].name or "").startswith("unk__") and shape[1:] == rest
    # where an operand's dim is unknown, the axis stays unknown
    assert infer("Add", 14, [t(N, 3), t(None, 3)], symbols=symbols).output_type(0) == t(None, 3)


def test_broadcast_unknown_rank():
    ctx = infer("Mul", 14, [TensorType(FLOAT, None), t(3)])
    assert ctx.output_type(0) == TensorType(FLOAT, None)


def test_broadcast_incompatible():
    with pytest.raises(ShapeError, match=r"cannot broadcast shapes \(3,\) and \(4,\)"):
        infer("Sub", 14, [t(3), t(4)])


def test_broadcast_variadic_and_where():
    ctx = infer("Sum", 13, [t(2, 1, 1), t(3, 1), t(4)])
    assert ctx.output_type(0) == t(2, 3, 4)
    ctx = infer("Max", 13, [t(5)])
    assert ctx.output_type(0) == t(5)
    ctx = infer("Where", 16, [t(1, 3, elem=BOOL), t(2, 1, elem=INT64), t(elem=INT64)])
    assert ctx.output_type(0) == t(2, 3, elem=INT64)


def test_broadcast_comparisons_give_bool():
    for op in ("Equal", "Less", "Greater"):
        assert infer(op, 13, [t(2, 3), t(3)]).output_type(0) == t(2, 3, elem=BOOL)
    assert infer("And", 7, [t(2, elem=BOOL), t(1, elem=BOOL)]).output_type(0) == t(2, elem=BOOL)


def test_broadcast_agrees_with_numpy():
    rng = random.Random(7)
    for _ in range(300):
        rank = rng.randint(0, 4)
        base = [rng.randint(1, 4) for _ in range(rank)]
        shapes = []
        for _ in range(rng.randint(1, 3)):
            keep = rng.randint(0, rank)
            shape = tuple(1 if rng.random() < 0.3 else d for d in base[rank - keep:])
            if rng.random() < 0.1 and shape:
                shape = (rng.randint(2, 5),) + shape[1:]
            shapes.append(shape)
        try:
            expected = np.broadcast_shapes(*shapes)
        except ValueError:
            with pytest.raises(ShapeError):
                infer("Sum", 13, [t(*s) for s in shapes])
            continue
        assert infer("Sum", 13, [t(*s) for s in shapes]).output_type(0) == t(*expected)


# ------------------------------------------------------------------------------ broadcast data

def binary(op, version, a, b, elem=INT64, attributes=None):
    inputs = [TensorType(elem, a.shape), TensorType(elem, b.shape)]
    return infer(op, version, inputs, attributes, data=[a, b]).output_data(0)


def test_add_sub_mul_data():
    assert binary("Add", 14, vec(N, 3), Data((), (1,))) == vec(N + 1, 4)
    assert binary("Sub", 14, vec(N, 3, None), vec(1, 5, 2)) == vec(N - 1, -2, None)
    assert binary("Sub", 14, vec(N), vec(N + 1)) == vec(-1)
    assert binary("Mul", 14, vec(N, 2, None, None), vec(M, 3, 0, 4)) == vec(N * M, 6, 0, None)
    assert binary("Add", 14, vec(1.5, N), vec(1.0, 0.5), FLOAT) == vec(2.5, None)


def test_div_data():
    assert binary("Div", 14, vec(7, -7, 7, 2 * N, N, 5), vec(2, 2, 0, 2, M, N)) == \
        vec(3, -3, None, N, None, None)
    assert binary("Div", 14, vec(7.0, 1.0, 0.0), vec(2.0, 0.0, 0.0), FLOAT).values[:2] == (3.5, math.inf)
    assert math.isnan(binary("Div", 14, vec(0.0), vec(0.0), FLOAT).values[0])
    assert binary("Div", 14, vec(N * M), vec(M)) == vec(N)


def test_mod_data():
    """Integer remainders take the divisor's sign, or with fmod the dividend's; a symbolic
    dividend gives one only where every value of its symbols leaves the same remainder."""
    assert binary("Mod", 13, vec(7, -7, 7, -7, 7), vec(3, 3, -3, -3, 0)) == vec(1, 2, -2, -1, None)
    assert binary("Mod", 13, vec(7, -7, 7, -7), vec(3, 3, -3, -3), attributes={"fmod": 1}) == vec(1, -1, 1, -1)
    assert binary("Mod", 13, vec(4 * N, 4 * N + 6, N, 2 * N - 3), vec(4, 4, 4, 2)) == vec(0, 2, None, 1)
    assert binary("Mod", 13, vec(4 * N + 6, 4 * N + 8, 4 * N), vec(4, 4, -4), attributes={"fmod": 1}) == \
        vec(2, 0, None)
    assert binary("Mod", 13, vec(N - 3), vec(2), attributes={"fmod": 1}) == vec(None)  # N - 3 may be negative
    # a divisor known only as a symbol gives no remainder, whatever the dividend (even one it divides)
    assert binary("Mod", 13, vec(7, 4 * N), vec(N, N)) == vec(None, None)
    assert binary("Mod", 13, vec(7), vec(-N), attributes={"fmod": 1}) == vec(None)
    assert binary("Mod", 13, vec(7.5, -7.5), vec(2.0, 2.0), FLOAT, {"fmod": 1}) == vec(1.5, -1.5)
    assert math.isnan(binary("Mod", 13, vec(1.0), vec(0.0), FLOAT, {"fmod": 1}).values[0])
    for a in range(-9, 10):  # against numpy, both ways
        for b in (-4, -3, 3, 4):
            assert binary("Mod", 13, vec(a), vec(b)) == vec(int(np.mod(a, b)))
            assert binary("Mod", 13, vec(a), vec(b), attributes={"fmod": 1}) == vec(int(np.fmod(a, b)))


def test_pow_max_min_data():
    assert binary("Pow", 15, vec(2, N, 4), vec(3, 2, -1)) == vec(8, N * N, 0)
    assert binary("Pow", 15, vec(2.0, 4.0), vec(0.5, 2.0), FLOAT) == vec(math.sqrt(2), 16.0)
    assert binary("Max", 13, vec(2, N, None), vec(3, M, 1)) == vec(3, Sym.max(N, M), None)
    assert binary("Min", 13, vec(2, N, 1.0), vec(3, N, 0.5), FLOAT) == vec(2, N, 0.5)


def test_comparison_and_logic_data():
    assert binary("Equal", 13, vec(1, N, N, N + 1, None), vec(1, N, M, N, 2)) == \
        vec(True, True, None, False, None)
    assert binary("Less", 13, vec(1, N, N), vec(2, N + 1, M)) == vec(True, True, None)
    assert binary("Greater", 13, vec(1, N + 2, 1.5), vec(2, N, 1.0)) == vec(False, True, True)
    assert binary("And", 7, vec(True, False, None, None), vec(True, None, True, False), BOOL) == \
        vec(True, False, None, False)
    assert binary("Or", 7, vec(False, True, None, None), vec(False, None, False, True), BOOL) == \
        vec(False, True, None, True)


def test_bool_results_are_ints():
    values = binary("Less", 13, vec(1, 2), vec(2, 2)).values + unary("Not", 1, vec(1), BOOL).values
    assert values == (1, 0, 0) and all(type(v) is int for v in values)


def test_where_data():
    cond = vec(True, False, None, None)
    x, y = vec(1, 2, 3, N), vec(9, 8, 3, M)
    inputs = [t(4, elem=BOOL), t(4, elem=INT64), t(4, elem=INT64)]
    assert infer("Where", 16, inputs, data=[cond, x, y]).output_data(0) == vec(1, 8, 3, None)


def test_variadic_data_folds_and_broadcasts():
    datas = [vec(1, 2), Data((), (10,)), Data((2, 1), (100, 200))]
    inputs = [TensorType(INT64, d.shape) for d in datas]
    ctx = infer("Sum", 13, inputs, data=datas)
    assert ctx.output_type(0) == t(2, 2, elem=INT64)
    assert ctx.output_data(0) == Data((2, 2), (111, 112, 211, 212))
    ctx = infer("Max", 13, inputs, data=datas)
    assert ctx.output_data(0) == Data((2, 2), (100, 100, 200, 200))


def test_broadcast_data_agrees_with_numpy():
    rng = np.random.default_rng(3)
    for a_shape, b_shape in [((2, 3), (3,)), ((4, 1), (1, 5)), ((2, 1, 3), (4, 1)), ((), (3,))]:
        a = rng.integers(-9, 9, a_shape)
        b = rng.integers(1, 9, b_shape)
        da, db = Data(a_shape, tuple(a.ravel().tolist())), Data(b_shape, tuple(b.ravel().tolist()))
        for op, function in (("Add", np.add), ("Mul", np.multiply), ("Sub", np.subtract)):
            out = binary(op, 14, da, db)
            expected = function(a, b)
            assert out == Data(expected.shape, tuple(expected.ravel().tolist()))
        out = binary("Div", 14, da, db)
        expected = np.trunc(a / b).astype(np.int64)
        assert out.values == tuple(expected.ravel().tolist())


def test_broadcast_data_needs_every_input():
    ctx = infer("Add", 14, [t(2, elem=INT64), t(2, elem=INT64)], data=[vec(1, 2), None])
    assert ctx.output_data(0) is None


# ------------------------------------------------------------------------------ broadcast_legacy

def test_legacy_without_broadcast_merges():
    ctx = infer("Add", 6, [t(N, None), t(None, 3)])
    assert ctx.output_type(0) == t(N, 3)
    with pytest.raises(InferenceError, match=r"\(2, 3\) and \(3,\) must be equal"):
        infer("Add", 6, [t(2, 3), t(3)])


@pytest.mark.parametrize("a,b,axis,out", [
    ((2, 3, 4, 5), (), None, (2, 3, 4, 5)),
    ((2, 3, 4, 5), (5,), None, (2, 3, 4, 5)),
    ((2, 3, 4, 5), (4, 5), None, (2, 3, 4, 5)),
    ((2, 3, 4, 5), (3, 4), 1, (2, 3, 4, 5)),
    ((2, 3, 4, 5), (2,), 0, (2, 3, 4, 5)),
    ((2, 3, 4, 5), (1, 5), None, (2, 3, 4, 5)),
    ((N, None, None), (4, 1), 1, (N, 4, None)),
    ((2, N), (7,), None, (2, 7)),
    ((2, 3), (3,), -1, (2, 3)),
])
def test_legacy_broadcast(a, b, axis, out):
    attributes = {"broadcast": 1} if axis is None else {"broadcast": 1, "axis": axis}
    assert infer("Mul", 6, [t(*a), t(*b)], attributes).output_type(0) == t(*out)


@pytest.mark.parametrize("a,b,axis", [((2, 3), (4,), None), ((2, 3), (2, 3, 4), None),
                                      ((2, 3, 4), (3, 4), 2), ((2, 3, 4), (2,), 1)])
def test_legacy_broadcast_failures(a, b, axis):
    attributes = {"broadcast": 1} if axis is None else {"broadcast": 1, "axis": axis}
    with pytest.raises(InferenceError, match="cannot broadcast"):
        infer("Sub", 1, [t(*a), t(*b)], attributes)


def test_legacy_comparison_and_unknown_ranks():
    assert infer("Equal", 1, [t(2, 3), t(3)], {"broadcast": 1}).output_type(0) == t(2, 3, elem=BOOL)
    assert infer("Add", 1, [t(2, 3), TensorType(FLOAT, None)], {"broadcast": 1}).output_type(0) == t(2, 3)
    assert infer("Add", 1, [TensorType(FLOAT, None), t(3)], {"broadcast": 1}).output_type(0) == \
        TensorType(FLOAT, None)
    assert infer("Add", 1, [TensorType(FLOAT, None), t(3)]).output_type(0) == t(3)


# ------------------------------------------------------------------------------ same_shape

def test_same_shape_merges():
    ctx = infer("Max", 6, [t(N, None), t(None, 3), TensorType(FLOAT, None)])
    assert ctx.output_type(0) == t(N, 3)
    assert infer("Sum", 6, [t(4)]).output_type(0) == t(4)
    assert infer("Min", 1, [TensorType(FLOAT, None)]).output_type(0) == TensorType(FLOAT, None)


@pytest.mark.parametrize("shapes", [[(2, 3), (3,)], [(2, 3), (2, 4)], [(5,), (5,), (6,)]])
def test_same_shape_rejects_differences(shapes):
    with pytest.raises(InferenceError, match="inputs must share one shape"):
        infer("Sum", 6, [t(*s) for s in shapes])


def test_compute_choices_declared_match_the_element_functions():
    """The declarations list their choices as literals; they must name exactly the functions there are."""
    from opspec.runtime.rules._binarydata import BINARY
    from opspec.runtime.rules._elementdata import UNARY
    from opspec.runtime.rules.elementwise import BINARY_COMPUTE, UNARY_COMPUTE

    assert set(UNARY_COMPUTE) == set(UNARY) | {"identity", "cast"}
    assert set(BINARY_COMPUTE) == set(BINARY) | {"div", "mod", "where"}


@pytest.mark.parametrize("fmod", [0, 1])
def test_mod_data_agrees_with_onnxruntime(fmod):
    """A shape computed by Mod from constants (shifted by 10 so every remainder gives a size) is
    what onnxruntime's run gives, with either sign rule."""
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper

    dividends, divisors = [7, -7, 7, -7, 9, 0], [3, 3, -3, -3, 4, 5]
    nodes = [helper.make_node("Constant", [], ["A"], value=helper.make_tensor("a", TensorProto.INT64, [6], dividends)),
             helper.make_node("Constant", [], ["B"], value=helper.make_tensor("b", TensorProto.INT64, [6], divisors)),
             helper.make_node("Constant", [], ["K"], value=helper.make_tensor("k", TensorProto.INT64, [], [10])),
             helper.make_node("Mod", ["A", "B"], ["R"], fmod=fmod),
             helper.make_node("Add", ["R", "K"], ["S"]),
             helper.make_node("ConstantOfShape", ["S"], ["Y"])]
    graph = helper.make_graph(nodes, "g", [], [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    real = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {})[0]
    inferred = opspec.infer(model, data_prop=True).values["Y"][0]
    assert inferred == TensorType(FLOAT, tuple(real.shape))
