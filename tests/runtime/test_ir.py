"""The protobuf IR: ONNX wire compatibility, model loading/saving, proto compilation."""
from __future__ import annotations

import ast
import random
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import onnx  # noqa: E402 - the reference implementation, a test dependency
from onnx import helper, numpy_helper  # noqa: E402

from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor  # noqa: E402
from google.protobuf.message import Message  # noqa: E402

from opspec.codegen import protos  # noqa: E402
from opspec.generated import opspec_ir_pb2 as ir  # noqa: E402
from opspec.runtime.ir import (  # noqa: E402
    LoadedModel,
    ModelLoadError,
    SourceKind,
    load_model,
    save_model,
)

GENERATED = Path(ir.__file__)
ONNX_DATA = Path(onnx.__file__).parent / "backend" / "test" / "data"
ONNX_PACKAGE, OUR_PACKAGE = "onnx", "opspec.ir"


# --------------------------------------------------------------------------- helpers


def copy_by_name(src: Message, dst: Message) -> Message:
    """Copy ``src`` into ``dst`` field by field, matching fields by *name* only."""
    for field, value in src.ListFields():
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            if field.is_repeated:
                for item in value:
                    copy_by_name(item, getattr(dst, field.name).add())
            else:
                getattr(dst, field.name).SetInParent()
                copy_by_name(value, getattr(dst, field.name))
        elif field.is_repeated:
            getattr(dst, field.name).extend(value)
        else:
            setattr(dst, field.name, value)
    return dst


def assert_round_trips(data: bytes, ours_type: type[Message], onnx_type: type[Message]) -> None:
    """``data`` must re-serialize identically through our classes and back through onnx's."""
    ours = ours_type.FromString(data)
    assert ours.SerializeToString() == data
    assert onnx_type.FromString(ours.SerializeToString()).SerializeToString() == data


def tensor(name: str, dtype: int, dims: list[int], values: list | None = None) -> onnx.TensorProto:
    return helper.make_tensor(name, dtype, dims, values if values is not None else [1] * max(1, _prod(dims)))


def _prod(dims: list[int]) -> int:
    out = 1
    for d in dims:
        out *= d
    return out


