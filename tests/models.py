"""Models built the way users get them (exported graphs), for tests and benchmarks.

Built with ``onnx.helper``; symbolic batch and sequence dims, shapes computed in the
graph (Shape/Gather/Concat feeding Reshape), initializers for weights.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

FLOAT = TensorProto.FLOAT


def value_types(model) -> dict[str, tuple[int, list | None]]:
    """{value name: (elem type, dims)} for every value_info and graph output; dims is None for an
    unknown rank, else a list of int values, symbolic texts and None."""
    def dims(tensor) -> list | None:
        if not tensor.HasField("shape"):
            return None
        return [d.dim_value if d.HasField("dim_value") else d.dim_param or None for d in tensor.shape.dim]

    values = list(model.graph.value_info) + list(model.graph.output)
    return {v.name: (v.type.tensor_type.elem_type, dims(v.type.tensor_type)) for v in values}


class GraphBuilder:
    """Appends nodes with unique value names; keeps initializers small unless asked."""

    def __init__(self) -> None:
        self.nodes: list = []
        self.initializers: list = []
        self.count = 0

    def name(self, hint: str) -> str:
        self.count += 1
        return f"{hint}_{self.count}"

    def node(self, op: str, inputs: list[str], hint: str | None = None, outputs: int = 1, **attrs) -> list[str]:
        names = [self.name(hint or op.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, names, name=self.name(f"n_{op}"), **attrs))
        return names

    def one(self, op: str, inputs: list[str], hint: str | None = None, **attrs) -> str:
        return self.node(op, inputs, hint, **attrs)[0]

    def weight(self, hint: str, shape: tuple[int, ...], dtype=np.float32) -> str:
        name = self.name(hint)
        self.initializers.append(numpy_helper.from_array(np.zeros(shape, dtype=dtype), name))
        return name

    def ints(self, hint: str, values: list[int]) -> str:
        name = self.name(hint)
        self.initializers.append(numpy_helper.from_array(np.array(values, dtype=np.int64), name))
        return name

    def model(self, inputs: list, outputs: list, opset: int = 17, name: str = "model"):
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.initializers)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def small_cnn(opset: int = 17):
    """Conv/BN/ReLU/pool stack with a classifier head, batch size symbolic ("N")."""
    b = GraphBuilder()
    x = "image"
    h = b.one("Conv", [x, b.weight("w", (16, 3, 3, 3)), b.weight("b", (16,))], pads=[1, 1, 1, 1])
    h = b.one("BatchNormalization", [h] + [b.weight("bn", (16,)) for _ in range(4)])
    h = b.one("Relu", [h])
    h = b.one("MaxPool", [h], kernel_shape=[2, 2], strides=[2, 2])
    h = b.one("Conv", [h, b.weight("w", (32, 16, 3, 3))], pads=[1, 1, 1, 1], strides=[2, 2])
    h = b.one("Relu", [h])
    h = b.one("AveragePool", [h], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1])
    h = b.one("GlobalAveragePool", [h])
    h = b.one("Flatten", [h])
    h = b.one("Gemm", [h, b.weight("fc", (10, 32)), b.weight("fcb", (10,))], transB=1)
    b.nodes.append(helper.make_node("Softmax", [h], ["probs"], name="softmax", axis=-1))
    return b.model([helper.make_tensor_value_info(x, FLOAT, ["N", 3, 32, 32])],
                   [helper.make_tensor_value_info("probs", FLOAT, None)], opset, "cnn")


def encoder_layers(b: GraphBuilder, x: str, layers: int, hidden: int = 64, heads: int = 4) -> str:
    """``layers`` transformer encoder blocks on ``x`` of shape (B, S, hidden)."""
    head = hidden // heads
    for _ in range(layers):
        normed = b.one("LayerNormalization", [x, b.weight("ln_g", (hidden,)), b.weight("ln_b", (hidden,))],
                       axis=-1)
        shape = b.one("Shape", [normed])
        batch = b.one("Gather", [shape, b.ints("i0", [0])], axis=0)
        seq = b.one("Gather", [shape, b.ints("i1", [1])], axis=0)
        split_shape = b.one("Concat", [batch, seq, b.ints("hd", [heads, head])], axis=0)
        qkv = []
        for role in ("q", "k", "v"):
            projected = b.one("Add", [b.one("MatMul", [normed, b.weight(role, (hidden, hidden))]),
                                      b.weight(role + "b", (hidden,))])
            qkv.append(b.one("Transpose", [b.one("Reshape", [projected, split_shape])], perm=[0, 2, 1, 3]))
        q, k, v = qkv
        scores = b.one("MatMul", [q, b.one("Transpose", [k], perm=[0, 1, 3, 2])])
        scores = b.one("Div", [scores, b.weight("scale", ())])
        attention = b.one("MatMul", [b.one("Softmax", [scores], axis=-1), v])
        merged_shape = b.one("Concat", [batch, seq, b.ints("h", [hidden])], axis=0)
        merged = b.one("Reshape", [b.one("Transpose", [attention], perm=[0, 2, 1, 3]), merged_shape])
        x = b.one("Add", [x, b.one("MatMul", [merged, b.weight("o", (hidden, hidden))])])
        normed = b.one("LayerNormalization", [x, b.weight("ln_g", (hidden,)), b.weight("ln_b", (hidden,))],
                       axis=-1)
        up = b.one("Add", [b.one("MatMul", [normed, b.weight("up", (hidden, 4 * hidden))]),
                           b.weight("upb", (4 * hidden,))])
        gate = b.one("Erf", [b.one("Div", [up, b.weight("sqrt2", ())])])
        gelu = b.one("Mul", [b.one("Mul", [up, b.one("Add", [gate, b.weight("one", ())])]), b.weight("half", ())])
        x = b.one("Add", [x, b.one("MatMul", [gelu, b.weight("down", (4 * hidden, hidden))])])
    return x


def transformer(layers: int = 1, hidden: int = 64, heads: int = 4, opset: int = 17):
    """Token embedding lookup then ``layers`` encoder blocks; batch "B" and sequence "S" symbolic."""
    b = GraphBuilder()
    embedded = b.one("Gather", [b.weight("embedding", (1000, hidden)), "tokens"], axis=0)
    out = encoder_layers(b, embedded, layers, hidden, heads)
    b.nodes.append(helper.make_node("Identity", [out], ["hidden_states"], name="output"))
    return b.model([helper.make_tensor_value_info("tokens", TensorProto.INT64, ["B", "S"])],
                   [helper.make_tensor_value_info("hidden_states", FLOAT, None)], opset, "encoder")


def elementwise_chain(length: int, opset: int = 17):
    """``length`` nodes alternating Relu and Add(x, x) on a (B, 128) input."""
    nodes, previous = [], "x"
    for index in range(length):
        name = f"v{index}"
        if index % 2:
            nodes.append(helper.make_node("Add", [previous, previous], [name], name=f"n{index}"))
        else:
            nodes.append(helper.make_node("Relu", [previous], [name], name=f"n{index}"))
        previous = name
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", FLOAT, ["B", 128])],
                              [helper.make_tensor_value_info(previous, FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
