"""A type read from a model is written back from the bytes it was read from when writing it
gives the same message, and encoded afresh otherwise: either way the model is the same, with
every other field of every entry kept."""
from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper

import opspec
from opspec.runtime.inference import raw_dims

F = TensorProto.FLOAT
COUNT = 40


def _wide_model() -> onnx.ModelProto:
    """``COUNT`` inputs, each through a Relu and an Identity; outputs and value_info entries
    carrying doc strings, metadata and denotations here and there."""
    inputs = [helper.make_tensor_value_info(f"x{i}", F, [f"n{i}", i % 5 + 1, 4]) for i in range(COUNT)]
    nodes = [node for i in range(COUNT) for node in (helper.make_node("Relu", [f"x{i}"], [f"h{i}"]),
                                                     helper.make_node("Identity", [f"h{i}"], [f"y{i}"]))]
    outputs = [helper.make_tensor_value_info(f"y{i}", F if i % 3 else 0, None, doc_string=f"out {i}" if i % 4 else "")
               for i in range(COUNT)]
    value_infos = [helper.make_tensor_value_info(f"h{i}", F, [None, None, 4] if i % 2 else None) for i in range(COUNT)]
    for i in range(0, COUNT, 7):
        helper.set_metadata_props(outputs[i], {"role": f"o{i}"})
        outputs[i + 1].type.denotation = "TENSOR"
        shape_type = helper.make_tensor_type_proto(F, [f"n{i + 2}", 3, None], shape_denotation=["BATCH", "", "X"])
        outputs[i + 2].type.CopyFrom(shape_type)
    graph = helper.make_graph(nodes, "wide", inputs, outputs, value_info=value_infos)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_many_outputs_and_value_info_entries_match_onnx_and_keep_their_fields() -> None:
    model = _wide_model()
    theirs = onnx.shape_inference.infer_shapes(model)
    ours = opspec.infer_shapes(model)
    plain = [i for i in range(COUNT) if i % 7 not in (1, 2)]  # (how denotations are kept is tested elsewhere)
    assert [ours.graph.output[i].type for i in plain] == [theirs.graph.output[i].type for i in plain]
    assert {v.name: v.type for v in ours.graph.value_info} == {v.name: v.type for v in theirs.graph.value_info}
    assert [v.name for v in ours.graph.output] == [f"y{i}" for i in range(COUNT)]
    assert ours.graph.output[5].doc_string == "out 5" and ours.graph.output[7].metadata_props[0].value == "o7"
    assert ours.graph.output[8].type.denotation == "TENSOR"
    kept = ours.graph.output[9].type.tensor_type.shape.dim
    assert [d.denotation for d in kept] == ["BATCH", "", "X"] and kept[1].dim_value == 3


def _odd_input_types() -> list[onnx.TypeProto]:
    """Input types whose bytes differ from what writing their value gives."""
    odd: list[onnx.TypeProto] = []
    shapes: tuple[list[str | int | None], ...] = (
        ["N+1", 2], ["N + 1", 3], [-4, "B"], ["", 5], ["bad name", 1], ["\u00e9t\u00e9", 2])
    for dims in shapes:
        odd.append(helper.make_tensor_type_proto(F, dims))
    zero_elem = helper.make_tensor_type_proto(0, ["Z", 1])
    zero_elem.tensor_type.elem_type = 0  # present, and written as present
    odd.append(zero_elem)
    extra = onnx.TypeProto()
    extra.ParseFromString(helper.make_tensor_type_proto(F, ["E", 1]).SerializeToString() + b"\x78\x05")
    odd.append(extra)  # an unknown field (15, a varint) in the type
    inner_extra = onnx.TypeProto()
    inner_extra.ParseFromString(b"\x0a\x0a\x08\x01\x12\x06\x0a\x02\x08\x03\x18\x01")  # an unknown field in the shape
    odd.append(inner_extra)
    return odd


