"""Declarations of the main graph that inference reads as saying nothing, held against what
it infers: a negative ``dim_value`` (read as an unknown dim, since no tensor has a negative
length) where inference proves a length, and an opaque type where inference proves a tensor,
sequence, map or optional. onnx compares both as written, and so does ``opspec check``.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator

from opspec.runtime.contract.values import TensorType
from opspec.runtime.inference.graph_checks import GraphProblem
from opspec.runtime.inference.typeops import describe


def declared_conflicts(graph: Any, type_of: Callable[[str], Any]) -> Iterator[GraphProblem]:
    """The graph outputs and ``value_info`` entries whose opaque type or negative dim
    contradicts the type ``type_of(name)`` inference gives the value, and those naming a
    graph input or initializer whose element type, rank or a dim contradicts its own (no
    node's output is merged with them)."""
    where = f"graph '{graph.name}'"
    fed = {value.name for value in graph.input} | {tensor.name for tensor in graph.initializer}
    for group in (graph.output, graph.value_info):
        for value in group:
            if not value.HasField("type"):
                continue
            case = value.type.WhichOneof("value")
            if case not in ("opaque_type", "tensor_type"):
                continue
            inferred = type_of(value.name)
            if inferred is None:
                continue
            if case == "opaque_type":
                yield GraphProblem(where, f"value '{value.name}' is declared of an opaque type, but inference "
                                   f"gives {describe(inferred)}", "declared-conflict")
            elif type(inferred) is TensorType:
                for problem in _tensor_conflicts(value.type.tensor_type, inferred, value.name in fed):
                    yield GraphProblem(where, f"value '{value.name}' {problem}", "declared-conflict")


#: The prefix of the symbols standing for graph inputs' negative dims while they are followed.
_NEGATIVE = "negative_dim__"


def negative_input_dims(model: Any) -> tuple[Any, dict[str, tuple[str, int, int]]] | None:
    """A copy of ``model`` whose main graph inputs' negative dims are symbols of their own
    and whose outputs and ``value_info`` declare no shapes, with what each symbol stands for
    (input, axis, dim); None when no input has a negative dim.

    onnx takes a negative dim as a number that flows through the graph; inference reads it as
    unknown. Inferring the copy shows where each one lands, to be held against the shapes
    declared there (:func:`negative_dims_landing`).
    """
    copy = None
    placeholders: dict[str, tuple[str, int, int]] = {}
    for position, value in enumerate(model.graph.input):
        if value.type.WhichOneof("value") != "tensor_type":
            continue
        for axis, dim in enumerate(value.type.tensor_type.shape.dim):
            if dim.WhichOneof("value") == "dim_value" and dim.dim_value < 0:
                if copy is None:
                    copy = type(model)()
                    copy.CopyFrom(model)
                name = f"{_NEGATIVE}{len(placeholders)}"
                placeholders[name] = (value.name, axis, dim.dim_value)
                copy.graph.input[position].type.tensor_type.shape.dim[axis].dim_param = name
    if copy is None:
        return None
    copy.graph.ClearField("value_info")
    for value in copy.graph.output:
        if value.type.WhichOneof("value") == "tensor_type":
            value.type.tensor_type.ClearField("shape")
    return copy, placeholders


def negative_dims_landing(graph: Any, type_of: Callable[[str], Any],
                          placeholders: dict[str, tuple[str, int, int]]) -> Iterator[GraphProblem]:
    """The graph outputs and ``value_info`` entries that state a length where a graph input's
    negative dim lands (``type_of`` answers for the copy of :func:`negative_input_dims`)."""
    where = f"graph '{graph.name}'"
    for group in (graph.output, graph.value_info):
        for value in group:
            if value.type.WhichOneof("value") != "tensor_type" or not value.type.tensor_type.HasField("shape"):
                continue
            inferred = type_of(value.name)
            if type(inferred) is not TensorType or inferred.shape is None:
                continue
            dims = value.type.tensor_type.shape.dim
            if len(dims) != len(inferred.shape):
                continue
            for axis, (dim, landed) in enumerate(zip(dims, inferred.shape)):
                source = placeholders.get(getattr(landed, "name", None) or "")
                if source is not None and dim.WhichOneof("value") == "dim_value" and dim.dim_value >= 0:
                    yield GraphProblem(where, f"value '{value.name}' is declared with dim {dim.dim_value} at axis "
                                       f"{axis}, where input '{source[0]}' brings its dim {source[2]} (axis "
                                       f"{source[1]})", "declared-conflict")


def _tensor_conflicts(declared: Any, inferred: TensorType, fed: bool) -> Iterator[str]:
    """How a declared tensor type contradicts the inferred one: a negative dim where a length
    is proven, and for a value fed from outside (``fed``) also its element type and rank and
    any dim it states as a number."""
    if fed and declared.elem_type and inferred.elem and declared.elem_type != inferred.elem:
        yield f"is declared with element type {declared.elem_type}, but is fed as {describe(inferred)}"
    if inferred.shape is None or not declared.HasField("shape"):
        return
    dims = declared.shape.dim
    if len(dims) != len(inferred.shape):
        if fed:
            yield f"is declared of rank {len(dims)}, but is fed as {describe(inferred)}"
        return
    for axis, (dim, proven) in enumerate(zip(dims, inferred.shape)):
        if dim.WhichOneof("value") != "dim_value" or type(proven) is not int:
            continue
        if dim.dim_value < 0 or (fed and dim.dim_value != proven):
            yield f"is declared with dim {dim.dim_value} at axis {axis}, but inference gives {proven}"


__all__ = ["declared_conflicts", "negative_dims_landing", "negative_input_dims"]
