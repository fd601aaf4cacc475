"""Shapes read from their serialized dims agree with shapes read field by field, for every
form a dim can take (values, names, expressions, unknown, negative, denotations, odd bytes)."""
from __future__ import annotations

import random

import onnx
import pytest

from opspec.runtime.inference.read_types import DimReader

_TEXTS = ["N", "batch", "x" * 200, "2*N", "N+1", "floor(N/2)", "batch size", "é", "ñame", "_", "min", "N//M",
          "-3", "7", "99999999999999999999", " N ", "a-b"]


def _shape(rng: random.Random, rank: int) -> onnx.TensorShapeProto:
    shape = onnx.TensorShapeProto()
    for _ in range(rank):
        dim = shape.dim.add()
        kind = rng.randrange(6)
        if kind == 0:
            dim.dim_value = rng.choice([0, 1, 3, 127, 128, 300, 16383, 16384, 2**40, 2**63 - 1, -1, -(2**63)])
        elif kind == 1:
            dim.dim_param = rng.choice(_TEXTS)
        elif kind == 2:
            dim.dim_param = ""
        elif kind == 3 and rng.random() < 0.2:
            dim.denotation = "DATA_BATCH"
            dim.dim_param = "N"
    return shape


def test_serialized_dims_read_as_dims_read_one_by_one():
    rng = random.Random(7)
    for _ in range(300):
        shape = _shape(rng, rng.randrange(12))
        fast, slow = DimReader(), DimReader()
        assert fast.shape(shape) == slow._shape_by_dim(shape)
        assert fast.names == slow.names


def test_invalid_utf8_and_unknown_fields_read_as_one_by_one():
    for raw in (b"\x0a\x04\x12\x02\xff\xfe", b"\x0a\x05\x12\x01N\x20\x01", b"\x0a\x04\x08\x01\x08\x02",
                b"\x0a\x05\x08\x01\x12\x01N", b"\x0a\x00\x0a\x03\x12\x01M", b"\x0a\x02\x08\x80",
                b"\x0a\x01\x12", b"\x0a\x01\x08", b"\x0a\x02\x12\x05"):
        try:
            shape = onnx.TensorShapeProto.FromString(raw)
        except Exception:  # noqa: BLE001 - bytes protobuf itself refuses are never read
            continue
        assert DimReader().shape(shape) == DimReader()._shape_by_dim(shape), raw


def test_a_high_rank_shape_shares_one_dim_per_distinct_text():
    shape = onnx.TensorShapeProto()
    for i in range(1000):
        shape.dim.add().dim_param = "N" if i % 2 else f"d{i}"
    dims = DimReader().shape(shape)
    assert len(dims) == 1000 and all(dims[i] is dims[1] for i in range(1, 1000, 2))


def test_dims_read_are_written_back_as_the_writer_writes_them():
    from opspec.runtime.inference.write_types import DimEncoder, shape_bytes

    rng = random.Random(11)
    for _ in range(200):
        shape = _shape(rng, rng.randrange(12))
        reader = DimReader()
        dims = reader.shape(shape)
        assert shape_bytes(dims, DimEncoder(reader.encoded_dims)) == shape_bytes(dims)


def test_numbers_at_every_varint_length_read_exactly():
    edges = [0, 1, 127, 128, 16_383, 16_384, 2**21 - 1, 2**21, 2**28, 2**40, 2**63 - 1]
    shape = onnx.TensorShapeProto()
    for value in edges:
        shape.dim.add().dim_value = value
    assert DimReader().shape(shape) == tuple(edges)


