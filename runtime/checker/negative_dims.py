"""Graph inputs' negative dims followed as the numbers they are, as onnx takes them.

Inference reads a negative ``dim_value`` as an unknown dim (no tensor has a negative
length); onnx's checker takes it as a number that flows through the graph, and refuses the
model where it meets another length: a dim a node requires to be equal (Gemm's inner dims,
Concat's other axes) or a declared length where it lands. ``opspec check`` follows each one
the same way, standing in for it a number no model uses otherwise, on a copy of the model
whose outputs and ``value_info`` declare no shapes.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator

from opspec.runtime.contract.values import TensorType
from opspec.runtime.inference.graph_checks import GraphProblem

#: Stand-ins are this base plus the negative dim's magnitude modulo ``_SPREAD``: far from any
#: real length, and products of two of them still fit an int64.
_BASE, _SPREAD = 999_983_000_000, 1_000_000
#: Lengths computed from a stand-in (a third of it, twice it) stay above this; no real model's are.
_DERIVED = 10**9


def with_stand_ins(model: Any) -> tuple[Any, dict[int, tuple[str, int, int]]] | None:
    """A copy of ``model`` whose main graph inputs' negative dims are stand-in numbers and whose
    outputs and ``value_info`` declare no shapes, with what each stand-in stands for (input,
    axis, dim); None when no input has a negative dim."""
    copy = None
    stand_ins: dict[int, tuple[str, int, int]] = {}
    for position, value in enumerate(model.graph.input):
        if value.type.WhichOneof("value") != "tensor_type":
            continue
        for axis, dim in enumerate(value.type.tensor_type.shape.dim):
            if dim.WhichOneof("value") == "dim_value" and dim.dim_value < 0:
                if copy is None:
                    copy = type(model)()
                    copy.CopyFrom(model)
                number = _BASE + (-dim.dim_value) % _SPREAD
                stand_ins.setdefault(number, (value.name, axis, dim.dim_value))
                copy.graph.input[position].type.tensor_type.shape.dim[axis].dim_value = number
    if copy is None:
        return None
    copy.graph.ClearField("value_info")
    for value in copy.graph.output:
        if value.type.WhichOneof("value") == "tensor_type":
            value.type.tensor_type.ClearField("shape")
    return copy, stand_ins


def negative_dim_problems(graph: Any, stand_ins: dict[int, tuple[str, int, int]], type_of: Callable[[str], Any],
                          errors: list[Any], known: set[str]) -> Iterator[GraphProblem]:
    """The problems the stand-ins bring: node errors of the copy (``errors``) that name one and
    that the model itself does not have (``known``: its node errors' text), and graph outputs
    and ``value_info`` entries stating a length where one lands, or a length computed from one
    (``type_of`` answers for the copy: a length of ``_DERIVED`` or more can only come from a stand-in)."""
    where = f"graph '{graph.name}'"
    for error in errors:
        hit = next((number for number in stand_ins if str(number) in error.message), None)
        if hit is None or str(error) in known or "does not fit" in error.message:
            continue
        name, axis, dim = stand_ins[hit]
        message = error.message.replace(str(hit), str(dim))
        yield GraphProblem(error.where, f"with input '{name}''s dim {dim} (axis {axis}) taken as a number: {message}",
                           "declared-conflict")
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
            for position, (declared, landed) in enumerate(zip(dims, inferred.shape)):
                if type(landed) is not int or declared.WhichOneof("value") != "dim_value" or declared.dim_value < 0:
                    continue
                source = stand_ins.get(landed)
                if source is not None:
                    yield GraphProblem(where, f"value '{value.name}' is declared with dim {declared.dim_value} at "
                                       f"axis {position}, where input '{source[0]}' brings its dim {source[2]} "
                                       f"(axis {source[1]})", "declared-conflict")
                elif landed >= _DERIVED and landed != declared.dim_value:
                    yield GraphProblem(where, f"value '{value.name}' is declared with dim {declared.dim_value} at "
                                       f"axis {position}, which inference computes from a graph input's negative "
                                       "dim", "declared-conflict")


__all__ = ["negative_dim_problems", "with_stand_ins"]
