"""Declared inputs and outputs read in one pass and outputs rewritten in bulk: the same names,
types and written model as reading and writing them entry by entry."""
from __future__ import annotations

import onnx
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