def _value_info(rng: random.Random, index: int) -> onnx.ValueInfoProto:
    """A graph input of any kind of type, or none, often sharing its type with others."""
    from onnx import TensorProto, helper

    kind = rng.randrange(7)
    name = f"v{index}"
    if kind == 0:
        return helper.make_value_info(name, helper.make_tensor_type_proto(TensorProto.FLOAT, None))
    if kind == 1:
        return helper.make_value_info(name, helper.make_sequence_type_proto(
            helper.make_tensor_type_proto(TensorProto.INT64, ["N", 2])))
    if kind == 2:
        return onnx.ValueInfoProto(name=name)
    value_info = onnx.ValueInfoProto(name=name)
    tensor = value_info.type.tensor_type
    tensor.elem_type = rng.choice([TensorProto.FLOAT, TensorProto.INT64])
    tensor.shape.CopyFrom(_shape(rng, rng.randrange(12)))
    if kind == 3:
        value_info.type.denotation = "TENSOR"
    return value_info


def test_many_value_infos_read_together_as_read_one_by_one():
    from opspec.runtime.inference.write_types import DimEncoder

    rng = random.Random(5)
    for _ in range(40):
        value_infos = [_value_info(rng, index) for index in range(rng.randrange(1, 30))]
        together, apart = DimReader(), DimReader()
        assert together.value_infos(value_infos) == [apart.value_info(value_info) for value_info in value_infos]
        assert together.names == apart.names
        # every dim is encoded as the writer encodes it (reading together may have seen more)
        assert apart.encoded_dims.items() <= together.encoded_dims.items()
        assert all(encoded == DimEncoder()[dim] for dim, encoded in together.encoded_dims.items())


def test_many_plain_names_read_together_are_the_symbols_of_those_names():
    from opspec.runtime.shape import Sym

    shape = onnx.TensorShapeProto()
    names = [f"n{i}" for i in range(500)] + ["N", "n3", "_x", "é", "a b"]
    for name in names:
        shape.dim.add().dim_param = name
    shape.dim.add().dim_value = 300
    reader = DimReader()
    dims = reader.shape(shape)
    assert dims[:-1] == tuple(Sym(name) for name in names) and dims[-1] == 300
    assert all(type(dim) is Sym and dim.name == name for dim, name in zip(dims, names))
    assert reader.names == set(names)


def test_plain_symbols_are_the_symbols_sym_makes():
    from opspec.runtime.shape import Sym
    from opspec.runtime.shape.sym import plain_symbols

    known = Sym("plain_symbols_known")
    made = plain_symbols(["plain_symbols_a", "plain_symbols_known", "plain_symbols_b"])
    assert made[1] == known
    assert made == [Sym("plain_symbols_a"), known, Sym("plain_symbols_b")]
    assert [hash(sym) for sym in made] == [hash(Sym(name)) for name in ("plain_symbols_a", "plain_symbols_known",
                                                                         "plain_symbols_b")]
    assert str(made[0] + 1) == "plain_symbols_a+1" and made[0].names() == {"plain_symbols_a"}


def test_inference_frees_the_dims_it_made_without_the_cycle_collector():
    import gc

    from onnx import TensorProto, helper

    import opspec
    from opspec.runtime.shape import sym

    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["freed_by_refcount", 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        inferred = opspec.infer_shapes(model)
        assert sym._NAMES.get("freed_by_refcount") is None  # nothing in a reference cycle holds it
    finally:
        if enabled:
            gc.enable()
    assert inferred.graph.output[0].type.tensor_type.shape.dim[0].dim_param == "freed_by_refcount"


def test_every_usual_dim_is_decoded_whatever_the_order_of_an_unusual_one():
    from opspec.runtime.inference.raw_dims import RawDims, UnusualDim

    usual = [b"\x12\x03a b", b"\x12\x01N", b"\x08\x80\x80\x80\x80\x80\x20"]  # (the first is no plain name)
    unusual = b"\x18\x01"  # a denotation's key
    for position in range(len(usual) + 1):
        raws = usual[:position] + [unusual] + usual[position:]
        dims = RawDims(lambda text: text, set(), {}, {})
        with pytest.raises(UnusualDim):
            dims._decode_each(raws)
        assert set(dims) == set(usual) and "N" in dims.names
        assert set(dims.encoded) == {dims[b"\x12\x01N"], 2**40}