def rich_model() -> onnx.ModelProto:
    """An onnx model that sets (nearly) every field of every IR message."""
    tp = onnx.TensorProto
    dense = helper.make_tensor("dense", tp.FLOAT, [2, 2], [1.0, -2.5, float("inf"), 0.0])
    sparse = helper.make_sparse_tensor(
        helper.make_tensor("sv", tp.FLOAT, [2], [3.0, 4.0]),
        helper.make_tensor("si", tp.INT64, [2], [0, 3]),
        [2, 2],
    )
    shaped = helper.make_tensor_type_proto(tp.FLOAT, ["N", 3, None, 0], shape_denotation=["BATCH", "", "", ""])
    shaped.denotation = "TENSOR"
    unranked = helper.make_tensor_type_proto(tp.INT64, None)
    scalar = helper.make_tensor_type_proto(tp.DOUBLE, [])
    seq = helper.make_sequence_type_proto(shaped)
    mapping = helper.make_map_type_proto(tp.STRING, helper.make_sequence_type_proto(unranked))
    optional = helper.make_optional_type_proto(seq)
    sparse_type = helper.make_sparse_tensor_type_proto(tp.FLOAT16, [5, "M"])
    opaque = onnx.TypeProto()
    opaque.opaque_type.domain, opaque.opaque_type.name = "example.domain", "Blob"
    empty_type = onnx.TypeProto()
    empty_type.sequence_type.SetInParent()  # a oneof member present but empty

    body = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])],
        "body",
        [helper.make_tensor_value_info("x", tp.FLOAT, [1])],
        [helper.make_tensor_value_info("y", tp.FLOAT, [1])],
    )
    other_body = helper.make_graph([], "empty_body", [], [])

    attributes = {
        "f": 0.25, "f_zero": 0.0, "i": -7, "i_zero": 0, "i_big": 2**63 - 1, "s": b"bytes\x00\xff",
        "t": dense, "g": body, "sp": sparse, "tp": shaped,
        "floats": [1.5, -0.0, float("nan")], "ints": [0, -1, 2**40], "strings": [b"a", b"", "\u00e9".encode()],
        "tensors": [dense, tensor("ti", tp.INT32, [3], [-1, 0, 1])], "graphs": [body, other_body],
        "sparse_tensors": [sparse, sparse], "type_protos": [seq, mapping, optional, opaque],
    }
    node = helper.make_node(
        "Custom", ["a", "", "b"], ["c"], name="n0", doc_string="node doc", domain="example.domain",
        overload="v2", **attributes,
    )
    node.attribute.append(helper.make_attribute("empty_ints", [], attr_type=onnx.AttributeProto.INTS))
    node.attribute.append(helper.make_attribute("documented", 1, doc_string="attr doc"))
    helper.set_metadata_props(node, {"k": "v"})
    cfg = node.device_configurations.add(configuration_id="cfg0", pipeline_stage=1)
    spec = cfg.sharding_spec.add(tensor_name="a", device=[0, 1, -1])
    spec.index_to_device_group_map.add(key=0, value=[0, 1])
    spec.index_to_device_group_map.add(key=1)
    dim = spec.sharded_dim.add(axis=0)
    dim.simple_sharding.add(dim_value=4, num_shards=2)
    dim.simple_sharding.add(dim_param="N", num_shards=2)
    dim.simple_sharding.add(dim_value=0)

    initializers = [dense]
    for name, number in onnx.TensorProto.DataType.items():
        initializers.append(onnx.TensorProto(name=f"raw_{name}", data_type=number, dims=[2, 0], raw_data=b""))
        initializers.append(onnx.TensorProto(name=f"raw1_{name}", data_type=number, dims=[1], raw_data=b"\x01\x02"))
    initializers += [
        tensor("i32", tp.INT32, [3], [-2**31, 0, 2**31 - 1]),
        tensor("i64", tp.INT64, [3], [-2**63, 0, 2**63 - 1]),
        tensor("u64", tp.UINT64, [2], [0, 2**64 - 1]),
        tensor("f64", tp.DOUBLE, [2], [1e300, -1e-300]),
        tensor("str", tp.STRING, [2], [b"x", b""]),
        tensor("c64", tp.COMPLEX64, [1], [1 + 2j]),
        tensor("bf16", tp.BFLOAT16, [2], [1.0, 2.0]),
        tensor("scalar", tp.FLOAT, [], [3.0]),
        numpy_helper.from_array(__import__("numpy").arange(6, dtype="float32").reshape(2, 3), "np_raw"),
    ]
    external = onnx.TensorProto(name="ext", data_type=tp.FLOAT, dims=[1024], doc_string="tensor doc")
    external.data_location = onnx.TensorProto.EXTERNAL
    for key, value in (("location", "weights.bin"), ("offset", "0"), ("length", "4096")):
        external.external_data.add(key=key, value=value)
    external.segment.begin, external.segment.end = 0, 512
    external.metadata_props.add(key="origin", value="test")
    default_location = onnx.TensorProto(name="explicit_default", data_type=tp.FLOAT, dims=[0])
    default_location.data_location = onnx.TensorProto.DEFAULT
    initializers += [external, default_location]

    inputs = [
        helper.make_tensor_value_info("a", tp.FLOAT, ["N", 3, None, 0], doc_string="input doc"),
        helper.make_value_info("b", seq),
        helper.make_value_info("m", mapping),
        helper.make_value_info("o", optional),
        helper.make_value_info("sp_in", sparse_type),
        helper.make_value_info("opq", opaque),
        helper.make_value_info("u", unranked),
        helper.make_value_info("sc", scalar),
        helper.make_value_info("e", empty_type),
        onnx.ValueInfoProto(name="untyped"),
    ]
    helper.set_metadata_props(inputs[0], {"role": "image"})
    graph = helper.make_graph(
        [node, helper.make_node("Fn", ["c"], ["d"], domain="local", alpha=2.0)],
        "main", inputs, [helper.make_tensor_value_info("d", tp.FLOAT, None)],
        initializer=initializers, doc_string="graph doc",
        value_info=[helper.make_tensor_value_info("c", tp.FLOAT, ["N"])],
        sparse_initializer=[sparse],
    )
    annotation = graph.quantization_annotation.add(tensor_name="c")
    annotation.quant_parameter_tensor_names.add(key="SCALE_TENSOR", value="dense")
    helper.set_metadata_props(graph, {"g": "1"})

    function = helper.make_function(
        "local", "Fn", ["X"], ["Y"],
        [helper.make_node("Mul", ["X", "X"], ["Y"]),
         helper.make_node("Constant", [], ["k"], value_float=1.0),
         onnx.NodeProto(op_type="Elu", input=["X"], output=["Z"],
                        attribute=[helper.make_attribute_ref("alpha", onnx.AttributeProto.FLOAT)])],
        [helper.make_opsetid("", 21)],
        attributes=["beta"], attribute_protos=[helper.make_attribute("alpha", 1.0)],
        doc_string="function doc", overload="ov",
        value_info=[helper.make_tensor_value_info("k", tp.FLOAT, [])],
    )
    helper.set_metadata_props(function, {"fn": "meta"})

    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("local", 1)],
        producer_name="opspec-tests", producer_version="1.0", domain="org.example",
        model_version=0, doc_string="model doc", functions=[function],
    )
    helper.set_model_props(model, {"author": "someone", "license": ""})
    training = helper.make_training_info(body, [("x", "y")], other_body, [("y", "x")])
    model.training_info.append(training)
    model.training_info.add()
    model.configuration.add(name="cfg0", num_devices=2, device=["cpu:0", "cpu:1"])
    return model


