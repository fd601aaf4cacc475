"""``opspec check --runtime onnxruntime``: the prediction from kernel tables, held against onnxruntime."""
from __future__ import annotations

import json

import pytest
from onnx import TensorProto, helper, save

from opspec.cli import main


def _one_node(tmp_path, op, elem, inputs=2, opset=17, ir_version=8, domain="", name="m.onnx", **attributes):
    names = [f"x{i}" for i in range(inputs)]
    graph = helper.make_graph([helper.make_node(op, names, ["y"], domain=domain, **attributes)], "g",
                              [helper.make_tensor_value_info(n, elem, [2, 3]) for n in names],
                              [helper.make_tensor_value_info("y", elem, None)])
    imports = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = ir_version
    path = tmp_path / name
    save(model, str(path))
    return str(path)


def _verdict(path, capsys, *extra):
    status = main(["check", path, "--runtime", "onnxruntime", "--format", "json", *extra])
    return status, json.loads(capsys.readouterr().out)


def _onnxruntime_loads(path):
    onnxruntime = pytest.importorskip("onnxruntime")
    onnxruntime.set_default_logger_severity(3)
    try:
        onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    except Exception:  # noqa: BLE001 - a refusal is the answer
        return False
    return True


def test_bfloat16_add_has_no_cpu_kernel_and_the_problem_names_what_has(tmp_path, capsys):
    path = _one_node(tmp_path, "Add", TensorProto.BFLOAT16)
    status, document = _verdict(path, capsys)
    assert status == 1 and document["will_run"] is False
    (problem,) = document["problems"]
    assert problem["code"] == "no-kernel" and problem["op_type"] == "Add" and problem["version"] == 14
    assert problem["type_parameter"] == "T" and problem["found"] == "tensor(bfloat16)"
    assert "tensor(float)" in problem["kernel_types"]
    assert _onnxruntime_loads(path) is False


def test_float16_add_runs_through_inserted_casts(tmp_path, capsys):
    path = _one_node(tmp_path, "Add", TensorProto.FLOAT16)
    status, document = _verdict(path, capsys)
    assert status == 0 and document["will_run"] is True and document["problems"] == []
    assert _onnxruntime_loads(path) is True


def test_an_ir_version_beyond_the_runtime_is_reported(tmp_path, capsys):
    path = _one_node(tmp_path, "Add", TensorProto.FLOAT, ir_version=14)
    status, document = _verdict(path, capsys)
    assert document["will_run"] is False
    assert [problem["code"] for problem in document["problems"]] == ["runtime-version"]
    assert _onnxruntime_loads(path) is False


def test_an_op_with_a_function_body_and_no_kernel_is_expanded(tmp_path, capsys):
    from opspec.runtime.defs import INFERENCE
    from opspec.runtime.kernels import kernels_for_since

    schema = INFERENCE.get_schema("Mish", 18, "")
    assert not kernels_for_since("Mish", schema.since_version) and schema.has_function  # the case tested
    path = _one_node(tmp_path, "Mish", TensorProto.FLOAT, inputs=1, opset=18)
    status, document = _verdict(path, capsys)
    assert document["will_run"] is True
    assert _onnxruntime_loads(path) is True