def test_a_type_written_back_from_its_bytes_is_the_type_encoded_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    types = _odd_input_types()
    inputs = [helper.make_value_info(f"x{i}", t) for i, t in enumerate(types)]
    nodes = [helper.make_node("Relu", [f"x{i}"], [f"y{i}"]) for i in range(len(types))]
    outputs = [helper.make_tensor_value_info(f"y{i}", F, None) for i in range(len(types))]
    model = helper.make_model(helper.make_graph(nodes, "odd", inputs, outputs),
                              opset_imports=[helper.make_opsetid("", 17)])
    from_bytes = opspec.infer_shapes(model)
    monkeypatch.setattr(raw_dims, "_written_size", lambda elem, dims: -1)  # nothing written back as read
    afresh = opspec.infer_shapes(model)
    assert from_bytes == afresh
    assert from_bytes.graph.output[1].type.tensor_type.shape.dim[0].dim_param == "N+1"


def test_plain_input_types_are_written_back_from_the_bytes_read() -> None:
    from opspec.runtime.inference.read_types import DimReader

    plain = [helper.make_tensor_value_info(f"x{i}", F, [f"s{i}", 3, None, 2**20 + i, 2**40]) for i in range(3)]
    reader = DimReader()
    values = reader.value_infos(plain)
    assert [reader.encoded_types[value] for value in values] == [v.type.SerializeToString() for v in plain]
    odd = [helper.make_value_info(f"x{i}", t) for i, t in enumerate(_odd_input_types())]
    assert not reader.encoded_types.keys() & set(reader.value_infos(odd))


def _alike_outputs_model(extra_bytes: bytes, dim_denotation: str = "DATA_BATCH") -> onnx.ModelProto:
    """Relu nodes whose outputs all declare ``float[N, ?]``: the same type, written plainly,
    with a denotation (of the type or of a dim) or with an unknown field, in turn."""
    count = 12
    inputs = [helper.make_tensor_value_info(f"x{i}", F, ["N", 3]) for i in range(count)]
    nodes = [helper.make_node("Relu", [f"x{i}"], [f"y{i}"]) for i in range(count)]
    outputs = [helper.make_tensor_value_info(f"y{i}", F, ["N", None]) for i in range(count)]
    for i in range(0, count, 4):
        outputs[i].type.denotation = "TENSOR"
        outputs[i + 1].type.tensor_type.shape.dim[0].denotation = dim_denotation
        outputs[i + 2].type.ParseFromString(outputs[i + 2].type.SerializeToString() + extra_bytes)
    graph = helper.make_graph(nodes, "alike", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("dim_denotation", ["DATA_BATCH", ""])
@pytest.mark.parametrize("extra_bytes", [b"\x78\x05", b""])
def test_a_declared_output_type_keeps_its_denotation_beside_plain_ones_alike(extra_bytes: bytes,
                                                                             dim_denotation: str) -> None:
    model = _alike_outputs_model(extra_bytes, dim_denotation)
    ours = opspec.infer_shapes(model)
    theirs = onnx.shape_inference.infer_shapes(model)
    plain = [i for i in range(12) if i % 4 == 3]
    assert [ours.graph.output[i].type for i in plain] == [theirs.graph.output[i].type for i in plain]
    for i in range(0, 12, 4):
        assert ours.graph.output[i].type.denotation == "TENSOR"
        assert ours.graph.output[i + 1].type.tensor_type.shape.dim[0].denotation == dim_denotation
        for output in ours.graph.output[i:i + 3]:
            dims = output.type.tensor_type.shape.dim
            assert [(d.dim_param, d.dim_value) for d in dims] == [("N", 0), ("", 3)]


def test_only_output_types_read_as_written_are_marked_plain() -> None:
    from opspec.runtime.inference.read_types import DimReader

    graph = _alike_outputs_model(b"\x78\x05").graph
    values, plain = DimReader().value_infos_as_written(graph.output)
    assert len(set(values)) == 1 and not plain  # a dim's denotation: all read one by one
    for i in range(1, 12, 4):
        graph.output[i].type.tensor_type.shape.dim[0].ClearField("denotation")
    values, plain = DimReader().value_infos_as_written(graph.output)
    assert len(set(values)) == 1 and plain == {i for i in range(12) if i % 4 in (1, 3)}
