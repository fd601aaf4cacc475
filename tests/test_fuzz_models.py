"""Deterministic fuzzing of models: seeded mutations of the node suite's models through the
Python API raise only opspec's documented exceptions, never change their input, and always
give a model that reads back.

``OPSPEC_FUZZ_CASES`` sets the number of mutations (default 300).
"""
from __future__ import annotations

import os
import random

import pytest

import opspec

onnx = pytest.importorskip("onnx")
from conformance.harness import cases  # noqa: E402

CASES = int(os.environ.get("OPSPEC_FUZZ_CASES", "300"))
DOCUMENTED = (opspec.ModelLoadError, opspec.InferenceError)
HUGE_DIMS = (2**62, 2**63 - 1, 0, 1, 10**9)
DIM_PARAMS = ("N", "2*N", "99999999999999999999999", "-5", "N+", "\u202eX", "", "a" * 1000, "N//0")


def _dims(model):
    for group in (model.graph.input, model.graph.output, model.graph.value_info):
        for value in group:
            if value.type.HasField("tensor_type"):
                yield from value.type.tensor_type.shape.dim


def _mutate(model, rng: random.Random) -> None:
    """One structural change to ``model`` (in place)."""
    graph = model.graph
    kind = rng.randrange(10)
    dims = list(_dims(model))
    if kind == 0 and dims:
        rng.choice(dims).dim_value = rng.choice(HUGE_DIMS)
    elif kind == 1 and dims:
        rng.choice(dims).dim_param = rng.choice(DIM_PARAMS)
    elif kind == 2 and graph.input:  # a type nested far too deep
        value = rng.choice(graph.input).type
        value.Clear()
        for _ in range(rng.choice([30, 45, 60, 150, 3000])):
            value = value.sequence_type.elem_type
        value.tensor_type.elem_type = 1
    elif kind == 3 and graph.node:
        node = rng.choice(graph.node)
        node.op_type = rng.choice(["Reshape", "Flatten", "Concat", "Gemm", "Nope", "", "Split"])
    elif kind == 4 and graph.node:
        node = rng.choice(graph.node)
        attribute = node.attribute.add()
        attribute.name = rng.choice(["axis", "perm", "to", "shape", "value", "axes"])
        attribute.type = rng.randrange(15)
        attribute.i = rng.choice([2**62, -(2**62), -1, 0, 7])
    elif kind == 5 and graph.node:
        node = rng.choice(graph.node)
        if node.input:
            node.input[rng.randrange(len(node.input))] = rng.choice(["", "missing", node.output[0] if node.output else ""])
    elif kind == 6 and graph.input:
        rng.choice(graph.input).type.tensor_type.elem_type = rng.choice([0, 7, 8, 99, 16, 2**20])
    elif kind == 7:
        model.opset_import[0].version = rng.choice([0, 1, 6, 13, 1000, -3])
    elif kind == 8 and graph.input:  # every dim huge: products overflow int64
        for dim in rng.choice(graph.input).type.tensor_type.shape.dim:
            dim.dim_value = 2**62
    else:
        graph.node.extend(graph.node[:rng.randrange(len(graph.node) + 1)])


def _check(source, model_bytes: bytes, **options) -> None:
    try:
        result = opspec.infer(source, **options)
    except DOCUMENTED:
        return
    try:
        onnx.ModelProto.FromString(model_bytes)
    except Exception:  # noqa: BLE001 - the input itself does not read back (too deep for protobuf)
        return
    out = result.model
    data = out if isinstance(out, bytes) else out.SerializeToString()
    onnx.ModelProto.FromString(data)  # what inference writes always reads back


