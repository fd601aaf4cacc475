"""``check --runtime onnxruntime:PROVIDER`` for a provider that falls back to the CPU: which node
runs where, and the copies between devices.

No GPU is here, so the provider's kernel table is the only truth: these tests give a small
hand-written CUDA table beside the real CPU one and hold the placement to what onnxruntime's
partitioning does with such tables (a node goes to the provider that has a kernel for it, else
to the CPU, else nowhere)."""
from __future__ import annotations

import importlib
import json
from types import SimpleNamespace

import pytest
from onnx import TensorProto, helper, save

import opspec.onnxruntime
from opspec.cli import main
from opspec.runtime import kernels as kernel_tables
from opspec.runtime.checker.placement import Placed

#: A CUDA table for the tests: (domain, op, since, until, {type parameter: types}).
CUDA = [
    ("ai.onnx", "Relu", 14, None, {"T": ["tensor(float)", "tensor(float16)"]}),
    ("ai.onnx", "Add", 14, None, {"T": ["tensor(bfloat16)", "tensor(float)", "tensor(float16)"]}),
    ("ai.onnx", "MatMul", 13, None, {"T": ["tensor(float)"]}),
]


def _cached() -> list:
    return [kernel_tables.taken_types, kernel_tables._by_op, kernel_tables._refusals]


@pytest.fixture
def cuda_table(monkeypatch):
    """The real tables with :data:`CUDA` added as provider ``cuda``."""
    real = importlib.import_module(kernel_tables.TABLES_MODULE)
    lists = list(real.TYPE_LISTS)
    rows = []
    for domain, op, since, until, types in CUDA:
        refs = []
        for name, allowed in sorted(types.items()):
            lists.append(tuple(allowed))
            refs.append((name, len(lists) - 1))
        rows.append((domain, op, since, until, tuple(refs)))
    tables = SimpleNamespace(
        TYPE_LISTS=tuple(lists), SOURCES={**real.SOURCES, "cuda": "test"}, LIMITS={**real.LIMITS, "cuda": (None, {})},
        SCHEMAS={**real.SCHEMAS, "cuda": {}}, REFUSALS={**real.REFUSALS, "cuda": ()},
        BUILT_BODIES={**real.BUILT_BODIES, "cuda": ()}, KERNELS={**real.KERNELS, "cuda": tuple(rows)})
    for function in _cached():
        function.cache_clear()
    monkeypatch.setattr(kernel_tables, "_tables", lambda: tables)
    yield
    for function in _cached():
        function.cache_clear()


def _model(tmp_path, nodes, inputs, outputs, name="m.onnx", initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    path = tmp_path / name
    save(model, str(path))
    return str(path)


def _chain(tmp_path, elem=TensorProto.FLOAT, dims=(2, 3)):
    """x -> Relu -> a -> Neg -> b; Add(b, a) -> y: Relu and Add have CUDA kernels, Neg does not."""
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="relu"), helper.make_node("Neg", ["a"], ["b"], name="neg"),
             helper.make_node("Add", ["b", "a"], ["y"], name="add")]
    return _model(tmp_path, nodes, [helper.make_tensor_value_info("x", elem, list(dims))],
                  [helper.make_tensor_value_info("y", elem, None)])


def test_nodes_go_to_the_provider_with_a_kernel_and_the_rest_to_the_cpu(tmp_path, cuda_table):
    placement = opspec.onnxruntime.placement(_chain(tmp_path))
    assert [(node.name, node.provider, node.how) for node in placement.nodes] == [
        ("relu", "cuda", Placed.PROVIDER), ("neg", "cpu", Placed.FALLBACK), ("add", "cuda", Placed.PROVIDER)]
    copies = {(copy.value, copy.source, copy.target): copy for copy in placement.copies}
    # the input goes up, a comes down for Neg, b goes back up for Add, y comes down as the output;
    # Add reads a where Relu made it: no copy
    assert sorted(copies) == [("a", "cuda", "cpu"), ("b", "cpu", "cuda"), ("x", "cpu", "cuda"), ("y", "cuda", "cpu")]
    assert copies[("x", "cpu", "cuda")].producer is None and copies[("x", "cpu", "cuda")].consumers == ("node 'relu'",)
    assert copies[("y", "cuda", "cpu")].consumers == (None,)
    assert copies[("a", "cuda", "cpu")].type == "tensor(float)" and copies[("a", "cuda", "cpu")].size == 24