def test_quiet_prints_nothing_for_a_model_that_runs_and_the_verdict_otherwise(tmp_path, capsys):
    good = _one_node(tmp_path, "Add", TensorProto.FLOAT, name="good.onnx")
    assert main(["check", good, "--runtime", "onnxruntime", "--quiet"]) == 0
    assert capsys.readouterr().out == ""
    bad = _one_node(tmp_path, "Add", TensorProto.BFLOAT16, name="bad.onnx")
    assert main(["check", bad, "--runtime", "onnxruntime", "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "no kernel for Add version 14" in out and "will not load or run" in out


def test_an_unknown_provider_is_a_usage_error(tmp_path, capsys):
    path = _one_node(tmp_path, "Add", TensorProto.FLOAT)
    assert main(["check", path, "--runtime", "onnxruntime:nosuch"]) == 2
    assert "no kernel table for provider 'nosuch'" in capsys.readouterr().err


@pytest.mark.parametrize("op, opset, runs", [
    ("LeakyRelu", 16, True),  # no double kernel, but a body written for opset 16: expanded
    ("HardSigmoid", 22, False),  # its body (opset 18) calls CastLike, changed since: not expanded
    ("Mish", 18, True),  # expanded, and so is the Softplus 1 of its body
    ("Mish", 22, False),  # expanded, but the Softplus 22 of its body has no double kernel and is not expanded
])
def test_function_bodies_are_expanded_as_onnxruntime_expands_them(tmp_path, capsys, op, opset, runs):
    path = _one_node(tmp_path, op, TensorProto.DOUBLE, inputs=1, opset=opset)
    _, document = _verdict(path, capsys)
    assert document["will_run"] is runs
    assert _onnxruntime_loads(path) is runs


def test_an_op_onnxruntime_has_no_schema_for_stops_the_model(tmp_path, capsys):
    graph = helper.make_graph([helper.make_node("Momentum", ["r", "t", "x", "g", "v"], ["x2", "v2"],
                                                domain="ai.onnx.preview.training", alpha=0.9, beta=0.1,
                                                mode="standard", norm_coefficient=0.0)], "g",
                              [helper.make_tensor_value_info("r", TensorProto.FLOAT, []),
                               helper.make_tensor_value_info("t", TensorProto.INT64, [])]
                              + [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3]) for n in "xgv"],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3]) for n in ("x2", "v2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("ai.onnx.preview.training", 1)])
    model.ir_version = 8
    path = str(tmp_path / "momentum.onnx")
    save(model, path)
    _, document = _verdict(path, capsys)
    assert document["will_run"] is False
    assert [problem["code"] for problem in document["problems"]] == ["unknown-to-runtime"]
    assert _onnxruntime_loads(path) is False


def test_a_type_no_kernel_takes_stops_even_a_node_that_needs_none(tmp_path, capsys):
    path = _one_node(tmp_path, "Identity", TensorProto.COMPLEX64, inputs=1)
    _, document = _verdict(path, capsys)
    assert document["will_run"] is False and document["problems"][0]["code"] == "no-kernel"
    assert _onnxruntime_loads(path) is False


def test_the_api_gives_the_same_verdict(tmp_path):
    import opspec.onnxruntime

    checked = opspec.onnxruntime.will_it_run(_one_node(tmp_path, "Add", TensorProto.BFLOAT16))
    assert checked.will_run is False and [p.code for p in checked.verdict.problems] == ["no-kernel"]
    assert opspec.onnxruntime.will_it_run(_one_node(tmp_path, "Add", TensorProto.FLOAT, name="f.onnx")).will_run


def _save(tmp_path, nodes, inputs, outputs, opset, name="m.onnx", domains=None):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, e, s) for n, e, s in inputs],
                              [helper.make_tensor_value_info(n, e, None) for n, e in outputs])
    imports = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in (domains or {}).items()]
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = 10
    path = str(tmp_path / name)
    save(model, path)
    return path


def _onnxruntime_runs(path):
    """Whether onnxruntime's CPU provider loads the model and runs it once on zeros."""
    import numpy
    from onnx import helper as onnx_helper, load

    onnxruntime = pytest.importorskip("onnxruntime")
    onnxruntime.set_default_logger_severity(4)
    feeds = {}
    for value in load(path).graph.input:
        tensor = value.type.tensor_type
        dtype = onnx_helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        feeds[value.name] = numpy.zeros([dim.dim_value for dim in tensor.shape.dim], dtype)
    try:
        onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)
    except Exception:  # noqa: BLE001 - a refusal is the answer
        return False
    return True


def _recurrent(tmp_path, op, elem, layout):
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    shape = [2, 1, 3] if layout else [1, 2, 3]
    node = helper.make_node(op, ["x", "w", "r"], ["", "h"], hidden_size=4, layout=layout)
    return _save(tmp_path, [node], [("x", elem, shape), ("w", elem, [1, 4 * gates, 3]), ("r", elem, [1, 4 * gates, 4])],
                 [("h", elem)], 22, f"{op}_{elem}_{layout}.onnx")


@pytest.mark.parametrize("op, elem, layout, runs", [
    ("RNN", TensorProto.FLOAT, 0, True),
    ("RNN", TensorProto.FLOAT, 1, False),  # batch-first: the kernel refuses when it is created
    ("GRU", TensorProto.FLOAT, 1, False),
    ("LSTM", TensorProto.FLOAT, 1, False),
    ("GRU", TensorProto.DOUBLE, 0, False),  # a double kernel is registered, and refuses to run
    ("LSTM", TensorProto.DOUBLE, 0, False),
    ("LSTM", TensorProto.FLOAT, 0, True),
])
def test_kernels_that_refuse_nodes_they_are_registered_for(tmp_path, capsys, op, elem, layout, runs):
    path = _recurrent(tmp_path, op, elem, layout)
    _, document = _verdict(path, capsys)
    assert document["will_run"] is runs
    assert runs or [problem["code"] for problem in document["problems"]] == ["kernel-refuses"]
    assert _onnxruntime_runs(path) is runs


