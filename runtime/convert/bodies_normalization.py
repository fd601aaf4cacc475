"""Bodies of the normalization operators and Gelu, which onnx builds per node."""
from __future__ import annotations

from typing import Any

import math

from opspec.runtime.convert.emitter import Emitter, element_of
from opspec.runtime.convert.values import GraphValues, Refusal
from opspec.runtime.convert.work_node import WorkNode
from opspec.runtime.schema import OpSchema


def stash_settings(node: WorkNode, schema: OpSchema, values: GraphValues) -> tuple[int, int, float]:
    """(element type, stash element type, epsilon) of a normalization node."""
    elem = element_of(node, values)
    stash: Any = node.value("stash_type")
    stash = schema.attributes["stash_type"].default if stash is None and "stash_type" in schema.attributes else stash
    epsilon: Any = node.value("epsilon")
    epsilon = schema.attributes["epsilon"].default if epsilon is None else epsilon
    return elem, stash or elem, epsilon


def trailing_axes(node: WorkNode, schema: OpSchema, values: GraphValues) -> list[int]:
    """The axes from ``axis`` to the last, counted from the back."""
    known = values.type_of(node.inputs[0])
    axis: Any = node.value("axis")
    axis = schema.attributes["axis"].default if axis is None else axis
    if axis < 0:
        return list(range(axis, 0))
    if known is None or known.rank is None:
        raise Refusal("axis counts from the front of an input of unknown rank")
    return list(range(axis - known.rank, 0))


def layer_normalization(node: WorkNode, schema: OpSchema, values: GraphValues) -> list[WorkNode]:
    elem, stash, epsilon = stash_settings(node, schema, values)
    axes = trailing_axes(node, schema, values)
    emit = Emitter(node, values)
    x = node.inputs[0] if stash == elem else emit("Cast", node.inputs[0], to=stash)
    mean = emit("ReduceMean", x, axes=axes)
    centred = emit("Sub", x, mean)
    variance = emit("ReduceMean", emit("Mul", centred, centred), axes=axes)
    spread = emit("Sqrt", emit("Add", variance, emit.scalar("epsilon", stash, epsilon)))
    outputs = node.outputs + [""] * (3 - len(node.outputs))
    inverse = emit("Reciprocal", spread, out=outputs[2] or None)
    normal = emit("Mul", centred, inverse)
    if stash != elem:
        normal = emit("Cast", normal, to=elem)
    has_bias = len(node.inputs) > 2 and node.inputs[2]
    scaled = emit("Mul", normal, node.inputs[1], out=None if has_bias else outputs[0])
    if has_bias:
        emit("Add", scaled, node.inputs[2], out=outputs[0])
    if outputs[1]:
        emit("Identity", mean, out=outputs[1])
    return emit.nodes


def gelu(node: WorkNode, schema: OpSchema, values: GraphValues) -> list[WorkNode]:
    elem = element_of(node, values)
    approximate = node.value("approximate") or "none"
    emit = Emitter(node, values)
    x = node.inputs[0]
    half = emit("Mul", x, emit.scalar("half", elem, 0.5))
    if approximate == "tanh":
        cube = emit("Mul", emit("Mul", x, x), x)
        inner = emit("Add", x, emit("Mul", cube, emit.scalar("coefficient", elem, 0.044715)))
        core = emit("Tanh", emit("Mul", inner, emit.scalar("scale", elem, math.sqrt(2 / math.pi))))
    elif approximate == "none":
        core = emit("Erf", emit("Mul", x, emit.scalar("scale", elem, 1 / math.sqrt(2))))
    else:
        raise Refusal(f"approximate = {approximate!r} is not a form of Gelu")
    emit("Mul", half, emit("Add", core, emit.scalar("one", elem, 1.0)), out=node.outputs[0])
    return emit.nodes


def rms_normalization(node: WorkNode, schema: OpSchema, values: GraphValues) -> list[WorkNode]:
    elem, stash, epsilon = stash_settings(node, schema, values)
    axes = trailing_axes(node, schema, values)
    emit = Emitter(node, values)
    x = node.inputs[0] if stash == elem else emit("Cast", node.inputs[0], to=stash)
    mean_square = emit("ReduceMean", emit("Mul", x, x), axes=axes)
    inverse = emit("Reciprocal", emit("Sqrt", emit("Add", mean_square, emit.scalar("epsilon", stash, epsilon))))
    normal = emit("Mul", x, inverse)
    if stash != elem:
        normal = emit("Cast", normal, to=elem)
    emit("Mul", normal, node.inputs[1], out=node.outputs[0])
    return emit.nodes


def group_normalization(node: WorkNode, schema: OpSchema, values: GraphValues) -> list[WorkNode]:
    """Version 18 scales each group, version 21 each channel."""
    elem, stash, epsilon = stash_settings(node, schema, values)
    groups = node.value("num_groups")
    known = values.type_of(node.inputs[0])
    per_channel = schema.since_version >= 21
    if per_channel and (known is None or known.dims is None):
        raise Refusal("the input's rank is unknown, so the channel scale cannot be laid out")
    emit = Emitter(node, values)
    x = node.inputs[0] if stash == elem else emit("Cast", node.inputs[0], to=stash)
    grouped = emit("Reshape", x, values.add_constant(f"{node.outputs[0]}_grouped", 7, (3,), [0, groups, -1]))
    mean = emit("ReduceMean", grouped, axes=[2])
    centred = emit("Sub", grouped, mean)
    variance = emit("ReduceMean", emit("Mul", centred, centred), axes=[2])
    normal = emit("Div", centred, emit("Sqrt", emit("Add", variance, emit.scalar("epsilon", stash, epsilon))))
    if stash != elem:
        normal = emit("Cast", normal, to=elem)
    whole = emit("Shape", node.inputs[0])
    if per_channel:
        assert known is not None and known.rank is not None  # refused above otherwise
        normal = emit("Reshape", normal, whole)
        layout = values.add_constant(f"{node.outputs[0]}_layout", 7, (known.rank - 1,), [-1] + [1] * (known.rank - 2))
    else:
        layout = values.add_constant(f"{node.outputs[0]}_layout", 7, (2,), [-1, 1])
    scaled = emit("Mul", normal, emit("Reshape", node.inputs[1], layout))
    shifted = emit("Add", scaled, emit("Reshape", node.inputs[2], layout), out=node.outputs[0] if per_channel else None)
    if not per_channel:
        emit("Reshape", shifted, whole, out=node.outputs[0])
    return emit.nodes