def test_fuzzed_models_raise_only_documented_errors():
    models = cases()
    rng = random.Random(1234)
    for seed in range(CASES):
        model = onnx.ModelProto()
        model.CopyFrom(rng.choice(models).model)
        for _ in range(rng.choice([1, 1, 2, 3])):
            _mutate(model, rng)
        before = model.SerializeToString()
        options = {"data_prop": rng.random() < 0.5, "check_type": rng.random() < 0.5,
                   "strict_mode": rng.random() < 0.3}
        _check(model, before, **options)
        assert model.SerializeToString() == before, f"case {seed} changed its input"
        try:
            data = model.SerializeToString()
        except Exception:  # noqa: BLE001 - too deep to serialize: the in-memory path above covers it
            continue
        cut = rng.randrange(len(data) + 1)
        garbled = bytearray(data)
        if garbled:
            garbled[rng.randrange(len(garbled))] ^= 1 << rng.randrange(8)
        for variant in (data, data[:cut], bytes(garbled)):
            _check(variant, variant, **options)


def test_flatten_over_huge_dims_is_a_node_error_and_never_corrupt():
    from onnx import TensorProto, helper

    graph = helper.make_graph([helper.make_node("Flatten", ["x"], ["y"], axis=0)], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2**62, 2**62, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    result = opspec.infer(model)
    assert [str(e) for e in result.errors] == [
        f"node #0 (Flatten, domain 'ai.onnx'): output 'y': dim {2**62 * 2**62 * 8} does not fit in a model "
        "(dims are int64)"]
    back = onnx.ModelProto.FromString(result.model.SerializeToString())
    assert [d.dim_value for d in back.graph.output[0].type.tensor_type.shape.dim] == [1, 0]
    with pytest.raises(opspec.InferenceError):
        opspec.infer(model, strict_mode=True)


def test_a_type_nested_thousands_deep_is_a_load_error():
    from onnx import helper

    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", [], [])
    for group, name in ((graph.input, "x"), (graph.output, "y")):
        value = group.add()
        value.name = name
        nested = value.type
        for _ in range(3000):
            nested = nested.sequence_type.elem_type
        nested.tensor_type.elem_type = 1
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(opspec.ModelLoadError, match="nested deeper than 40 levels"):
        opspec.infer(model)


def _answer(source, **options):
    """What inference says about ``source``: the documented error it raises, or its node errors."""
    try:
        result = opspec.infer(source, **options)
    except DOCUMENTED as error:
        return type(error).__name__, str(error).rsplit(": ", 1)[-1]
    return [str(error) for error in result.errors], result.external_refusals


def test_fuzzed_models_get_one_answer_per_input_form(tmp_path):
    models = cases()
    rng = random.Random(4321)
    path = tmp_path / "m.onnx"
    for seed in range(max(CASES // 4, 20)):
        model = onnx.ModelProto()
        model.CopyFrom(rng.choice(models).model)
        for _ in range(rng.choice([1, 2, 3])):
            _mutate(model, rng)
        if rng.random() < 0.3:  # the fields whose absence made paths and messages disagree
            rng.choice([lambda: model.ClearField("ir_version"), lambda: model.ClearField("graph"),
                        lambda: model.ClearField("opset_import")])()
        try:
            data = model.SerializeToString()
            onnx.ModelProto.FromString(data)
        except Exception:  # noqa: BLE001 - too deep for protobuf: there is no file form
            continue
        path.write_bytes(data)
        options = {"data_prop": rng.random() < 0.5}
        answers = [_answer(source, **options) for source in (model, data, path)]
        assert answers[0] == answers[1] == answers[2], (seed, answers)


def test_fuzzed_function_chains_get_short_answers():
    from onnx import TensorProto, helper

    rng = random.Random(99)
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)]
    for _ in range(12):
        length = rng.choice([1, 2, 50, 257, 299, 300, 301, 500, 1000])
        functions = []
        for i in range(length):
            if i == length - 1:
                callee = rng.choice(["Relu", "MatMul", "F0"])  # F0: a cycle back to the start
                body = helper.make_node(callee, ["x", "x"] if callee == "MatMul" else ["x"], ["y"],
                                        domain="local" if callee == "F0" else "")
            else:
                body = helper.make_node(f"F{i + 1}", ["x"], ["y"], domain="local")
            functions.append(helper.make_function("local", f"F{i}", ["x"], ["y"], [body], opsets))
        graph = helper.make_graph([helper.make_node("F0", ["x"], ["y"], domain="local")], "g",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, rng.choice([2, 3])])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
        model = helper.make_model(graph, opset_imports=opsets, functions=functions)
        result = opspec.infer(model)
        assert len(result.errors) <= 1, length
        for error in result.errors:
            assert len(str(error)) < 1000 and "Recursion" not in str(error), str(error)[:300]