def conformance_models() -> list[tuple[str, bytes]]:
    """Serialized models shipped with onnx, plus its node test cases (built in memory
    when this onnx wheel does not ship the ``data/node`` folder)."""
    found = [(str(p.relative_to(ONNX_DATA)), p.read_bytes()) for p in sorted(ONNX_DATA.glob("*/*/model.onnx"))]
    if not (ONNX_DATA / "node").is_dir():
        from onnx.backend.test.case import node as node_cases

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cases = node_cases.collect_testcases(None)
        found += [(f"node/{case.name}", case.model.SerializeToString()) for case in cases if case.model is not None]
    return found


@pytest.fixture(scope="module")
def model_bytes() -> bytes:
    return rich_model().SerializeToString()


@pytest.fixture
def small_model() -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["N", 4])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], producer_name="t")


# --------------------------------------------------------------------------- schema


def _messages(desc) -> dict[str, Descriptor]:
    """All message descriptors of a file, keyed by name relative to the package."""
    out: dict[str, Descriptor] = {}
    todo = [(m.name, m) for m in desc.message_types_by_name.values()]
    while todo:
        name, msg = todo.pop()
        out[name] = msg
        todo += [(f"{name}.{n.name}", n) for n in msg.nested_types]
    return out


def _enums(desc) -> dict[str, EnumDescriptor]:
    out = dict(desc.enum_types_by_name)
    for name, msg in _messages(desc).items():
        out.update({f"{name}.{e.name}": e for e in msg.enum_types})
    return out


def _relative(full_name: str) -> str:
    for package in (ONNX_PACKAGE, OUR_PACKAGE):
        if full_name.startswith(package + "."):
            return full_name[len(package) + 1:]
    raise AssertionError(full_name)