def _unary(tmp_path, op, elem, opset, out_elem=None, **attributes):
    return _save(tmp_path, [helper.make_node(op, ["x"], ["y"], **attributes)], [("x", elem, [2, 3])],
                 [("y", out_elem or elem)], opset)


@pytest.mark.parametrize("case, runs", [
    # Gelu 20 has a float kernel only; its body built for tanh calls Tanh, Pow, Sum and Mul, all with double kernels
    (lambda tmp: _unary(tmp, "Gelu", TensorProto.DOUBLE, 20, approximate="tanh"), True),
    # the default form's body calls Erf, which has no double kernel
    (lambda tmp: _unary(tmp, "Gelu", TensorProto.DOUBLE, 20), False),
    # Bernoulli 22 has no kernel: its body calls RandomUniformLike 22, which has none either
    (lambda tmp: _unary(tmp, "Bernoulli", TensorProto.FLOAT, 22), False),
    (lambda tmp: _unary(tmp, "Bernoulli", TensorProto.FLOAT, 15), True),
    # CastLike to float4e2m1: no CastLike kernel takes it, and the body's Cast 25 has none for it
    (lambda tmp: _save(tmp, [helper.make_node("CastLike", ["x", "t"], ["y"])],
                       [("x", TensorProto.FLOAT, [2]), ("t", TensorProto.FLOAT4E2M1, [2])],
                       [("y", TensorProto.FLOAT4E2M1)], 25), False),
    # RMSNormalization in float16 with a float scale: the body's Mul gets both (a type clash)
    (lambda tmp: _save(tmp, [helper.make_node("RMSNormalization", ["x", "s"], ["y"])],
                       [("x", TensorProto.FLOAT16, [2, 3]), ("s", TensorProto.FLOAT, [3])],
                       [("y", TensorProto.FLOAT16)], 23), False),
    (lambda tmp: _save(tmp, [helper.make_node("RMSNormalization", ["x", "s"], ["y"])],
                       [("x", TensorProto.FLOAT16, [2, 3]), ("s", TensorProto.FLOAT16, [3])],
                       [("y", TensorProto.FLOAT16)], 23), True),
    # CenterCropPad's body takes the Max of the input's int64 shape and an int32 target shape: a clash
    (lambda tmp: _save(tmp, [helper.make_node("CenterCropPad", ["x", "s"], ["y"])],
                       [("x", TensorProto.FLOAT, [4, 4]), ("s", TensorProto.INT32, [2])],
                       [("y", TensorProto.FLOAT)], 18), False),
])
def test_bodies_built_per_node_are_followed_at_the_nodes_types(tmp_path, capsys, case, runs):
    path = case(tmp_path)
    _, document = _verdict(path, capsys)
    assert document["will_run"] is runs, document["problems"]
    assert _onnxruntime_runs(path) is runs


def test_a_known_domain_without_an_opset_import_is_imported_by_the_runtime(tmp_path, capsys):
    graph = helper.make_graph([helper.make_node("FastGelu", ["x"], ["y"], domain="com.microsoft")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])  # no com.microsoft import
    model.ir_version = 10
    path = str(tmp_path / "m.onnx")
    save(model, path)
    status, document = _verdict(path, capsys)
    assert document["will_run"] is True and any(p["code"] == "opset-import" for p in document["problems"])
    assert _onnxruntime_runs(path) is True


