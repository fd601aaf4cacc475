"""A seeded generator of malformed models, in the way the fuzz tests make them: a node suite
model, often with its inputs turned into initializers, given one to three mutations each of
which onnx.checker's full check may reject (tensor data in the wrong field, data counts, raw
lengths, data types, untyped values, names, versions, attributes, sparse tensors, external
locations, declared types and shapes that inference contradicts) or the structural ones of
``test_fuzz_models``.
"""
from __future__ import annotations

import random
from typing import Any, Iterator, cast

import numpy as np
from onnx import AttributeProto, ModelProto, TensorProto, helper, numpy_helper

_DATA_FIELDS = ("float_data", "int32_data", "int64_data", "double_data", "uint64_data", "string_data")
_NUMPY: dict[int, type] = {TensorProto.FLOAT: np.float32, TensorProto.INT64: np.int64, TensorProto.INT32: np.int32,
          TensorProto.DOUBLE: np.float64, TensorProto.BOOL: np.bool_, TensorProto.UINT8: np.uint8,
          TensorProto.INT8: np.int8, TensorProto.FLOAT16: np.float16}


def _known_dims(value_info: Any) -> list[int] | None:
    if not value_info.type.HasField("tensor_type") or not value_info.type.tensor_type.HasField("shape"):
        return None
    dims = [d.dim_value if d.HasField("dim_value") else -1 for d in value_info.type.tensor_type.shape.dim]
    return dims if all(d >= 0 for d in dims) and int(np.prod(dims)) <= 64 else None


def _as_initializers(model: ModelProto, rng: random.Random) -> None:
    """Turn some typed, small inputs into initializers with data (raw or in their field)."""
    graph = model.graph
    for value in list(graph.input):
        dims = _known_dims(value)
        elem = value.type.tensor_type.elem_type
        if dims is None or elem not in _NUMPY or rng.random() < 0.3:
            continue
        array: np.ndarray = (np.arange(int(np.prod(dims))) % 3).astype(_NUMPY[elem]).reshape(dims)
        tensor = numpy_helper.from_array(array, value.name)
        if rng.random() < 0.5 and elem != TensorProto.FLOAT16:
            tensor = helper.make_tensor(value.name, elem, dims, array.flatten().tolist())
        graph.initializer.append(tensor)
        if model.ir_version >= 4:
            graph.input.remove(value)


def _tensor(model: ModelProto, rng: random.Random) -> Any | None:
    tensors = list(model.graph.initializer)
    return rng.choice(tensors) if tensors else None