def _nested_model(rng: random.Random, depth: int):
    """Loops and Ifs nested ``depth`` deep around one step: a Relu, a mismatched MatMul or a
    call of a chain of model-local functions; the bodies declare their carried value as the
    outer graph gives it, with a symbol, or not at all."""
    from onnx import TensorProto, helper

    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)]
    declared = rng.choice([(2, 3), ("N", 3), None])
    innermost = rng.choice(["Relu", "MatMul", "F0"])
    chain = rng.choice([1, 5, 257, 258])
    functions = [helper.make_function("local", f"F{i}", ["x"], ["y"], [
        helper.make_node(f"F{i + 1}", ["x"], ["y"], domain="local") if i < chain - 1
        else helper.make_node("Relu", ["x"], ["y"])], opsets) for i in range(chain)] if innermost == "F0" else []
    inner = None
    graphs = 0  # graphs nested so far: protobuf reads about 30 at most
    for level in range(depth):
        x, y = f"x{level}", f"y{level}"
        if inner is None:
            step = helper.make_node(innermost, [x, x] if innermost == "MatMul" else [x], [y],
                                    domain="local" if innermost == "F0" else "")
        elif rng.random() < 0.5 or graphs > 26:
            step = helper.make_node("Loop", ["M", "", x], [y], body=inner)
        else:  # an If whose branches read the carried value from around: one loops on, one passes it
            looping = helper.make_graph([helper.make_node("Loop", ["M", "", x], [f"{y}_t"], body=inner)], "then",
                                        [], [helper.make_tensor_value_info(f"{y}_t", TensorProto.FLOAT, None)])
            passing = helper.make_graph([helper.make_node("Identity", [x], [f"{y}_e"])], "else", [],
                                        [helper.make_tensor_value_info(f"{y}_e", TensorProto.FLOAT, None)])
            step = helper.make_node("If", ["c"], [y], then_branch=looping, else_branch=passing)
            graphs += 1
        inner = helper.make_graph(
            [step, helper.make_node("Identity", ["c"], [f"c{level}"])], f"body{level}",
            [helper.make_tensor_value_info(f"i{level}", TensorProto.INT64, []),
             helper.make_tensor_value_info("c", TensorProto.BOOL, []),
             helper.make_tensor_value_info(x, TensorProto.FLOAT, declared)],
            [helper.make_tensor_value_info(f"c{level}", TensorProto.BOOL, []),
             helper.make_tensor_value_info(y, TensorProto.FLOAT, None)])
        graphs += 1
    graph = helper.make_graph([helper.make_node("Loop", ["M", "", "x"], ["y"], body=inner)], "g",
                              [helper.make_tensor_value_info("M", TensorProto.INT64, []),
                               helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=opsets, functions=functions)


def test_fuzzed_nesting_gets_short_answers_and_reuse_changes_none(monkeypatch):
    """Deep nesting of Loops and Ifs (graphs inferred again and again) with problems or call
    chains inside: a few short errors, the same answer with and without reusing results."""
    from opspec.runtime.inference import subgraph_reuse

    rng = random.Random(7)
    for _ in range(16):
        depth = rng.choice([1, 2, 4, 6, 12, 20])
        model = _nested_model(rng, depth)
        result = opspec.infer(model)
        assert len(result.errors) <= 4, (depth, result.errors)  # a path that runs out of stack is one
        assert all(len(str(e)) < 1000 and "Recursion" not in str(e) for e in result.errors), result.errors[:1]
        if depth <= 6:
            with monkeypatch.context() as patch:
                patch.setattr(subgraph_reuse, "RESULTS_PER_GRAPH", 0)
                every_time = opspec.infer(model)
            assert result.model.SerializeToString() == every_time.model.SerializeToString()
            assert {str(e) for e in result.errors} == {str(e) for e in every_time.errors}
