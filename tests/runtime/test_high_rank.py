"""Shapes of any rank: a rank-200,000 input is inferred as onnx infers it, and every kind of
dim (value, short and long names, expressions, unknown) is written as protobuf writes it."""
from __future__ import annotations

import onnx
from onnx import TensorProto, helper

import opspec
from opspec.runtime.contract.values import LongShape
from opspec.runtime.inference.write_types import shape_bytes
from opspec.runtime.shape import parse_dim


def _dims(shape):
    """Dims as values, names or None; onnx's made-up names for unknown dims (``unk__3``) count as None."""
    return [d.dim_value if d.HasField("dim_value") else None if d.dim_param.startswith("unk__") else d.dim_param
            or None for d in shape.dim]


def test_a_rank_200000_input_is_inferred_as_onnx_infers_it():
    rank = 200_000
    kinds = (lambda i: 1, lambda i: f"d{i}", lambda i: None, lambda i: i, lambda i: "N")
    dims = [kinds[i % len(kinds)](i) for i in range(rank)]
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    ours = opspec.infer_shapes(model)
    theirs = onnx.shape_inference.infer_shapes(model)
    assert _dims(ours.graph.output[0].type.tensor_type.shape) == _dims(theirs.graph.output[0].type.tensor_type.shape)
    assert len(ours.graph.output[0].type.tensor_type.shape.dim) == rank


def test_every_kind_of_dim_is_encoded_as_protobuf_encodes_it():
    texts = ["N", "x" * 125, "y" * 126, "z" * 300, "2*N", "N+1"]
    shape = (None, 0, 1, 2**40, *(parse_dim(text) for text in texts), parse_dim("N"))
    expected = onnx.TensorShapeProto()
    for dim in shape:
        entry = expected.dim.add()
        if type(dim) is int:
            entry.dim_value = dim
        elif dim is not None:
            entry.dim_param = str(dim)
    assert onnx.TensorShapeProto.FromString(shape_bytes(shape)) == expected


def test_a_long_shape_is_a_tuple_that_hashes_its_dims_once():
    from opspec.runtime.contract.values import LONG_RANK, LongShape, TensorType
    from opspec.runtime.inference.read_types import DimReader

    dims = tuple(parse_dim(f"d{i}") if i % 2 else i for i in range(LONG_RANK))
    long_shape = LongShape(dims)
    assert long_shape == dims and hash(long_shape) == hash(dims) and hash(long_shape) == hash(long_shape)
    assert {TensorType(1, dims): "known"}[TensorType(1, long_shape)] == "known"
    assert type(long_shape[1:]) is tuple  # what rules build from it is a plain shape
    proto = helper.make_tensor_type_proto(TensorProto.FLOAT, [f"d{i}" if i % 2 else i for i in range(LONG_RANK)])
    read = DimReader().type(proto)
    assert type(read.shape) is LongShape and read.shape == dims
    assert type(DimReader().type(helper.make_tensor_type_proto(TensorProto.FLOAT, [1, "N"])).shape) is tuple


def _long_shape_proto(extra):
    shape = onnx.TensorShapeProto()
    for i in range(1100):
        dim = shape.dim.add()
        if i % 3 == 0:
            dim.dim_value = i
        elif i % 3 == 1:
            dim.dim_param = f"d{i % 7}"
    extra(shape.dim.add())
    return shape


def test_a_long_shape_read_in_the_writers_form_is_written_back_from_its_bytes():
    from opspec.runtime.inference.read_types import DimReader

    read = DimReader().shape(_long_shape_proto(lambda dim: setattr(dim, "dim_value", 5)))
    assert isinstance(read, LongShape) and read.encoded is not None and read.encoded == shape_bytes(read)


def test_a_long_shape_with_a_dim_written_otherwise_is_encoded_afresh():
    from opspec.runtime.inference.read_types import DimReader

    for extra in (lambda dim: setattr(dim, "dim_value", -4), lambda dim: setattr(dim, "dim_param", ""),
                  lambda dim: setattr(dim, "dim_param", "2*N"), lambda dim: setattr(dim, "dim_param", "7")):
        read = DimReader().shape(_long_shape_proto(extra))
        assert isinstance(read, LongShape) and read.encoded is None
    with_unknown = onnx.TensorShapeProto.FromString(
        _long_shape_proto(lambda dim: None).SerializeToString() + b"\x18\x05")  # an unknown field 3
    read = DimReader().shape(with_unknown)
    assert isinstance(read, LongShape) and read.encoded is None


def test_an_output_of_a_long_input_shape_is_the_shape_onnx_writes():
    proto = _long_shape_proto(lambda dim: setattr(dim, "dim_value", -4))
    dims = [d.dim_value if d.HasField("dim_value") else d.dim_param or None for d in proto.dim]
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    ours = opspec.infer_shapes(model).graph.output[0].type.tensor_type.shape
    assert _dims(ours)[:-1] == _dims(proto)[:-1] and not ours.dim[-1].HasField("dim_value")


def test_unnamed_dims_are_named_in_their_bytes_as_writing_the_names_gives():
    from opspec.runtime.inference.input_symbols import named_dim_fields

    # numbers whose varints hold 0x0A or 0x00 bytes, and names whose lengths take two bytes
    dims = [None, 0, 10, 10 * 128 + 5, 5 * 128 + 10, 2**40, "x" * 130, None, "N", "a" * 10, None, None]
    names = ["unk__0", "u" * 200, "unk__2", "unk__3"]
    unnamed = [parse_dim(dim) if isinstance(dim, str) else dim for dim in dims]
    named = list(unnamed)
    for axis, name in zip([axis for axis, dim in enumerate(dims) if dim is None], names):
        named[axis] = parse_dim(name)
    assert named_dim_fields(shape_bytes(tuple(unnamed)), names) == shape_bytes(tuple(named))
    assert named_dim_fields(shape_bytes(tuple(unnamed)), names[1:]) is None  # a name short: not guessed
