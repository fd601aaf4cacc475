"""Declared inputs and outputs read in one pass and outputs rewritten in bulk: the same names,
types and written model as reading and writing them entry by entry."""
from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper

import opspec
from opspec.runtime.inference.read_types import DimReader
from opspec.runtime.inference.value_info_entries import read_entries
from opspec.runtime.inference.write_back import write_graph
from opspec.runtime.inference.write_types import TypeEncoder

F = TensorProto.FLOAT
COUNT = 30


def _odd_entries() -> list[onnx.ValueInfoProto]:
    """Entries as writers write them and other forms: extra fields, no type, an empty name,
    names and types longer than one length byte holds, a name that is not ASCII."""
    entries = [helper.make_tensor_value_info(f"y{i}", F, None) for i in range(COUNT)]
    entries[1].doc_string = "kept"
    helper.set_metadata_props(entries[2], {"role": "o"})
    entries[3].ClearField("type")
    entries[4].type.denotation = "TENSOR"
    entries[5].name = "n" * 300
    entries[6].type.CopyFrom(helper.make_tensor_type_proto(F, [f"dim_{j}" for j in range(40)]))
    entries[7].name = ""
    entries[8].type.tensor_type.ClearField("elem_type")
    entries[10].name = "名前"
    return entries


def test_entries_read_in_one_pass_are_what_each_message_holds() -> None:
    graph = helper.make_graph([], "g", [], _odd_entries())
    read = read_entries(graph.output)
    assert read.names == [entry.name for entry in graph.output]
    assert read.keys == [entry.type.SerializeToString() for entry in graph.output]
    assert read.raws == [entry.SerializeToString() for entry in graph.output]
    assert [index for index, bare in enumerate(read.bare) if not bare] == [1, 2, 3]


def test_entries_as_writers_write_them_are_read_as_one_message() -> None:
    entries = [helper.make_tensor_value_info(f"x{i}", F if i % 2 else TensorProto.INT64, [f"n{i}", i, None])
               for i in range(COUNT)]
    entries[7].name = "n" * 300  # a length of two bytes
    graph = helper.make_graph([], "g", entries, [])
    read = read_entries(graph.input)
    assert read.names == [entry.name for entry in graph.input]
    assert read.keys == [entry.type.SerializeToString() for entry in graph.input]
    assert all(read.bare) and len(read.raws) == COUNT


def _written(graph: onnx.GraphProto, in_bulk: bool) -> bytes:
    """``graph`` with each output given its own new type (outputs read in one pass or not)."""
    graph = onnx.GraphProto.FromString(graph.SerializeToString())
    read = read_entries(graph.output)
    reader = DimReader()
    declared, plain = reader.value_infos_as_written(graph.output, read.keys)
    types = {name: reader.value_info(helper.make_tensor_value_info(name, F, [index, "N"]))
             for index, name in enumerate(read.names)}
    write_graph(graph, types, [], [], {}, dict(zip(read.names, declared)), TypeEncoder(), plain_outputs=plain,
                outputs_read=read if in_bulk else None)
    return graph.SerializeToString()


def test_outputs_rewritten_in_bulk_are_those_rewritten_one_by_one() -> None:
    graph = helper.make_graph([], "g", [], _odd_entries())
    written = _written(graph, in_bulk=True)
    assert written == _written(graph, in_bulk=False)
    rewritten = onnx.GraphProto.FromString(written)
    assert [entry.name for entry in rewritten.output] == [entry.name for entry in graph.output]
    assert rewritten.output[1].doc_string == "kept" and rewritten.output[4].type.denotation == "TENSOR"
    assert [dim.dim_value for dim in rewritten.output[12].type.tensor_type.shape.dim] == [12, 0]


def test_a_wide_model_infers_as_onnx_does() -> None:
    count = 200
    inputs = [helper.make_tensor_value_info(f"x{i}", F, ["B", i % 7 + 1]) for i in range(count)]
    nodes = [helper.make_node("Relu", [f"x{i}"], [f"y{i}"]) for i in range(count)]
    outputs = [helper.make_tensor_value_info(f"y{i}", F, None) for i in range(count)]
    outputs[3].doc_string = "third"
    model = helper.make_model(helper.make_graph(nodes, "wide", inputs, outputs),
                              opset_imports=[helper.make_opsetid("", 17)])
    before = model.SerializeToString()
    ours, theirs = opspec.infer_shapes(model), onnx.shape_inference.infer_shapes(model)
    assert model.SerializeToString() == before
    assert list(ours.graph.output) == list(theirs.graph.output)


def _retyped(graph: onnx.GraphProto, values: list[object], in_bulk: bool) -> bytes:
    """``graph`` with its outputs given ``values`` (by position), read in one pass or not."""
    graph = onnx.GraphProto.FromString(graph.SerializeToString())
    read = read_entries(graph.output)
    reader = DimReader()
    declared, plain = reader.value_infos_as_written(graph.output, read.keys)
    types = dict(zip(read.names, values))
    write_graph(graph, types, [], [], {}, dict(zip(read.names, declared)), TypeEncoder(), plain_outputs=plain,
                outputs_read=read if in_bulk else None)
    return graph.SerializeToString()


def _elem_only_outputs(count: int) -> list[onnx.ValueInfoProto]:
    """Outputs declaring at most an element type, in each form: float, int64, a tensor type
    without one, an empty type."""
    entries = [helper.make_tensor_value_info(f"y{i}", (F, TensorProto.INT64)[i % 2], None) for i in range(count)]
    entries[2].type.tensor_type.ClearField("elem_type")
    entries[3].type.Clear()
    entries[3].type.MergeFromString(b"")  # present and empty
    return entries


def _value(elem: int, dims: list[str | int | None] | None) -> object:
    return DimReader().value_info(helper.make_tensor_value_info("v", elem, dims))


@pytest.mark.parametrize("count", [15, 16, 17, 40])
@pytest.mark.parametrize("kind", ["one type", "own types", "some unknown", "elem unknown", "a sequence", "same names",
                                  "a declared shape"])
def test_outputs_declaring_at_most_an_element_type_are_retyped_as_one_by_one(count: int, kind: str) -> None:
    entries = _elem_only_outputs(count)
    values: list[object] = [_value(F, ["N", 3])] * count
    if kind == "own types":
        values = [_value((F, TensorProto.INT64)[i % 3 % 2], [i, "N"]) for i in range(count)]
    elif kind == "some unknown":  # no type, or one that says nothing: the declared one stays
        values[5], values[6] = None, _value(0, None)
    elif kind == "elem unknown":  # a shape without an element type: written entry by entry
        values[7] = _value(0, ["N"])
    elif kind == "a sequence":
        values[8] = DimReader().type(helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, None)))
    elif kind == "same names":  # the second y0 declares int64 where the first declares float
        entries[2].name = "y0"
    elif kind == "a declared shape":  # its dims would be added to those written: written entry by entry
        entries[9].type.CopyFrom(helper.make_tensor_type_proto(TensorProto.INT64, ["N", None]))
    graph = helper.make_graph([], "g", [], entries)
    written = _retyped(graph, values, in_bulk=True)
    assert written == _retyped(graph, values, in_bulk=False)
    outputs = onnx.GraphProto.FromString(written).output
    if kind == "one type":
        assert all(output.type == helper.make_tensor_type_proto(F, ["N", 3]) for output in outputs)
