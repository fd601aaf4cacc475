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


__all__ = ["declared_conflicts"]