def _field_facts(field: FieldDescriptor) -> tuple:
    return (
        field.number, field.type, field.is_repeated, field.is_packed, field.has_presence, field.has_default_value,
        field.containing_oneof.name if field.containing_oneof else None,
        _relative(field.message_type.full_name) if field.message_type else None,
        _relative(field.enum_type.full_name) if field.enum_type else None,
    )


def test_package_is_not_onnx():
    assert ir.DESCRIPTOR.package == OUR_PACKAGE
    assert ir.ModelProto.DESCRIPTOR.full_name == "opspec.ir.ModelProto"
    assert ir.ModelProto.__module__ == "opspec.generated.opspec_ir_pb2"


def test_every_message_and_field_matches_onnx():
    theirs, ours = _messages(onnx.ModelProto.DESCRIPTOR.file), _messages(ir.DESCRIPTOR)
    assert sorted(theirs) == sorted(ours)
    for name, msg in theirs.items():
        mine = ours[name]
        assert {f.name: _field_facts(f) for f in msg.fields} == {f.name: _field_facts(f) for f in mine.fields}, name
        assert [o.name for o in msg.oneofs] == [o.name for o in mine.oneofs], name


def test_every_enum_matches_onnx():
    theirs, ours = _enums(onnx.ModelProto.DESCRIPTOR.file), _enums(ir.DESCRIPTOR)
    assert sorted(theirs) == sorted(ours)
    for name, enum in theirs.items():
        by_name = {v.name: v.number for v in enum.values}
        assert by_name == {v.name: v.number for v in ours[name].values}, name


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (ir.TensorProto.DataType, onnx.TensorProto.DataType),
        (ir.AttributeProto.AttributeType, onnx.AttributeProto.AttributeType),
        (ir.TensorProto.DataLocation, onnx.TensorProto.DataLocation),
        (ir.Version, onnx.Version),
    ],
    ids=["DataType", "AttributeType", "DataLocation", "Version"],
)
def test_enum_values_both_ways(ours, theirs):
    for name, number in theirs.items():
        assert ours.Value(name) == number
        assert ours.Name(number) == theirs.Name(number)
    for name, number in ours.items():
        assert theirs.Value(name) == number
    assert ir.IR_VERSION == onnx.IR_VERSION
    for name in ("FLOAT8E4M3FN", "FLOAT8E5M2FNUZ", "UINT4", "INT4", "FLOAT4E2M1", "FLOAT8E8M0", "UINT2", "INT2"):
        assert ir.TensorProto.DataType.Value(name) == getattr(onnx.TensorProto, name)


# --------------------------------------------------------------------------- wire compatibility


def test_rich_model_onnx_to_ours_is_byte_identical(model_bytes):
    ours = ir.ModelProto.FromString(model_bytes)
    assert ours.SerializeToString() == model_bytes
    # Presence survives: explicit zeros, unknown dims and empty oneof members.
    dims = ours.graph.input[0].type.tensor_type.shape.dim
    assert [d.WhichOneof("value") for d in dims] == ["dim_param", "dim_value", None, "dim_value"]
    assert dims[3].HasField("dim_value") and dims[3].dim_value == 0
    assert ours.graph.input[8].type.WhichOneof("value") == "sequence_type"
    assert ours.HasField("model_version") and ours.model_version == 0
    assert not ours.graph.input[6].type.tensor_type.HasField("shape")
    assert ours.graph.input[7].type.tensor_type.HasField("shape")
    assert len(ours.graph.input[7].type.tensor_type.shape.dim) == 0


def test_rich_model_sets_every_attribute_type(model_bytes):
    ours = ir.ModelProto.FromString(model_bytes)
    used = {a.type for a in ours.graph.node[0].attribute}
    assert used == set(ir.AttributeProto.AttributeType.values()) - {ir.AttributeProto.UNDEFINED}
    assert ours.functions[0].node[2].attribute[0].ref_attr_name == "alpha"


