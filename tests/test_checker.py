"""``opspec check`` held against ``onnx.checker.check_model(full_check=True)``: every kind of
model onnx rejects is rejected with its own code, malformed models made from a seed are never
accepted where onnx rejects them (except the committed list of onnx's overstrict cases), and
real exported models are accepted wherever onnx accepts them.

``OPSPEC_CHECKER_CASES`` sets the number of malformed models (default 150), and
``OPSPEC_CHECKER_SEED`` the seed they are made from, to hold the parity on models never seen.
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any, Callable

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import AttributeProto, TensorProto, checker, helper  # noqa: E402

from malformed_models import malformed_models  # noqa: E402
from opspec.cli import main  # noqa: E402
from opspec.runtime.checker import check_model  # noqa: E402
from opspec.runtime.checker.codes import CODES, node_code  # noqa: E402
from opspec.runtime.checker.onnx_differences import (  # noqa: E402
    ONNX_LAX, ONNX_OVERSTRICT, ONNXRUNTIME_LAX, excused, lax_kind)
from opspec.runtime.ir import ModelLoadError, load_model  # noqa: E402

CASES = int(os.environ.get("OPSPEC_CHECKER_CASES", "150"))
# not used by any other generator of the suite; OPSPEC_CHECKER_SEED runs the parity on another
SEED = int(os.environ.get("OPSPEC_CHECKER_SEED", "20261126"))


def _model(**changes):
    graph = helper.make_graph([helper.make_node("Add", ["x", "c"], ["y"], name="add")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
                              [helper.make_tensor("c", TensorProto.FLOAT, [2], [1.0, 2.0])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _clear_data(tensor):
    for field in ("float_data", "int32_data", "int64_data", "raw_data", "double_data", "uint64_data", "string_data"):
        tensor.ClearField(field)


def _wrong_field(m):
    _clear_data(m.graph.initializer[0])
    m.graph.initializer[0].int64_data.extend([1, 2])


def _external_outside(m):
    tensor = m.graph.initializer[0]
    _clear_data(tensor)
    tensor.data_location = TensorProto.EXTERNAL
    entry = tensor.external_data.add()
    entry.key, entry.value = "location", "../../etc/passwd"


def _sparse_out_of_range(m):
    values = helper.make_tensor("s", TensorProto.FLOAT, [2], [1.0, 2.0])
    indices = helper.make_tensor("si", TensorProto.INT64, [2], [0, 5])
    m.graph.sparse_initializer.append(helper.make_sparse_tensor(values, indices, [4]))


def _attribute_twice(m):
    node = m.graph.node[0]
    node.op_type = "Softmax"
    node.input.pop()
    node.attribute.extend([helper.make_attribute("axis", 0), helper.make_attribute("axis", 0)])


def _attribute_field_mismatch(m):
    node = m.graph.node[0]
    node.op_type = "Softmax"
    node.input.pop()
    attribute = node.attribute.add()
    attribute.name, attribute.type, attribute.f = "axis", 2, 1.0


def _raw_data_of_wrong_length(m):
    m.graph.initializer[0].raw_data = b"123"
    m.graph.initializer[0].ClearField("float_data")


ONNX_REJECTS = {
    "ir-version": lambda m: m.__setattr__("ir_version", 15),
    "opset-version": lambda m: setattr(m.opset_import[0], "version", 0),
    "tensor-data-field": _wrong_field,
    "tensor-data-count": _raw_data_of_wrong_length,
    "tensor-data-type": lambda m: setattr(m.graph.initializer[0], "data_type", 0),
    "tensor-dims": lambda m: m.graph.initializer[0].dims.__setitem__(0, -1),
    "value-info": lambda m: m.graph.input[0].type.Clear(),
    "graph-name": lambda m: setattr(m.graph, "name", ""),
    "attribute-duplicate": _attribute_twice,
    "attribute-type": _attribute_field_mismatch,
    "sparse-tensor": _sparse_out_of_range,
    "external-data": _external_outside,
    "declared-conflict": lambda m: setattr(m.graph.output[0].type.tensor_type, "elem_type", TensorProto.INT64),
}


@pytest.mark.parametrize("code", sorted(ONNX_REJECTS))
def test_each_kind_onnx_rejects_is_one_located_problem_with_its_code(code, tmp_path, capsys):
    model = _model()
    ONNX_REJECTS[code](model)
    with pytest.raises(Exception):  # noqa: B017 - onnx raises ValidationError or InferenceError
        checker.check_model(model, full_check=True)
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    assert main(["check", str(path), "--format", "json"]) == 1
    problems = json.loads(capsys.readouterr().out)["problems"]
    assert code in [problem["code"] for problem in problems], problems
    assert all(problem["code"] in CODES for problem in problems)


def test_every_problem_is_reported_at_once():
    model = _model()
    for code in ("ir-version", "tensor-data-field", "graph-name", "declared-conflict"):
        ONNX_REJECTS[code](model)
    codes = {problem.code if hasattr(problem, "code") else "node" for problem in
             check_model(load_model(model.SerializeToString()).model).problems}
    assert {"ir-version", "tensor-data-field", "graph-name"} <= codes


def test_external_data_is_judged_without_reading_it(tmp_path):
    model = _model()
    _external_outside(model)
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    (problem,) = [p for p in check_model(load_model(str(path)).model, str(path)).problems]
    assert problem.code == "external-data" and "leaves the model's folder; not read" in problem.message


def test_the_data_count_and_packing_of_each_storage_field():
    from opspec.runtime.checker.tensors import check_tensor

    def problems(tensor):
        found = []
        check_tensor(tensor, lambda message, code: found.append(code), lambda *_: None)
        return found

    assert problems(helper.make_tensor("t", TensorProto.INT4, [3], [1, 2, 3])) == []  # two values per int32
    assert problems(helper.make_tensor("t", TensorProto.COMPLEX64, [1], [1 + 2j])) == []  # type: ignore[list-item]  # stubs: reals only  # two floats per value
    short = helper.make_tensor("t", TensorProto.FLOAT, [2], [1.0, 2.0])
    del short.float_data[-1]
    assert problems(short) == ["tensor-data-count"]
    empty = helper.make_tensor("t", TensorProto.FLOAT, [0], [])
    empty.raw_data = b""
    assert problems(empty) == []  # an empty raw_data is no data
    strings = helper.make_tensor("t", TensorProto.STRING, [1], [b"a"])  # type: ignore[list-item]  # stubs: numbers only
    _clear_data(strings)
    strings.raw_data = b"a"
    assert problems(strings) == ["tensor-data-field"]


def _onnx_verdict(model_or_path) -> str:
    try:
        checker.check_model(model_or_path, full_check=True)
    except Exception as error:  # noqa: BLE001 - onnx's ValidationError or InferenceError
        return str(error).splitlines()[0] or type(error).__name__
    return ""


def test_malformed_models_onnx_rejects_are_rejected(tmp_path):
    from conformance.harness import cases

    models = [case.model for case in cases()]
    path = tmp_path / "m.onnx"
    missed, rejected = [], 0
    for case, model in malformed_models(SEED, CASES, models):
        path.write_bytes(model.SerializeToString())
        verdict = _onnx_verdict(str(path))
        try:
            problems = check_model(load_model(str(path)).model, str(path)).problems
        except ModelLoadError:
            problems = ["cannot be read"]
        if verdict and not problems and excused(verdict) is None:
            missed.append((case, verdict))
        rejected += bool(verdict)
    assert rejected > CASES // 2  # the generator makes models onnx rejects
    assert missed == []


def _overstrict_models():
    sys.path.insert(0, os.path.dirname(__file__))
    import exporter_models

    no_shape = exporter_models.detection_head()  # its outputs have no shape, as exporters write them
    no_shape.ir_version = 10  # one onnxruntime reads
    simplified = helper.make_model(
        helper.make_graph([helper.make_node("SimplifiedLayerNormalization", ["x", "s"], ["y"], axis=-1)], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4]),
                           helper.make_tensor_value_info("s", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])]),
        opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    normalized = helper.make_model(
        helper.make_graph([helper.make_node("MeanVarianceNormalization", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4, 5])]),
        opset_imports=[helper.make_opsetid("", 17)], ir_version=10)
    return [no_shape, simplified, normalized]


@pytest.mark.parametrize("index", range(len(ONNX_OVERSTRICT)))
def test_onnx_overstrict_cases_run_in_onnxruntime_and_pass_opspec(index):
    ort = pytest.importorskip("onnxruntime")
    case, model = ONNX_OVERSTRICT[index], _overstrict_models()[index]
    verdict = _onnx_verdict(model)
    assert excused(verdict) is case, verdict
    assert check_model(load_model(model.SerializeToString()).model).problems == []
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {}
    for value in session.get_inputs():
        shape = [dim if isinstance(dim, int) else 2 for dim in value.shape]
        kind = np.int64 if "int64" in value.type else np.float32
        feeds[value.name] = np.ones(shape, dtype=kind)
    session.run(None, feeds)


def test_real_exported_models_pass_where_onnx_passes():
    import exporter_models
    import models

    builders: list[Callable[[], Any]] = [exporter_models.unet, exporter_models.detection_head, exporter_models.quantized_matmul,
                exporter_models.bidirectional_lstm, exporter_models.rotary_attention, exporter_models.fused_attention,
                exporter_models.vit_embedding, exporter_models.fused_attention_4d,
                exporter_models.interpolate_pyramid, models.small_cnn, models.transformer]
    for build in builders:
        model = build()
        verdict = _onnx_verdict(model)
        problems = check_model(load_model(model.SerializeToString()).model).problems
        assert verdict == "" or excused(verdict) is not None, (build.__name__, verdict)
        assert problems == [], (build.__name__, problems)


def test_every_code_is_documented_in_the_readme():
    readme = open(os.path.join(os.path.dirname(__file__), "..", "README.md"), encoding="utf-8").read()
    assert [code for code in CODES if f"`{code}`" not in readme] == []
    assert [case.name for case in ONNX_OVERSTRICT if case.name not in readme] == []
    assert [case.name for case in ONNX_LAX if f"| {case.name} |" not in readme] == []
    assert [limit for limit in ONNXRUNTIME_LAX if f"| {limit.op} | `{limit.attribute}` |" not in readme] == []


# onnx passes a last value omitted from Concat, which onnxruntime fails to run
@pytest.mark.parametrize("op,inputs,onnx_rejects", [("Sum", ["", "x"], True), ("Concat", ["", "x"], True),
                                                    ("Max", [""], True), ("Concat", ["x", ""], False)])
def test_an_omitted_value_of_a_variadic_input_is_rejected(op, inputs, onnx_rejects):
    attributes: dict[str, Any] = {"axis": 0} if op == "Concat" else {}
    node = helper.make_node(op, inputs, ["y"], name="n", **attributes)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    assert bool(_onnx_verdict(model)) == onnx_rejects
    (problem,) = check_model(load_model(model.SerializeToString()).model).problems
    assert problem.message.startswith(f"required input {inputs.index('')} (") and problem.name == "n"


def _value(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _one_node_model(node, inputs, outputs, initializers=(), opsets=(("", 17),)):
    graph = helper.make_graph([node], "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid(domain, version) for domain, version in opsets])


def _identity(x_elem=TensorProto.FLOAT, x_shape=(2,), y_elem=TensorProto.FLOAT, y_shape=(2,), initializers=()):
    return _one_node_model(helper.make_node("Identity", ["x"], ["y"]), [_value("x", x_elem, x_shape)],
                           [_value("y", y_elem, y_shape)], initializers)


def _label_encoder(version, **attributes):
    node = helper.make_node("LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml", **attributes)
    return _one_node_model(node, [_value("x", TensorProto.STRING, [2])], [_value("y", TensorProto.INT64, [2])],
                           opsets=(("", 17), ("ai.onnx.ml", version)))


def _emptied_input_type(case):
    def build():
        model = _identity()
        model.graph.input[0].type.Clear()
        getattr(model.graph.input[0].type, case).SetInParent()
        return model
    return build


def _opaque_value_info():
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["t"]), helper.make_node("Relu", ["t"], ["y"])], "g",
                              [_value("x", TensorProto.FLOAT, [2])], [_value("y", TensorProto.FLOAT, [2])])
    declared = graph.value_info.add()
    declared.name = "t"
    declared.type.opaque_type.name = "blob"
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _loop_with_opaque_body_input():
    body = helper.make_graph([helper.make_node("Identity", ["c"], ["c_out"]), helper.make_node("Relu", ["v"], ["v_out"])],
                             "body", [_value("i", TensorProto.INT64, []), _value("c", TensorProto.BOOL, []),
                                      _value("v", TensorProto.FLOAT, [2])],
                             [_value("c_out", TensorProto.BOOL, []), _value("v_out", TensorProto.FLOAT, [2])])
    body.input[2].type.Clear()
    body.input[2].type.opaque_type.SetInParent()
    return _one_node_model(helper.make_node("Loop", ["n", "", "x"], ["y"], body=body),
                           [_value("n", TensorProto.INT64, []), _value("x", TensorProto.FLOAT, [2])],
                           [_value("y", TensorProto.FLOAT, [2])])


def _empty_raw_data_beside_values():
    model = _one_node_model(helper.make_node("Resize", ["x", "", "s"], ["y"]),
                            [_value("x", TensorProto.FLOAT, [1, 1, 2, 2])], [_value("y", TensorProto.FLOAT, [1, 1, 4, 4])],
                            [helper.make_tensor("s", TensorProto.FLOAT, [4], [1.0, 1.0, 2.0, 2.0])])
    model.graph.initializer[0].raw_data = b""  # set, but empty: onnx reads it, and finds no data
    return model


def _constant_of_shape_value_typed_floats():
    node = helper.make_node("ConstantOfShape", ["s"], ["y"], value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0]))
    node.attribute[0].type = AttributeProto.FLOATS
    return _one_node_model(node, [_value("s", TensorProto.INT64, [2])], [_value("y", TensorProto.FLOAT, [None, None])])


def _metadata_key_twice():
    model = _identity()
    helper.set_model_props(model, {"author": "a"})
    model.metadata_props.add(key="author", value="b")
    return model


def _model_without_graph():
    model = _identity()  # a library of functions reads as a model; one that also lacks its graph is none
    model.functions.append(helper.make_function("local", "f", ["x"], ["y"], [helper.make_node("Relu", ["x"], ["y"])],
                                                [helper.make_opsetid("", 17)]))
    model.ClearField("graph")
    return model


def _constant_without_its_tensor():
    node = helper.make_node("Constant", [], ["y"], value=helper.make_tensor("v", TensorProto.FLOAT, [2], [1.0, 2.0]))
    node.attribute[0].ClearField("t")
    return _one_node_model(node, [], [_value("y", TensorProto.FLOAT, [2])])


def _function_twice():
    model = _identity()
    function = helper.make_function("local", "f", ["x"], ["y"], [helper.make_node("Relu", ["x"], ["y"])],
                                    [helper.make_opsetid("", 17)])
    model.functions.extend([function, function])
    return model


def _nameless_function():
    model = _identity()
    model.functions.add()
    return model


#: Malformed models another generator found onnx rejecting and opspec accepting: each is
#: refused now, with the code it is refused by.
ONNX_REJECTS_FOUND = {
    "input elem_type 0": (lambda: _identity(x_elem=0), "value-info"),
    "input elem_type -1": (lambda: _identity(x_elem=-1), "value-info"),
    "input elem_type 2**31-1": (lambda: _identity(x_elem=2**31 - 1), "value-info"),
    "output elem_type -1": (lambda: _identity(y_elem=-1), "value-info"),
    "output elem_type 2**31-1": (lambda: _identity(y_elem=2**31 - 1), "value-info"),
    "int64 initializer of a string input": (lambda: _identity(
        TensorProto.STRING, (2,), TensorProto.STRING, (2,), [helper.make_tensor("x", TensorProto.INT64, [2], [1, 2])]),
        "declared-conflict"),
    "initializer dims against its input's": (lambda: _identity(
        initializers=[helper.make_tensor("x", TensorProto.FLOAT, [3], [1, 2, 3])]), "declared-conflict"),
    "a negative declared dim inference proves": (lambda: _identity(y_shape=(-1,)), "declared-conflict"),
    "an opaque value_info of a tensor": (_opaque_value_info, "declared-conflict"),
    "an empty sequence type": (_emptied_input_type("sequence_type"), "value-info"),
    "an empty map type": (_emptied_input_type("map_type"), "value-info"),
    "an empty optional type": (_emptied_input_type("optional_type"), "value-info"),
    "an empty opaque type": (_emptied_input_type("opaque_type"), "value-info"),
    "a function without name or domain": (_nameless_function, "function-form"),
    "SplitToSequence lengths short of the axis": (lambda: _one_node_model(
        helper.make_node("SplitToSequence", ["x", "s"], ["y"]), [_value("x", TensorProto.FLOAT, [3, 2])],
        [helper.make_tensor_sequence_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor("s", TensorProto.INT64, [2], [1, 1])]), "inference"),
    "SplitToSequence lengths beyond the axis": (lambda: _one_node_model(
        helper.make_node("SplitToSequence", ["x", "s"], ["y"], axis=1), [_value("x", TensorProto.FLOAT, [3, 2])],
        [helper.make_tensor_sequence_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor("s", TensorProto.INT64, [1], [4])]), "inference"),
    "Dropout ratio of shape (1,)": (lambda: _one_node_model(
        helper.make_node("Dropout", ["x", "r"], ["y"]), [_value("x", TensorProto.FLOAT, [2]),
                                                         _value("r", TensorProto.FLOAT, [1])],
        [_value("y", TensorProto.FLOAT, [2])]), "inference"),
    "Dropout training_mode of shape (2,)": (lambda: _one_node_model(
        helper.make_node("Dropout", ["x", "r", "t"], ["y"]), [_value("x", TensorProto.FLOAT, [2]),
                                                              _value("r", TensorProto.FLOAT, []),
                                                              _value("t", TensorProto.BOOL, [2])],
        [_value("y", TensorProto.FLOAT, [2])]), "inference"),
    "LabelEncoder 2 without keys": (lambda: _label_encoder(2, values_int64s=[1]), "inference"),
    "LabelEncoder 2 with two keys attributes": (lambda: _label_encoder(
        2, keys_strings=["a"], keys_int64s=[1], values_int64s=[1]), "inference"),
    "LabelEncoder 3 without values": (lambda: _label_encoder(3, keys_strings=["a"]), "inference"),
    "LabelEncoder 4 with keys_tensor and keys_strings": (lambda: _label_encoder(
        4, keys_strings=["a"], keys_tensor=helper.make_tensor("k", TensorProto.STRING, [1], [b"a"]),  # type: ignore[list-item]
        values_int64s=[1]), "inference"),
    "LabelEncoder 4 with two values attributes": (lambda: _label_encoder(
        4, keys_strings=["a"], values_int64s=[1], values_tensor=helper.make_tensor("v", TensorProto.INT64, [1], [1])),
        "inference"),
    "GatherND declared against inferred": (lambda: _one_node_model(
        helper.make_node("GatherND", ["d", "i"], ["y"], batch_dims=1),
        [_value("d", TensorProto.FLOAT, [2, 3, 4]), _value("i", TensorProto.INT64, [2, 5, 1])],
        [_value("y", TensorProto.FLOAT, [2, 5, 3])]), "declared-conflict"),
    "a negative input dim landing on a declared length": (lambda: _one_node_model(
        helper.make_node("Floor", ["x"], ["y"]), [_value("x", TensorProto.FLOAT, [3, -2**31])],
        [_value("y", TensorProto.FLOAT, [3, 4])]), "declared-conflict"),
    "a length computed from a negative input dim against a declared one": (lambda: _one_node_model(
        helper.make_node("Split", ["x"], ["a", "b", "c"], num_outputs=3), [_value("x", TensorProto.FLOAT, [-2**31])],
        [_value(name, TensorProto.FLOAT, [2]) for name in "abc"], opsets=(("", 18),)), "declared-conflict"),
    "a negative input dim meeting another input's length": (lambda: _one_node_model(
        helper.make_node("Gemm", ["a", "b"], ["y"]),
        [_value("a", TensorProto.FLOAT, [2, 3]), _value("b", TensorProto.FLOAT, [-2**31, 4])],
        [_value("y", TensorProto.FLOAT, [2, 4])]), "declared-conflict"),
    "an empty raw_data beside the values": (_empty_raw_data_beside_values, "tensor-data-field"),
    "ConstantOfShape value attribute typed as floats": (_constant_of_shape_value_typed_floats, "attribute-type"),
    "a metadata key given twice": (_metadata_key_twice, "metadata"),
    "a node naming one output twice": (lambda: _one_node_model(
        helper.make_node("TopK", ["x", "k"], ["v", "v"]), [_value("x", TensorProto.FLOAT, [4])],
        [_value("v", TensorProto.FLOAT, [2])], [helper.make_tensor("k", TensorProto.INT64, [1], [2])]),
        "duplicate-name"),
    "a tensor attribute holding no tensor": (_constant_without_its_tensor, "attribute-form"),
    "a function defined twice": (_function_twice, "function-form"),
    "SoftmaxCrossEntropyLoss labels against the scores' batch": (lambda: _one_node_model(
        helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t"], ["y"], reduction="none"),
        [_value("x", TensorProto.FLOAT, [3, 5]), _value("t", TensorProto.INT64, [0])],
        [_value("y", TensorProto.FLOAT, [3])]), "inference"),
    "a model without a graph": (_model_without_graph, "graph-structure"),
    "NegativeLogLikelihoodLoss weight of rank 2": (lambda: _one_node_model(
        helper.make_node("NegativeLogLikelihoodLoss", ["x", "t", "w"], ["y"]),
        [_value("x", TensorProto.FLOAT, [2, 3]), _value("t", TensorProto.INT64, [2]),
         _value("w", TensorProto.FLOAT, [3, 1])], [_value("y", TensorProto.FLOAT, [])]), "inference"),
    "Resize sizes of rank 2": (lambda: _one_node_model(
        helper.make_node("Resize", ["x", "", "", "s"], ["y"]),
        [_value("x", TensorProto.FLOAT, [1, 1, 2, 2]), _value("s", TensorProto.INT64, [4, 1])],
        [_value("y", TensorProto.FLOAT, [None] * 4)]), "inference"),
    "ConstantOfShape value of rank 0": (lambda: _one_node_model(
        helper.make_node("ConstantOfShape", ["s"], ["y"], value=helper.make_tensor("v", TensorProto.FLOAT, [], [1.0])),
        [_value("s", TensorProto.INT64, [2])], [_value("y", TensorProto.FLOAT, [None, None])]), "inference"),
    "Resize by a negative scale": (lambda: _one_node_model(
        helper.make_node("Resize", ["x", "", "s"], ["y"]), [_value("x", TensorProto.FLOAT, [1, 1, 2, 2])],
        [_value("y", TensorProto.FLOAT, [1, 1, 4, 4])],
        [helper.make_tensor("s", TensorProto.FLOAT, [4], [1.0, 1.0, -2.0, 2.0])]), "inference"),
    "a loop body input of an empty opaque type": (_loop_with_opaque_body_input, "value-info"),
    "MaxUnpool indices of rank 0": (lambda: _one_node_model(
        helper.make_node("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2, 2]),
        [_value("x", TensorProto.FLOAT, [1, 1, 2, 2]), _value("i", TensorProto.INT64, [])],
        [_value("y", TensorProto.FLOAT, None)], opsets=(("", 11),)), "inference"),
}


@pytest.mark.parametrize("case", sorted(ONNX_REJECTS_FOUND))
def test_models_onnx_rejects_found_by_another_generator_are_refused(case):
    build, code = ONNX_REJECTS_FOUND[case]
    model = build()
    assert _onnx_verdict(model)
    problems = check_model(load_model(model.SerializeToString()).model).problems
    codes = [problem.code if hasattr(problem, "code") else node_code(problem) for problem in problems]
    assert code in codes, problems
    assert not [problem for problem in problems if "inference failed (" in str(problem)]  # no rule broke on it


@pytest.mark.parametrize("version", [2, 3, 4])
def test_a_label_encoder_with_one_keys_and_one_values_attribute_passes(version):
    model = _label_encoder(version, keys_strings=["a", "b"], values_int64s=[1, 2])
    assert _onnx_verdict(model) == ""
    assert check_model(load_model(model.SerializeToString()).model).problems == []


def test_a_negative_input_dim_passes_where_it_lands_on_the_same_dim_or_a_symbol():
    for declared in ([3, -2**31], [3, "N"], None):
        model = _one_node_model(helper.make_node("Floor", ["x"], ["y"]), [_value("x", TensorProto.FLOAT, [3, -2**31])],
                                [_value("y", TensorProto.FLOAT, declared)])
        assert check_model(load_model(model.SerializeToString()).model).problems == [], declared


def test_a_number_attribute_left_at_its_default_passes():
    node = helper.make_node("Concat", ["x", "x"], ["y"], axis=0)
    node.attribute[0].ClearField("i")  # written by a serializer that omits zero values
    model = _one_node_model(node, [_value("x", TensorProto.FLOAT, [2])], [_value("y", TensorProto.FLOAT, [4])])
    assert _onnx_verdict(model) == ""
    assert check_model(load_model(model.SerializeToString()).model).problems == []


def test_split_lengths_that_add_up_pass():
    model = _one_node_model(helper.make_node("SplitToSequence", ["x", "s"], ["y"]),
                            [_value("x", TensorProto.FLOAT, [3, 2])],
                            [helper.make_tensor_sequence_value_info("y", TensorProto.FLOAT, None)],
                            [helper.make_tensor("s", TensorProto.INT64, [2], [1, 2])])
    assert _onnx_verdict(model) == ""
    assert check_model(load_model(model.SerializeToString()).model).problems == []


@pytest.mark.parametrize("imports", [(("", 17), ("", 17)), (("", 17), ("ai.onnx", 17))])
def test_the_same_opset_import_twice_passes_check_and_inference(imports):
    import opspec

    model = _one_node_model(helper.make_node("Relu", ["x"], ["y"]), [_value("x", TensorProto.FLOAT, [2])],
                            [_value("y", TensorProto.FLOAT, [2])], opsets=imports)
    assert _onnx_verdict(model) == ""
    checked = check_model(load_model(model.SerializeToString()).model)
    assert checked.problems == []
    assert [(note.code, note.message) for note in checked.notes] == [
        ("opset-import-repeated", "domain 'ai.onnx' is imported 2 times at version 17, which reads as one import")]
    assert opspec.infer(model).errors == []


def test_the_command_line_says_an_import_written_twice_in_a_note(tmp_path, capsys):
    model = _one_node_model(helper.make_node("Relu", ["x"], ["y"]), [_value("x", TensorProto.FLOAT, [2])],
                            [_value("y", TensorProto.FLOAT, [2])], opsets=(("", 17), ("", 17)))
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    assert main(["check", str(path)]) == 0
    assert "note: model: domain 'ai.onnx' is imported 2 times at version 17" in capsys.readouterr().out
    assert main(["check", str(path), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and [note["code"] for note in report["notes"]] == ["opset-import-repeated"]


def test_one_domain_imported_at_two_versions_is_refused_and_listed():
    import opspec

    model = _one_node_model(helper.make_node("Relu", ["x"], ["y"]), [_value("x", TensorProto.FLOAT, [2])],
                            [_value("y", TensorProto.FLOAT, [2])], opsets=(("", 17), ("ai.onnx", 13)))
    assert _onnx_verdict(model) == ""  # onnx lets it pass: one of the kinds listed in ONNX_LAX
    (problem,) = check_model(load_model(model.SerializeToString()).model).problems
    assert problem.code == "opset-import" and "at two versions (17 and 13)" in problem.message
    assert lax_kind(problem) is not None
    assert opspec.infer(model).errors == []  # inference takes one and reports nothing
