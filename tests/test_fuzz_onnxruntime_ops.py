"""Deterministic fuzzing of onnxruntime's operators: one-node models with random operand ranks and
dims (symbols, 0, 1, huge), random attribute values of each attribute's type, optional inputs left
out, present but unknown, or given as small constants. Every rule must answer with types or a
node error, never a Python exception (the suite sets ``RAISE_RULE_BUGS``, so a bug in a rule
surfaces here), and inference never changes its input.

``OPSPEC_FUZZ_CASES`` sets the number of models per schema (default 12).
"""
from __future__ import annotations

import os
import random
from typing import Any

import pytest
from onnxruntime_parity import opspec_extras

import opspec
import opspec.onnxruntime

onnx = pytest.importorskip("onnx")
from onnx import AttributeProto, ModelProto, TensorProto, helper, numpy_helper  # noqa: E402

CASES = int(os.environ.get("OPSPEC_FUZZ_CASES", "12"))
DIMS = (1, 2, 3, 4, 8, 16, 64, 0, 2**40, "N", "S", "P", "N+1", None)
INTS = (-2, -1, 0, 1, 2, 3, 4, 8, 16, 32, 2**31)
ELEMS = {f"tensor({name})": value for name, value in (
    ("float", TensorProto.FLOAT), ("float16", TensorProto.FLOAT16), ("bfloat16", TensorProto.BFLOAT16),
    ("double", TensorProto.DOUBLE), ("int8", TensorProto.INT8), ("uint8", TensorProto.UINT8),
    ("int16", TensorProto.INT16), ("uint16", TensorProto.UINT16), ("int32", TensorProto.INT32),
    ("uint32", TensorProto.UINT32), ("int64", TensorProto.INT64), ("uint64", TensorProto.UINT64),
    ("bool", TensorProto.BOOL), ("string", TensorProto.STRING))}


def _attribute(name: str, kind: str, rng: random.Random) -> Any:
    if kind == "INT":
        return rng.choice(INTS)
    if kind == "FLOAT":
        return rng.choice((0.0, 0.5, 1.0, -1.0, 1e30))
    if kind == "STRING":
        return rng.choice(("", "NOTSET", "SAME_UPPER", "VALID", "relu", "x" * 40))
    if kind == "INTS":
        return [rng.choice(INTS) for _ in range(rng.randrange(0, 7))]
    if kind == "FLOATS":
        return [rng.choice((0.0, 1.0, 2.5)) for _ in range(rng.randrange(0, 4))]
    if kind == "STRINGS":
        return [rng.choice(("a", "Relu", "")) for _ in range(rng.randrange(0, 3))]
    return None  # graphs and tensors: left out


def _elem(types: Any, rng: random.Random) -> int:
    known = [ELEMS[t] for t in sorted(types) if t in ELEMS]
    return rng.choice(known) if known else TensorProto.FLOAT


def _operand(name: str, elem: int, rng: random.Random, inputs: list, initializers: list) -> None:
    """A graph input of random rank and dims, or a small constant (shapes, lengths, axes)."""
    if elem in (TensorProto.INT32, TensorProto.INT64) and rng.random() < 0.4:
        values = [rng.choice((0, 1, 2, 4, -1, 7)) for _ in range(rng.choice((0, 1, 2, 4)))]
        dtype = "int32" if elem == TensorProto.INT32 else "int64"
        import numpy as np

        array = np.array(values[0] if values and rng.random() < 0.5 else values, dtype=dtype)
        initializers.append(numpy_helper.from_array(array, name))
        return
    if rng.random() < 0.1:
        inputs.append(helper.make_tensor_value_info(name, elem, None))  # rank unknown
        return
    rank = rng.choice((0, 1, 2, 3, 3, 4, 4, 5))
    inputs.append(helper.make_tensor_value_info(name, elem, [rng.choice(DIMS) for _ in range(rank)]))


def _model(schema: Any, rng: random.Random) -> ModelProto:
    inputs: list = []
    initializers: list = []
    names = []
    for position, param in enumerate(schema.inputs):
        option = param.option.name
        count = rng.choice((1, 1, 2, 3)) if option == "Variadic" else 1
        if option == "Optional" and rng.random() < 0.4:
            names.append("")
            continue
        for copy in range(count):
            name = f"in{position}_{copy}"
            _operand(name, _elem(param.types, rng), rng, inputs, initializers)
            names.append(name)
    while names and names[-1] == "":
        names.pop()
    outputs = [f"out{i}" for i in range(max(1, len(schema.outputs) if rng.random() < 0.7 else 1))]
    node = helper.make_node(schema.name, names, outputs, domain=schema.domain if schema.domain != "ai.onnx" else "")
    for name, attribute in schema.attributes.items():
        if attribute.required or rng.random() < 0.5:
            kind = attribute.type.name
            value = _attribute(name, kind, rng)
            if value is not None:
                node.attribute.append(helper.make_attribute(name, value, attr_type=getattr(AttributeProto, kind)))
    graph = helper.make_graph([node], "fuzz", inputs, [helper.make_empty_tensor_value_info(o) for o in outputs],
                              initializers)
    domain = "" if schema.domain == "ai.onnx" else schema.domain
    opsets = {"": max(schema.since_version, 13) if domain == "" else 21, domain: schema.since_version}
    return helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets.items()])


SCHEMAS = sorted(opspec_extras().items())


@pytest.mark.parametrize("key", [key for key, _ in SCHEMAS], ids=lambda k: f"{k[0] or 'ai.onnx'}::{k[1]}-{k[2]}")
def test_rules_of_onnxruntimes_operators_answer_every_node(key):
    schema = dict(SCHEMAS)[key]
    rng = random.Random(f"{key}")
    for _ in range(CASES):
        model = _model(schema, rng)
        before = model.SerializeToString()
        result = opspec.infer(model, data_prop=True)
        assert model.SerializeToString() == before
        assert result.unknown_ops == set()