def test_rich_model_built_with_our_classes_matches_onnx(model_bytes):
    """Reverse direction: populate our messages by field *name*, serialize, parse with onnx."""
    theirs = onnx.ModelProto.FromString(model_bytes)
    ours = copy_by_name(theirs, ir.ModelProto())
    data = ours.SerializeToString()
    assert data == model_bytes
    assert onnx.ModelProto.FromString(data) == theirs
    assert onnx.ModelProto.FromString(data).SerializeToString() == data


def test_rich_model_textual_forms_match(model_bytes):
    from google.protobuf import json_format, text_format

    ours, theirs = ir.ModelProto.FromString(model_bytes), onnx.ModelProto.FromString(model_bytes)
    assert text_format.MessageToString(ours) == text_format.MessageToString(theirs)
    assert json_format.MessageToJson(ours) == json_format.MessageToJson(theirs)


def test_packed_and_unpacked_encodings_match():
    data = helper.make_tensor("t", onnx.TensorProto.INT64, [3], [1, -1, 5]).SerializeToString()
    assert data == ir.TensorProto(name="t", data_type=7, dims=[3], int64_data=[1, -1, 5]).SerializeToString()
    attr = helper.make_attribute("ints", [1, 2, 3])
    assert attr.SerializeToString() == ir.AttributeProto(name="ints", type=7, ints=[1, 2, 3]).SerializeToString()
    # dims/ints are unpacked: one tag per element.
    assert ir.TensorProto(dims=[1, 2]).SerializeToString() == b"\x08\x01\x08\x02"
    assert ir.TensorProto(int64_data=[1, 2]).SerializeToString() == b"\x3a\x02\x01\x02"


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [(getattr(ir, name), getattr(onnx, name)) for name in ("TensorProto", "SparseTensorProto", "TypeProto",
                                                          "GraphProto", "NodeProto", "FunctionProto")],
    ids=lambda t: getattr(t, "__name__", str(t)),
)
def test_messages_round_trip_both_ways(ours, theirs, model_bytes):
    model = onnx.ModelProto.FromString(model_bytes)
    by_kind: dict[str, list[Message]] = {
        "TensorProto": list(model.graph.initializer),
        "SparseTensorProto": list(model.graph.sparse_initializer),
        "TypeProto": [vi.type for vi in model.graph.input],
        "GraphProto": [model.graph, *(a.g for a in model.graph.node[0].attribute if a.HasField("g"))],
        "NodeProto": list(model.graph.node),
        "FunctionProto": list(model.functions),
    }
    samples = by_kind[theirs.__name__]
    assert samples
    for sample in samples:
        assert_round_trips(sample.SerializeToString(), ours, theirs)
        assert copy_by_name(sample, ours()).SerializeToString() == sample.SerializeToString()


def test_unknown_fields_are_preserved(model_bytes):
    extra = model_bytes + b"\xf8\x06\x2a"  # field 111, varint 42: unknown to both
    assert ir.ModelProto.FromString(extra).SerializeToString() == onnx.ModelProto.FromString(extra).SerializeToString()


def test_onnx_conformance_models_round_trip():
    models = conformance_models()
    assert len(models) > 1000, "onnx test data not found"
    failures = []
    for name, data in models:
        ours = ir.ModelProto.FromString(data)
        if ours.SerializeToString() != data or onnx.ModelProto.FromString(ours.SerializeToString()).SerializeToString() != data:
            failures.append(name)
    assert not failures, failures[:20]


def test_onnx_test_tensors_round_trip():
    files = sorted(ONNX_DATA.glob("*/*/test_data_set_*/*.pb"))
    assert files, "onnx test data not found"
    for path in files:
        data = path.read_bytes()
        assert ir.TensorProto.FromString(data).SerializeToString() == data, path


# --------------------------------------------------------------------------- load_model