def test_a_value_read_by_several_nodes_on_one_device_is_copied_once(tmp_path, cuda_table):
    nodes = [helper.make_node("Sin", ["x"], ["a"], name="sin"), helper.make_node("Relu", ["a"], ["b"], name="r1"),
             helper.make_node("Relu", ["a"], ["c"], name="r2"), helper.make_node("Add", ["b", "c"], ["y"], name="add")]
    path = _model(tmp_path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    (copy, output) = opspec.onnxruntime.placement(path).copies
    assert (copy.value, copy.source, copy.target, copy.consumers) == ("a", "cpu", "cuda", ("node 'r1'", "node 'r2'"))
    assert copy.shape is not None and copy.shape[1] == 4 and copy.size is None  # a symbolic dim: size unknown
    assert (output.value, output.target) == ("y", "cpu")


def test_a_node_only_the_provider_runs_makes_the_model_run_there(tmp_path, capsys, cuda_table):
    path = _chain(tmp_path, TensorProto.BFLOAT16)  # bfloat16 Relu: no kernel on either; Add: CUDA only
    assert main(["check", path, "--runtime", "onnxruntime", "--format", "json"]) == 1
    on_cpu = json.loads(capsys.readouterr().out)
    assert {problem["op_type"] for problem in on_cpu["problems"]} == {"Relu", "Neg", "Add"}

    assert main(["check", path, "--runtime", "onnxruntime:cuda", "--format", "json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["runtime"] == "onnxruntime:cuda" and document["will_run"] is False
    assert {problem["op_type"] for problem in document["problems"]} == {"Relu", "Neg"}  # Add runs on CUDA
    assert all(problem["code"] == "no-kernel" and "nor does the CPU fallback" in problem["message"]
               for problem in document["problems"])
    assert [(entry["node"], entry["provider"], entry["how"]) for entry in document["placement"]] == [
        ("relu", None, "no-kernel"), ("neg", None, "no-kernel"), ("add", "cuda", "provider")]


def test_the_text_report_lists_each_node_and_copy(tmp_path, capsys, cuda_table):
    assert main(["check", _chain(tmp_path), "--runtime", "onnxruntime:cuda"]) == 0
    out = capsys.readouterr().out
    assert "onnxruntime:cuda: will run" in out
    assert "placement on onnxruntime:cuda: 2 on cuda, 1 on cpu; 4 copies between devices (96 bytes" in out
    assert "  node 'neg' (Neg): cpu" in out
    assert "  copy 'a' cuda -> cpu (tensor(float), [2, 3], 24 bytes): from node 'relu' to node 'neg'" in out
    assert main(["check", _chain(tmp_path), "--runtime", "onnxruntime:cuda", "--quiet"]) == 0
    assert capsys.readouterr().out == ""


def test_constants_and_initializers_are_not_copied(tmp_path, cuda_table):
    weight = helper.make_tensor("w", TensorProto.FLOAT, [3, 3], [0.0] * 9)
    nodes = [helper.make_node("Constant", [], ["k"], name="const",
                              value=helper.make_tensor("k", TensorProto.FLOAT, [3], [1.0, 2.0, 3.0])),
             helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"), helper.make_node("Add", ["m", "k"], ["y"], name="add")]
    path = _model(tmp_path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializers=[weight])
    placement = opspec.onnxruntime.placement(path)
    assert [(node.name, node.how) for node in placement.nodes] == [
        ("const", Placed.INITIALIZER), ("mm", Placed.PROVIDER), ("add", Placed.PROVIDER)]
    assert sorted((copy.value, copy.target) for copy in placement.copies) == [("x", "cuda"), ("y", "cpu")]


def test_float16_runs_on_the_cpu_through_casts_and_a_function_body_is_expanded(tmp_path, cuda_table):
    half = TensorProto.FLOAT16
    nodes = [helper.make_node("Neg", ["x"], ["a"], name="neg"),  # no float16 kernel on either: casts on the CPU
             helper.make_node("Mish", ["x2"], ["b"], name="mish")]  # no kernel at all: its body
    path = _model(tmp_path, nodes, [helper.make_tensor_value_info("x", half, [2]),
                                    helper.make_tensor_value_info("x2", TensorProto.FLOAT, [2])],
                  [helper.make_tensor_value_info("a", half, None), helper.make_tensor_value_info("b", TensorProto.FLOAT, None)],
                  opset=18)
    checked = opspec.onnxruntime.will_it_run(path, provider="cuda")
    assert checked.problems == [] and checked.will_run
    placement = checked.placement
    assert [(node.name, node.provider, node.how) for node in placement.nodes] == [
        ("neg", "cpu", Placed.FALLBACK), ("mish", None, Placed.EXPANDED)]
    assert placement.copies == ()  # the expanded node's values are not followed
    at_17 = _model(tmp_path, nodes[1:], [helper.make_tensor_value_info("x2", TensorProto.FLOAT, [2])],
                   [helper.make_tensor_value_info("b", TensorProto.FLOAT, None)], name="17.onnx")
    assert [node.how for node in opspec.onnxruntime.placement(at_17).nodes] == [Placed.NOT_PLACED]  # no Mish before 18


def test_placement_needs_a_provider_other_than_the_cpu(tmp_path):
    with pytest.raises(ValueError, match="runs every node itself"):
        opspec.onnxruntime.placement(_chain(tmp_path), provider="cpu")
    with pytest.raises(ValueError, match="no kernel table for provider 'nosuch'"):
        opspec.onnxruntime.placement(_chain(tmp_path), provider="nosuch")
