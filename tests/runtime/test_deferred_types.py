"""Graph input types kept as their bytes until something looks at their dims, and nodes that
pass their input's type on without running their rule: the models inferred, the reports and the
errors are exactly what reading every type at the start and running every rule gives."""
from __future__ import annotations

import random
from typing import Any

import onnx
import pytest
from onnx import TensorProto, helper

import opspec
from opspec.runtime.contract.declare import make_spec
from opspec.runtime.inference import deferred_types, graph, raw_dims, resolve
from opspec.runtime.inference.deferred_types import UnreadType, plain_tensor_elem
from opspec.runtime.inference.read_types import DimReader
from opspec.runtime.inference.write_types import TypeEncoder
from opspec.runtime.op_set import installed_op_set
from opspec.runtime.shape import Sym

F = TensorProto.FLOAT
_DIMS: list[Any] = ["N", "batch", "_x1", "x" * 32, "x" * 33, "x" * 126, "N+1", "a b", "\u00e9", "", 0, 1, 127, 128, 16383,
                    16384, 2**21 - 1, 2**21, 2**40, -1, None]


def _model(inputs: list[onnx.ValueInfoProto], nodes: list[onnx.NodeProto], outputs: list[onnx.ValueInfoProto],
           value_info: list[onnx.ValueInfoProto] | None = None, initializer: list[onnx.TensorProto] | None = None,
           ir_version: int = 8) -> onnx.ModelProto:
    model = helper.make_model(helper.make_graph(nodes, "g", inputs, outputs, value_info=value_info or [],
                                                initializer=initializer or []),
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = ir_version
    return model


def _answers(model: onnx.ModelProto) -> tuple[bytes, list[str], dict[str, Any]]:
    """The inferred model's bytes, the errors and the reported values."""
    result = opspec.infer(model)
    inferred = opspec.infer_shapes(model)
    assert isinstance(inferred, onnx.ModelProto)
    return inferred.SerializeToString(), [str(error) for error in result.errors], result.values


def _both_ways(model: onnx.ModelProto, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    before = model.SerializeToString()
    deferred = _answers(model)
    with monkeypatch.context() as patch:
        patch.setattr(graph, "deferred_types", lambda reader, value_infos, keys: reader.value_infos(value_infos, keys))
        entry_of = resolve.schema_entry

        def never_passing(schema: Any, rules: Any, opset: int = 0, cache: Any = None) -> resolve.OpEntry:
            entry = entry_of(schema, rules, opset, cache)
            entry.passes_type = False
            return entry

        patch.setattr(resolve, "schema_entry", never_passing)
        read_first = _answers(model)
    assert model.SerializeToString() == before  # the input is never changed
    return deferred, read_first


def _random_type(rng: random.Random) -> onnx.TypeProto:
    dims = [rng.choice(_DIMS) for _ in range(rng.randrange(6))]
    shaped = rng.random() < 0.9
    proto = helper.make_tensor_type_proto(rng.choice([F, F, TensorProto.INT64, 0]), dims if shaped else None)
    if dims and shaped and rng.random() < 0.1:
        proto.tensor_type.shape.dim[0].denotation = "DATA_BATCH"
    if rng.random() < 0.05:
        proto.denotation = "TENSOR"
    if rng.random() < 0.05:
        proto.ParseFromString(proto.SerializeToString() + b"\x78\x05")  # an unknown field
    return proto


def test_bytes_kept_only_when_they_are_what_writing_the_type_gives() -> None:
    rng = random.Random(11)
    kept = 0
    for _ in range(600):
        proto = _random_type(rng)
        key = proto.SerializeToString()
        elem = plain_tensor_elem(key)
        if elem:
            kept += 1
            value = DimReader().types_of([key], [proto])[0]
            assert value.elem == elem and TypeEncoder()(value) == key
    assert 100 < kept < 550  # both kinds are met


@pytest.mark.parametrize("key", [
    b"",
    helper.make_tensor_type_proto(0, ["N"]).SerializeToString(),  # no element type
    helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, ["N"])).SerializeToString(),
    # a dim_param "a" followed by an unknown field (key '0', value 'b') in the same Dimension:
    # the name pattern would read "a0b", and the lengths say otherwise
    b"\x0a\x0b\x08\x01\x12\x07\x0a\x05\x12\x01a0b",
    b"\x0a\x06\x08\x01\x12\x02\x0a\x00\x00",  # lengths that do not add up
])
def test_other_bytes_are_read_at_once(key: bytes) -> None:
    assert plain_tensor_elem(key) == 0