def test_load_from_path(tmp_path, small_model):
    data = small_model.SerializeToString()
    path = tmp_path / "m.onnx"
    path.write_bytes(data)
    for source in (path, str(path)):
        loaded = load_model(source)
        assert isinstance(loaded, LoadedModel) and loaded.kind == SourceKind.PATH
        assert isinstance(loaded.model, ir.ModelProto)
        assert loaded.model.SerializeToString() == data
        back = loaded.to_source_kind(loaded.model)
        assert type(back) is ir.ModelProto and back.SerializeToString() == data
    assert path.read_bytes() == data


@pytest.mark.parametrize("wrap", [bytes, bytearray, memoryview])
def test_load_from_bytes(small_model, wrap):
    data = small_model.SerializeToString()
    source = wrap(bytearray(data))
    loaded = load_model(source)
    assert loaded.kind == SourceKind.BYTES
    assert loaded.model.SerializeToString() == data
    loaded.model.producer_name = "changed"
    assert bytes(source) == data
    if wrap is not bytes:  # the parsed model must not alias the caller's buffer
        source[source.tobytes().index(b"Relu") if wrap is memoryview else source.index(b"Relu")] = ord("S")
        assert loaded.model.graph.node[0].op_type == "Relu"
    back = loaded.to_source_kind(loaded.model)
    assert type(back) is bytes and ir.ModelProto.FromString(back).producer_name == "changed"


def test_load_from_our_model_copies(small_model):
    mine = ir.ModelProto.FromString(small_model.SerializeToString())
    before = mine.SerializeToString()
    loaded = load_model(mine)
    assert loaded.kind == SourceKind.OPSPEC and loaded.model is not mine
    loaded.model.graph.node[0].op_type = "Sigmoid"
    loaded.model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 3
    assert mine.SerializeToString() == before
    back = loaded.to_source_kind(loaded.model)
    assert type(back) is ir.ModelProto and back.graph.node[0].op_type == "Sigmoid"


def test_load_from_onnx_model(small_model):
    before = small_model.SerializeToString()
    loaded = load_model(small_model)
    assert loaded.kind == SourceKind.ONNX
    assert type(loaded.model) is ir.ModelProto and loaded.model.SerializeToString() == before
    loaded.model.graph.node[0].op_type = "Sigmoid"
    assert small_model.SerializeToString() == before
    back = loaded.to_source_kind(loaded.model)
    assert type(back) is type(small_model) and back.graph.node[0].op_type == "Sigmoid"
    assert back is not small_model