def _mutate(model: ModelProto, rng: random.Random, folder_escape: str) -> None:
    graph = model.graph
    kind = rng.randrange(18)
    tensor = _tensor(model, rng)
    if kind == 0 and tensor is not None:  # data moved to another field
        values = [1] * max(1, int(np.prod(tensor.dims)))
        for field in ("raw_data", *_DATA_FIELDS):
            tensor.ClearField(field)
        moved_to = rng.choice(_DATA_FIELDS[:5])
        getattr(tensor, moved_to).extend(values)
    elif kind == 1 and tensor is not None:  # one value more or less
        filled = next((f for f in _DATA_FIELDS if len(getattr(tensor, f))), None)
        if filled is None:
            tensor.raw_data = tensor.raw_data[:-1] if rng.random() < 0.5 else tensor.raw_data + b"\0"
        elif rng.random() < 0.5:
            getattr(tensor, filled).append(getattr(tensor, filled)[0])
        else:
            del getattr(tensor, filled)[-1]
    elif kind == 2 and tensor is not None:  # two data fields, or none
        if rng.random() < 0.5:
            for field in ("raw_data", *_DATA_FIELDS):
                tensor.ClearField(field)
        else:
            tensor.raw_data = tensor.raw_data + b"\0\0\0\0" if tensor.raw_data else b"\0" * 8
    elif kind == 3 and tensor is not None:
        tensor.data_type = rng.choice([0, 29, 99, 2**20])
    elif kind == 4 and graph.input:  # a type with no value case, or no type
        value = rng.choice(graph.input)
        if rng.random() < 0.5:
            value.type.Clear()
        else:
            value.ClearField("type")
    elif kind == 5:
        graph.name = ""
    elif kind == 6:
        model.ir_version = rng.choice([2, 15, 100])
    elif kind == 7:
        model.opset_import[0].version = rng.choice([0, -3, 29, 1000])
    elif kind == 8 and graph.node:  # an attribute twice
        node = rng.choice(graph.node)
        attribute = node.attribute[0] if node.attribute else helper.make_attribute("unused", 1)
        node.attribute.extend([attribute, attribute])
    elif kind == 9 and graph.node and any(n.attribute for n in graph.node):  # type and field disagree
        node = rng.choice([n for n in graph.node if n.attribute])
        attribute = rng.choice(node.attribute)
        attribute.type = cast(AttributeProto.AttributeType,
                              rng.choice([t for t in (1, 2, 3, 6, 7) if t != attribute.type]))
    elif kind == 10:  # a sparse initializer with an index out of range
        sparse_values = helper.make_tensor("sparse_values", TensorProto.FLOAT, [2], [1.0, 2.0])
        indices = helper.make_tensor("sparse_indices", TensorProto.INT64, [2], [0, rng.choice([3, 4, 9, -1])])
        graph.sparse_initializer.append(helper.make_sparse_tensor(sparse_values, indices, [4]))
    elif kind == 11 and tensor is not None:  # external data outside the model's folder
        for field in ("raw_data", *_DATA_FIELDS):
            tensor.ClearField(field)
        tensor.data_location = TensorProto.EXTERNAL
        entry = tensor.external_data.add()
        entry.key, entry.value = "location", rng.choice([folder_escape, "/etc/hostname", "../x.bin", "missing.bin"])
    elif kind == 12 and graph.output and graph.output[0].type.HasField("tensor_type"):  # a declared type inference contradicts
        output = graph.output[0].type.tensor_type
        if rng.random() < 0.5 or not output.shape.dim:
            output.elem_type = rng.choice([t for t in (1, 6, 7, 9, 11) if t != output.elem_type])
        else:
            dim = rng.choice(output.shape.dim)
            dim.dim_value = (dim.dim_value if dim.HasField("dim_value") else 1) + rng.choice([1, 5])
    elif kind == 13 and tensor is not None:
        tensor.dims.append(-1) if rng.random() < 0.5 else tensor.dims.insert(0, -2)
    elif kind == 14 and graph.node:
        node = rng.choice(graph.node)
        node.op_type = rng.choice(["Reshape", "Flatten", "Concat", "Nope", "", "Split"])
    elif kind == 15 and graph.node:
        node = rng.choice(graph.node)
        if node.input:
            node.input[rng.randrange(len(node.input))] = rng.choice(["", "missing"])
    elif kind == 16 and graph.node:
        node = rng.choice(graph.node)
        attribute = node.attribute.add()
        attribute.name = rng.choice(["axis", "perm", "to", "shape", "value", "axes"])
        attribute.type = cast(AttributeProto.AttributeType, rng.randrange(15))
        attribute.i = rng.choice([2**62, -1, 0, 7])
    else:
        graph.node.extend(graph.node[:rng.randrange(len(graph.node) + 1)])


def malformed_models(seed: int, count: int, models: list[ModelProto], folder_escape: str = "../../x") -> Iterator[
        tuple[int, ModelProto]]:
    """``count`` malformed models from ``seed``: (case number, model)."""
    rng = random.Random(seed)
    for case in range(count):
        model = ModelProto()
        model.CopyFrom(rng.choice(models))
        if rng.random() < 0.7:
            _as_initializers(model, rng)
        for _ in range(rng.choice([1, 1, 2, 3])):
            _mutate(model, rng, folder_escape)
        yield case, model


__all__ = ["malformed_models"]
