"""Code written against onnx.defs and onnx.shape_inference runs unchanged on opspec."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

import opspec
from opspec.generated import opspec_ir_pb2 as ir

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def _run(*args: str) -> str:
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_one_tool_prints_the_same_on_onnx_and_on_opspec():
    tool = str(HERE / "dropin_tool.py")
    theirs, ours = _run(tool, "onnx"), _run(tool, "opspec")
    assert ours.splitlines() == theirs.splitlines()
    assert "infer_shapes_path:" in ours  # the tool ran to its end


def test_attribute_defaults_are_attribute_protos_as_onnx_gives_them(onnx_slice):
    for (name, version), theirs in onnx_slice.items():
        ours = opspec.get_schema(name, version)
        for attr_name, attribute in ours.attributes.items():
            mine, reference = attribute.default_value, theirs.attributes[attr_name].default_value
            assert (mine.name, mine.type) == (reference.name, reference.type), (name, version, attr_name)
            # opspec's message has onnx's fields and wire format, so onnx's helper reads it: the point here
            assert helper.get_attribute_value(mine) == helper.get_attribute_value(reference)  # type: ignore[arg-type]


def test_the_plain_default_stays_available():
    attributes = opspec.get_schema("Conv", 11).attributes
    assert attributes["auto_pad"].default == "NOTSET"
    assert attributes["auto_pad"].default_value.s == b"NOTSET"
    assert attributes["kernel_shape"].default is None
    assert not attributes["kernel_shape"].default_value.HasField("type")


def test_lookups_import_neither_protobuf_nor_onnx():
    code = ("import sys, opspec; s = opspec.get_schema('Conv'); s.attributes['group'].default; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('google', 'onnx', 'hashlib')))")
    assert _run("-c", code).strip() == "[]"


def test_errors_are_onnx_errors_when_onnx_is_imported_first():
    code = ("import onnx, onnx.defs, onnx.shape_inference, opspec; "
            "print(issubclass(opspec.SchemaError, onnx.defs.SchemaError), "
            "issubclass(opspec.InferenceError, onnx.shape_inference.InferenceError), "
            "issubclass(opspec.SchemaError, LookupError))")
    assert _run("-c", code).split() == ["True", "True", "True"]


def test_file_and_line_point_at_the_version_in_the_yaml():
    for name, version in (("Conv", 11), ("Clip", 6), ("Add", 14)):
        schema = opspec.get_schema(name, version)
        assert not Path(schema.file).is_absolute()
        line = (REPO / schema.file).read_text().splitlines()[schema.line - 1]
        assert line.strip() == f"{schema.since_version}:", (schema.file, schema.line, line)


def test_onnx_call_forms_of_has_and_get_schema():
    assert opspec.has("Relu") and opspec.has("Relu", 6) and opspec.has("Relu", 6, "")
    assert not opspec.has("Relu", 0) and not opspec.has("NoSuchOp")
    assert opspec.get_schema("Relu", "ai.onnx") is opspec.get_schema("Relu")


def test_function_ops_are_onnxs_for_the_ops_both_have():
    import onnx.defs

    theirs = {(s.domain, s.name): s.since_version for s in onnx.defs.get_function_ops() if opspec.has(s.name, s.domain)}
    assert {(s.domain, s.name): s.since_version for s in opspec.get_function_ops()} == theirs


def test_infer_shapes_path_writes_back_in_place_without_an_output_path(tmp_path):
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), path)
    opspec.infer_shapes_path(path)  # returns None, as onnx's does
    shape = onnx.load(path).graph.output[0].type.tensor_type.shape
    assert [d.dim_param or d.dim_value for d in shape.dim] == ["N", 2]


def test_infer_node_outputs_answers_in_the_callers_message_family():
    node = ir.NodeProto(op_type="Relu", input=["x"], output=["y"])
    x = ir.TypeProto()
    x.tensor_type.elem_type = TensorProto.FLOAT
    x.tensor_type.shape.dim.add(dim_param="N")
    found = opspec.infer_node_outputs(opspec.get_schema("Relu", 14), node, {"x": x})
    assert isinstance(found["y"], ir.TypeProto) and found["y"] == x


def test_infer_node_outputs_raises_inference_error_on_a_bad_node():
    node = helper.make_node("MatMul", ["a", "b"], ["c"])
    types = {"a": helper.make_tensor_type_proto(TensorProto.FLOAT, [2, 3]),
             "b": helper.make_tensor_type_proto(TensorProto.FLOAT, [4, 5])}
    with pytest.raises(opspec.InferenceError):
        opspec.infer_node_outputs(opspec.get_schema("MatMul", 13), node, types)


#: Names onnx's modules import for themselves rather than offer as API.
_PLUMBING = {"C", "onnx", "os", "TYPE_CHECKING", "annotations", "AttributeProto", "FunctionProto", "ModelProto",
             "TypeProto", "IR_VERSION"}


def test_the_readme_lists_every_onnx_name_opspec_lacks():
    import onnx.defs
    import onnx.shape_inference

    from opspec.runtime.schema import OpSchema

    readme = (REPO / "README.md").read_text()
    table = readme[readme.index("## Differences from onnx"):readme.index("## Layout")]
    public = lambda thing: {n for n in dir(thing) if not n.startswith("_")}  # noqa: E731
    missing = (public(onnx.defs.OpSchema) - public(OpSchema)) | (
        (public(onnx.defs) | public(onnx.shape_inference)) - set(dir(opspec)) - _PLUMBING)
    unlisted = sorted(name for name in missing if f"`{name}`" not in table and f"`{name}(" not in table)
    assert not unlisted, f"README's differences table does not mention {unlisted}"


def test_generated_protobuf_code_pins_no_protobuf_release():
    """The IR module builds its classes with APIs every protobuf from 4.25 has, and checks no version.

    ``make compat DEPS=floors`` runs it on protobuf 4.25.8 itself; this guards the module's text.
    """
    import ast
    from pathlib import Path

    import opspec.generated

    source = (Path(opspec.generated.__file__).parent / "opspec_ir_pb2.py").read_text()
    imported = {(node.module, alias.name) for node in ast.walk(ast.parse(source))
                if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert imported == {("google.protobuf", "descriptor_pool"), ("google.protobuf.internal", "builder")}
    assert "runtime_version" not in source