def test_loading_does_not_import_onnx(tmp_path, small_model):
    path = tmp_path / "m.onnx"
    path.write_bytes(small_model.SerializeToString())
    code = (
        "import sys; from opspec.runtime.ir import load_model; "
        f"m = load_model({str(path)!r}); assert m.model.graph.node[0].op_type == 'Relu'; "
        "assert not any(n == 'onnx' or n.startswith('onnx.') for n in sys.modules), 'onnx imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_save_model(tmp_path, small_model):
    data = small_model.SerializeToString()
    for i, model in enumerate((small_model, ir.ModelProto.FromString(data), data, memoryview(data))):
        path = save_model(model, tmp_path / f"out{i}.onnx")
        assert Path(path).read_bytes() == data
        assert load_model(path).model.SerializeToString() == data


# --------------------------------------------------------------------------- load errors


def _expect_error(source, *needles: str) -> str:
    with pytest.raises(ModelLoadError) as info:
        load_model(source)
    message = str(info.value)
    assert "\n" not in message
    for needle in needles:
        assert needle in message, message
    return message


def test_error_missing_file(tmp_path):
    _expect_error(tmp_path / "nope.onnx", str(tmp_path / "nope.onnx"), "no such file")


def test_error_directory(tmp_path):
    _expect_error(tmp_path, str(tmp_path), "directory")


def test_error_unreadable_path(tmp_path):
    _expect_error(str(tmp_path / "bad\0name.onnx"), "bad")
    _expect_error(tmp_path / ("x" * 5000), "x" * 100)


def test_error_empty_file(tmp_path):
    path = tmp_path / "empty.onnx"
    path.write_bytes(b"")
    _expect_error(path, str(path), "empty")
    _expect_error(b"", "empty")


def test_error_truncated_file(tmp_path, small_model):
    data = small_model.SerializeToString()
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[: len(data) // 2])
    _expect_error(path, str(path))
    for cut in range(1, len(data)):  # every prefix is rejected, at field boundaries too
        _expect_error(data[:cut])


@pytest.mark.parametrize(
    "content",
    [
        b"hello world, this is a text file\n",
        b"ir_version: 8\ngraph { }\n",
        bytes(random.Random(1).randrange(256) for _ in range(4096)),
        b"\x00" * 64,
        b"\x08\x07",  # an ir_version and nothing else
        None,  # a serialized TensorProto
    ],
    ids=["text", "textproto", "random", "zeros", "ir_version_only", "tensor"],
)
def test_error_not_a_model(tmp_path, content):
    if content is None:
        content = helper.make_tensor("w", onnx.TensorProto.FLOAT, [2, 3], [0.0] * 6).SerializeToString()
    path = tmp_path / "junk.onnx"
    path.write_bytes(content)
    _expect_error(path, str(path))


def test_random_corruption_never_leaks_protobuf_errors(small_model):
    data = bytearray(small_model.SerializeToString())
    rng = random.Random(7)
    for _ in range(500):
        corrupt = bytearray(data)
        for _ in range(rng.randrange(1, 4)):
            corrupt[rng.randrange(len(corrupt))] = rng.randrange(256)
        try:
            load_model(bytes(corrupt))
        except ModelLoadError:
            pass


@pytest.mark.parametrize("source", [None, 42, ["m.onnx"], "GraphProto"], ids=str)
def test_error_unsupported_source(source):
    if source == "GraphProto":
        source = onnx.GraphProto()
    with pytest.raises(ModelLoadError, match="unsupported model source"):
        load_model(source)


# --------------------------------------------------------------------------- compile_protos


def test_compile_protos_is_deterministic_and_committed():
    first, second = protos.compile_protos(), protos.compile_protos()
    assert first == second
    assert set(first) == {"opspec_ir_pb2.py", "opspec_ir_pb2.pyi"}
    assert first["opspec_ir_pb2.py"] == GENERATED.read_bytes(), "generated/opspec_ir_pb2.py is stale"
    assert first["opspec_ir_pb2.pyi"] == GENERATED.with_suffix(".pyi").read_bytes(), "the IR type stub is stale"


def _stub_names(body: list[ast.stmt], prefix: str = "") -> dict[str, set[str]]:
    """Each class of a stub (dotted path; "" for the module) -> the names it annotates or defines."""
    found: dict[str, set[str]] = {prefix: set()}
    for statement in body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            found[prefix].add(statement.target.id)
        elif isinstance(statement, ast.ClassDef) and not statement.name.startswith("_"):
            found[prefix].add(statement.name)
            found.update(_stub_names(statement.body, f"{prefix}.{statement.name}".lstrip(".")))
    return found


def _built_names(messages: list[Descriptor], enums: list[EnumDescriptor], prefix: str = "") -> dict[str, set[str]]:
    """The same map for what the IR module builds at import time from its descriptor."""
    found = {prefix: {e.name for e in enums} | {v.name for e in enums for v in e.values}}
    for message in messages:
        found[prefix].add(message.name)
        path = f"{prefix}.{message.name}".lstrip(".")
        found.update(_built_names(list(message.nested_types), list(message.enum_types), path))
        found[path] |= {field.name for field in message.fields}
    return found


def test_the_type_stub_states_every_message_field_and_enum_the_module_builds():
    stub = _stub_names(ast.parse(GENERATED.with_suffix(".pyi").read_text()).body)
    built = _built_names(list(ir.DESCRIPTOR.message_types_by_name.values()),
                         list(ir.DESCRIPTOR.enum_types_by_name.values()))
    assert {path: names - {"DESCRIPTOR"} for path, names in stub.items()} == built
    assert ir.TensorProto.DataLocation.EXTERNAL == 1 and ir.IR_VERSION >= 10  # read through the stub's types


def test_compile_protos_reports_errors(tmp_path):
    bad = tmp_path / "bad.proto"
    bad.write_text('syntax = "proto2";\nmessage M { optional Nope x = 1; }\n')
    with pytest.raises(protos.ProtoCompileError):
        protos.compile_protos(bad)


def test_compile_protos_without_grpc_tools(monkeypatch):
    real_import = protos.importlib.import_module

    def fake_import(name, *args):
        if name.startswith("grpc_tools"):
            raise ImportError(name)
        return real_import(name, *args)

    monkeypatch.setattr(protos.importlib, "import_module", fake_import)
    with pytest.raises(protos.ProtoCompilerMissing, match="grpc"):
        protos.compile_protos()


def _value_infos(*names: str) -> bytes:
    """Serialized ``GraphProto`` fields: a ``value_info`` entry per name."""
    graph = onnx.GraphProto()
    graph.value_info.extend(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, ["N", 300]) for name in names)
    return graph.SerializeToString()


@pytest.mark.parametrize("extras", ["none", "functions", "long graph"])
def test_graph_fields_are_written_as_a_merge_would_add_them(tmp_path, small_model, extras):
    from opspec.runtime.ir.model_io import with_graph_fields

    model = onnx.ModelProto()
    model.CopyFrom(small_model)
    if extras == "functions":  # fields after the graph, and metadata
        model.functions.append(helper.make_function("local", "f", ["x"], ["y"],
                                                    [helper.make_node("Relu", ["x"], ["y"])],
                                                    [helper.make_opsetid("", 17)]))
        helper.set_model_props(model, {"key": "value"})
    elif extras == "long graph":  # a graph and fields whose lengths take several varint bytes
        model.graph.node.extend(helper.make_node("Relu", ["X"], [f"r{i}"]) for i in range(3000))
        model.graph.value_info.append(helper.make_tensor_value_info("old", onnx.TensorProto.FLOAT, [1]))
    fields = _value_infos(*(f"r{i}" for i in range(0, 3000, 7)))
    expected = onnx.ModelProto()
    expected.CopyFrom(model)
    expected.graph.MergeFromString(fields)
    written = b"".join(with_graph_fields(model.SerializeToString(), fields))
    assert written == expected.SerializeToString()
    save_model(model, tmp_path / "m.onnx", graph_fields=fields)
    assert (tmp_path / "m.onnx").read_bytes() == written
    assert onnx.load(str(tmp_path / "m.onnx")) == expected


def test_graph_fields_need_a_graph():
    from opspec.runtime.ir.model_io import with_graph_fields

    model = helper.make_model(helper.make_graph([], "g", [], []), opset_imports=[helper.make_opsetid("", 17)])
    model.ClearField("graph")
    with pytest.raises(ValueError):
        with_graph_fields(model.SerializeToString(), _value_infos("a"))


def test_varints_round_trip_and_a_cut_one_is_refused():
    import pytest

    from opspec.runtime.ir.varint import TruncatedVarint, encode_varint, read_varint

    for value in (0, 1, 127, 128, 16_383, 16_384, 2**21, 2**63 - 1):
        encoded = encode_varint(value)
        assert read_varint(b"\x00" + encoded, 1) == (value, 1 + len(encoded))
    assert encode_varint(-1) == b"\xff" * 9 + b"\x01"  # an int64 -1, as protobuf writes it
    for cut in (b"\x80", b"\xff" * 11):
        with pytest.raises(TruncatedVarint):
            read_varint(cut, 0)