def test_plain_dims_of_every_form_are_kept() -> None:
    longest = "x" * deferred_types.LONGEST_PLAIN_NAME
    key = helper.make_tensor_type_proto(F, ["N", 0, 127, 128, 2**21 - 1, longest]).SerializeToString()
    assert plain_tensor_elem(key) == F
    # a dim of neither value nor name is plain too (a graph input's gets its symbol in the bytes)
    assert plain_tensor_elem(helper.make_tensor_type_proto(F, ["N", None, 3]).SerializeToString()) == F
    assert not plain_tensor_elem(helper.make_tensor_type_proto(F, ["N", longest + "x"]).SerializeToString())
    assert plain_tensor_elem(helper.make_tensor_type_proto(F, []).SerializeToString()) == F
    assert plain_tensor_elem(helper.make_tensor_type_proto(F, None).SerializeToString()) == F


def test_random_relu_models_infer_as_when_everything_is_read_first(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(5)
    for case in range(60):
        count = rng.randrange(1, 5)
        inputs = [helper.make_value_info(f"x{i}", _random_type(rng)) for i in range(count)]
        nodes = [helper.make_node("Relu", [f"x{i}"], [f"y{i}"]) for i in range(count)]
        nodes += [helper.make_node(rng.choice(["Relu", "Identity", "Neg"]), [f"y{i}"], [f"z{i}"])
                  for i in range(count) if rng.random() < 0.5]
        if rng.random() < 0.3:  # a node that looks at the dims, after the ones that pass types on
            nodes.append(helper.make_node("Add", ["y0", "x0"], ["sum"]))
        declared = [helper.make_value_info(f"y{i}", _random_type(rng)) if rng.random() < 0.5
                    else helper.make_tensor_value_info(f"y{i}", rng.choice([F, 0, TensorProto.INT64]), None)
                    for i in range(count)]
        value_info = [helper.make_value_info("z0", _random_type(rng))] if rng.random() < 0.3 else []
        model = _model(inputs, nodes, declared, value_info)
        deferred, read_first = _both_ways(model, monkeypatch)
        assert deferred == read_first, case


def _counted_decodes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many raw dims each decoding reads, recorded from now on."""
    decoded: list[int] = []
    decode = raw_dims.RawDims.decode

    def counted(self: raw_dims.RawDims, raws: set[bytes], keep_fields: bool = True) -> None:
        decoded.append(len(raws))
        decode(self, raws, keep_fields)

    monkeypatch.setattr(raw_dims.RawDims, "decode", counted)
    return decoded


def test_a_passing_node_decodes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    decoded = _counted_decodes(monkeypatch)
    count = 50
    inputs = [helper.make_tensor_value_info(f"x{i}", F, [f"n{i}", 3, f"m{i}"]) for i in range(count)]
    nodes = [helper.make_node("Relu", [f"x{i}"], [f"y{i}"]) for i in range(count)]
    outputs = [helper.make_tensor_value_info(f"y{i}", F, None) for i in range(count)]
    model = _model(inputs, nodes, outputs)
    inferred = opspec.infer_shapes(model)
    assert sum(decoded) == 0  # no input's dims (the outputs declare none)
    assert [output.type for output in inferred.graph.output] == [value_info.type for value_info in inputs]
    assert opspec.infer(model).values["y7"][0] == (F, (Sym("n7"), 3, Sym("m7")))  # the report decodes them


def test_the_first_node_that_looks_decodes_them_all(monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = [helper.make_tensor_value_info(f"x{i}", F, [f"n{i}", 3]) for i in range(3)]
    nodes = [helper.make_node("Relu", ["x0"], ["y0"]), helper.make_node("Relu", ["y0"], ["y1"]),
             helper.make_node("Add", ["y1", "x1"], ["s"]), helper.make_node("Relu", ["x2"], ["y2"])]
    model = _model(inputs, nodes, [helper.make_tensor_value_info(name, 0, None) for name in ("s", "y2")])
    deferred, read_first = _both_ways(model, monkeypatch)
    assert deferred == read_first
    assert deferred[2]["s"][0].shape[1] == 3 and deferred[2]["y2"][0].shape == (Sym("n2"), 3)


def test_declared_types_merge_and_conflict_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = [helper.make_tensor_value_info(f"x{i}", F, ["N", 2]) for i in range(4)]
    nodes = [helper.make_node("Relu", [f"x{i}"], [f"y{i}"]) for i in range(4)]
    outputs = [helper.make_tensor_value_info("y0", TensorProto.INT64, None),  # another element type: an error
               helper.make_tensor_value_info("y1", F, ["N", 3]),  # another dim: an error
               helper.make_tensor_value_info("y2", F, [None, 2]),
               helper.make_tensor_value_info("y3", 0, None)]
    value_info = [helper.make_tensor_value_info("y2", F, ["M", None])]
    deferred, read_first = _both_ways(_model(inputs, nodes, outputs, value_info), monkeypatch)
    assert deferred == read_first
    assert len(deferred[1]) == 2 and "conflicts with the declared" in deferred[1][0]


def test_an_input_listed_with_its_initializer_merges_with_it(monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = [helper.make_tensor_value_info("w", F, ["N", 2]), helper.make_tensor_value_info("x", F, ["K"])]
    nodes = [helper.make_node("Relu", ["w"], ["y"]), helper.make_node("Relu", ["x"], ["z"])]
    weight = helper.make_tensor("w", F, [3, 2], [0.0] * 6)
    model = _model(inputs, nodes, [helper.make_tensor_value_info(n, F, None) for n in "yz"], initializer=[weight],
                   ir_version=3)
    deferred, read_first = _both_ways(model, monkeypatch)
    assert deferred == read_first and deferred[2]["y"][0].shape == (3, 2)


def test_an_input_of_high_rank_is_written_from_its_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    dims: list[Any] = [[1, f"d{i}", 2**20, i, "N"][i % 5] for i in range(5000)]
    model = _model([helper.make_tensor_value_info("x", F, dims)], [helper.make_node("Relu", ["x"], ["y"])],
                   [helper.make_tensor_value_info("y", F, None)])
    deferred, read_first = _both_ways(model, monkeypatch)
    assert deferred == read_first
    assert onnx.ModelProto.FromString(deferred[0]).graph.output[0].type == model.graph.input[0].type


def test_a_long_input_with_unknown_dims_is_named_in_its_bytes_and_decoded_by_nothing_that_passes_it_on(
        monkeypatch: pytest.MonkeyPatch) -> None:
    decoded = _counted_decodes(monkeypatch)
    dims: list[Any] = [[None, f"d{i}", 7][i % 3] for i in range(3000)]
    model = _model([helper.make_tensor_value_info("x", F, dims), helper.make_tensor_value_info("s", F, [None, 2])],
                   [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Relu", ["s"], ["t"])],
                   [helper.make_tensor_value_info(name, F, None) for name in "yt"])
    written = opspec.infer_shapes(model).graph.output
    assert sum(decoded) == 2  # only the short input, read at once: ``None`` and ``2``
    assert written[0].type.tensor_type.shape.dim[0].dim_param == "unk__0"
    assert written[1].type.tensor_type.shape.dim[0].dim_param == "unk__1000"  # named after every dim of ``x``
    monkeypatch.undo()
    deferred, read_first = _both_ways(model, monkeypatch)
    assert deferred == read_first


def test_only_a_rule_that_declares_it_passes_types_on() -> None:
    assert make_spec("r", "A rule.", {"passes_input_type": True}).passes_input_type
    entries = {op: resolve.resolve(installed_op_set(), "", op, {"": 17}, {}, {}) for op in ("Relu", "Neg", "Cast", "IsNaN", "LeakyRelu")}
    assert entries["Relu"].passes_type
    assert not entries["Neg"].passes_type  # computes data
    assert not entries["Cast"].passes_type  # another element type
    assert not entries["IsNaN"].passes_type  # an output of another type parameter
    assert not entries["LeakyRelu"].passes_type  # attributes to check


def test_an_unread_type_is_written_as_its_bytes() -> None:
    key = helper.make_tensor_type_proto(F, ["N", 3]).SerializeToString()
    unread = UnreadType(key, F, (), 0)
    assert TypeEncoder()(unread) == key
    assert deferred_types.DeferredTypes(DimReader(), {}, []).names == []


@pytest.mark.parametrize("plain", [True, False])
def test_inputs_all_of_one_type_infer_as_when_everything_is_read_first(plain: bool,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    count = 20
    dims: list[Any] = ["N", 3] if plain else ["N+1", 3]  # (an expression is read at once)
    inputs = [helper.make_tensor_value_info(f"x{i}", F, dims) for i in range(count)]
    nodes = [helper.make_node("Relu", [f"x{i}"], [f"y{i}"]) for i in range(count)]
    nodes.append(helper.make_node("Shape", ["x3"], ["s"]))  # looks at the dims: all are decoded
    outputs = [helper.make_tensor_value_info(f"y{i}", F, None) for i in range(count)]
    outputs.append(helper.make_tensor_value_info("s", TensorProto.INT64, None))
    deferred, read_first = _both_ways(_model(inputs, nodes, outputs), monkeypatch)
    assert deferred == read_first
    values = deferred_types.deferred_types(DimReader(), inputs, [i.type.SerializeToString() for i in inputs])
    assert len({id(value) for value in values}) == 1 and (type(values[0]) is UnreadType) == plain
