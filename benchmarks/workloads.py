"""The models the inference benchmarks run on, written to files so each engine loads them in a process of its own.

Weight-heavy models carry their weights in the file; their weight-light twins are the same
graph with every weight over 64 bytes stored outside the model (``data_location:
EXTERNAL``, no file needed: shape inference never reads weights), so the two differ only in
what an API call must serialize, copy or parse.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import models  # noqa: E402 - the test suite's model builders

F = TensorProto.FLOAT


def weight_light(model: Any) -> Any:
    """``model`` with every weight over 64 bytes marked external (its bytes dropped)."""
    light = type(model)()
    light.CopyFrom(model)
    for tensor in light.graph.initializer:
        if len(tensor.raw_data) > 64:
            tensor.ClearField("raw_data")
            tensor.data_location = TensorProto.EXTERNAL
            entry = tensor.external_data.add()
            entry.key, entry.value = "location", "weights.bin"
    return light


def embedded_chain(length: int, rows: int = 200_000) -> Any:
    """An embedding lookup (``rows`` x 128 floats, 100 MB at the default) feeding ``length`` elementwise nodes."""
    chain = models.elementwise_chain(length)
    graph = chain.graph
    graph.node.insert(0, helper.make_node("Gather", ["table", "tokens"], ["x"], axis=0))
    del graph.input[:]
    graph.input.append(helper.make_tensor_value_info("tokens", TensorProto.INT64, ["B"]))
    graph.initializer.append(numpy_helper.from_array(np.zeros((rows, 128), np.float32), "table"))
    return chain


def deep(length: int) -> Any:
    """An ``If`` whose branches are each a ``length``-node elementwise chain over an outer value."""
    def branch(tag: str) -> Any:
        body = models.elementwise_chain(length).graph
        for node in body.node:
            node.input[:] = [f"{tag}{name}" if name != "x" else "x" for name in node.input]
            node.output[:] = [f"{tag}{name}" for name in node.output]
            node.name = f"{tag}{node.name}"
        outputs = [helper.make_tensor_value_info(body.node[-1].output[0], F, None)]
        return helper.make_graph(list(body.node), f"{tag}branch", [], outputs)

    graph = helper.make_graph(
        [helper.make_node("If", ["cond"], ["y"], then_branch=branch("t"), else_branch=branch("e"))], "deep",
        [helper.make_tensor_value_info("cond", TensorProto.BOOL, []), helper.make_tensor_value_info("x", F, ["B", 128])],
        [helper.make_tensor_value_info("y", F, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def wide(count: int) -> Any:
    """``count`` graph inputs, each through its own ``Relu``."""
    inputs = [helper.make_tensor_value_info(f"x{i}", F, ["B", 128]) for i in range(count)]
    nodes = [helper.make_node("Relu", [f"x{i}"], [f"y{i}"]) for i in range(count)]
    outputs = [helper.make_tensor_value_info(f"y{i}", F, None) for i in range(count)]
    return helper.make_model(helper.make_graph(nodes, "wide", inputs, outputs),
                             opset_imports=[helper.make_opsetid("", 17)])


def node_count(model: Any) -> int:
    """Nodes in every graph of ``model`` (subgraphs included)."""
    count, pending = 0, [model.graph]
    while pending:
        graph = pending.pop()
        count += len(graph.node)
        pending += [a.g for node in graph.node for a in node.attribute if a.type == 5]
    return count


def write(folder: Path, name: str, build: Callable[[], Any]) -> tuple[Path, int]:
    """Build a model, save it as ``folder/name.onnx``; its path and node count."""
    model = build()
    path = folder / f"{name}.onnx"
    path.write_bytes(model.SerializeToString())
    return path, node_count(model)