@pytest.mark.parametrize("op, elem, runs", [
    ("FastGelu", TensorProto.DOUBLE, True),  # a float kernel only; its body's Mul, Add and Tanh take double
    ("QuickGelu", TensorProto.DOUBLE, True),
    ("FastGelu", TensorProto.BFLOAT16, False),  # the body's Mul has no bfloat16 kernel
])
def test_onnxruntimes_own_built_bodies_call_default_domain_ops(tmp_path, capsys, op, elem, runs):
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"], domain="com.microsoft")], "g",
                              [helper.make_tensor_value_info("x", elem, [2])], [helper.make_tensor_value_info("y", elem, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 10
    path = str(tmp_path / "m.onnx")
    save(model, path)
    _, document = _verdict(path, capsys)
    assert document["will_run"] is runs
    assert _onnxruntime_loads(path) is runs


def _fused_gemm(tmp_path, **attributes):
    node = helper.make_node("FusedGemm", ["a", "b"], ["y"], domain="com.microsoft", **attributes)
    return _save(tmp_path, [node], [("a", TensorProto.FLOAT, [2, 3]), ("b", TensorProto.FLOAT, [3, 4])],
                 [("y", TensorProto.FLOAT)], 17, f"fused_gemm_{len(attributes)}_{attributes.get('activation')}.onnx",
                 {"com.microsoft": 1})


@pytest.mark.parametrize("attributes, runs", [
    ({"activation": "Relu"}, True),
    ({"activation": "Softsign"}, True),
    ({}, False),  # no activation: the kernel knows no such kind
    ({"activation": "Clip"}, False),  # an activation other fused ops take, not this one
    ({"activation": "relu"}, False),  # names are compared exactly
    ({"activation": "LeakyRelu"}, False),  # the activation's parameter is missing
    ({"activation": "LeakyRelu", "activation_alpha": 0.1}, True),
    ({"activation": "HardSigmoid", "activation_alpha": 0.2}, False),
    ({"activation": "HardSigmoid", "activation_alpha": 0.2, "activation_beta": 0.5}, True),
    ({"activation": "Selu", "activation_alpha": 1.0}, False),
    ({"activation": "Selu", "activation_alpha": 1.0, "activation_gamma": 1.0}, True),
])
def test_the_fused_gemm_kernel_takes_the_activations_it_knows_with_their_parameters(tmp_path, capsys, attributes, runs):
    path = _fused_gemm(tmp_path, **attributes)
    _, document = _verdict(path, capsys)
    assert document["will_run"] is runs, document["problems"]
    assert runs or [problem["code"] for problem in document["problems"]] == ["kernel-refuses"]
    assert _onnxruntime_runs(path) is runs


@pytest.mark.parametrize("hidden_size, runs", [(None, False), (4, True)])
def test_the_attention_lstm_kernel_needs_hidden_size(tmp_path, capsys, hidden_size, runs):
    attributes = {} if hidden_size is None else {"hidden_size": hidden_size}
    node = helper.make_node("AttnLSTM", ["x", "w", "r"], ["y"], domain="com.microsoft", **attributes)
    path = _save(tmp_path, [node], [("x", TensorProto.FLOAT, [1, 2, 3]), ("w", TensorProto.FLOAT, [1, 16, 3]),
                                    ("r", TensorProto.FLOAT, [1, 16, 4])],
                 [("y", TensorProto.FLOAT)], 17, f"attn_lstm_{hidden_size}.onnx", {"com.microsoft": 1})
    _, document = _verdict(path, capsys)
    assert document["will_run"] is runs, document["problems"]
    assert _onnxruntime_loads(path) is runs


def test_a_node_breaking_a_relation_its_attributes_declare_will_not_run(tmp_path, capsys):
    def mha(hidden):
        node = helper.make_node("MultiHeadAttention", ["q", "k", "v"], ["y"], domain="com.microsoft", num_heads=4)
        return _save(tmp_path, [node], [(name, TensorProto.FLOAT, [2, 3, hidden]) for name in ("q", "k")]
                     + [("v", TensorProto.FLOAT, [2, 3, 64])],
                     [("y", TensorProto.FLOAT)], 17, f"mha_{hidden}.onnx", {"com.microsoft": 1})
    _, document = _verdict(mha(66), capsys)  # num_heads 4 does not divide 66
    assert document["will_run"] is False and [problem["code"] for problem in document["problems"]] == ["attribute-value"]
    assert _onnxruntime_runs(mha(66)) is False
    _, document = _verdict(mha(64), capsys)
    assert document["will_run"] is True and _onnxruntime_runs(mha(64)) is True


@pytest.mark.parametrize("k, block, bits, runs", [
    (64, 16, 4, True), (512, 256, 4, True), (1024, 512, 4, False), (64, 32, 8, True), (64, 32, 2, True),
    (64, 32, 3, False), (64, 32, 5, False),
])
def test_the_matmul_nbits_cpu_kernel_takes_some_block_sizes_and_bit_widths(tmp_path, capsys, k, block, bits, runs):
    blocks = -(-k // block)
    node = helper.make_node("MatMulNBits", ["a", "b", "s"], ["y"], domain="com.microsoft", K=k, N=8, bits=bits,
                            block_size=block)
    path = _save(tmp_path, [node], [("a", TensorProto.FLOAT, [2, k]), ("b", TensorProto.UINT8, [8, blocks, block * bits // 8]),
                                    ("s", TensorProto.FLOAT, [8 * blocks])],
                 [("y", TensorProto.FLOAT)], 17, f"nbits_{block}_{bits}.onnx", {"com.microsoft": 1})
    _, document = _verdict(path, capsys)
    assert document["will_run"] is runs, document["problems"]
    assert runs or [problem["code"] for problem in document["problems"]] == ["kernel-refuses"]
    assert _onnxruntime_runs(path) is runs
    assert main(["check", path]) == 0  # other providers take them: no problem of the op itself
    capsys.readouterr()
