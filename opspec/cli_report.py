"""What ``opspec infer`` and ``opspec check`` report: rows of values, as a table or as JSON."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable, TextIO

#: How a value's type came about: given by the model, given and then made more precise
#: by inference, or found by inference alone.
DECLARED, REFINED, INFERRED = "declared", "refined", "inferred"


@dataclass(frozen=True)
class ValueRow:
    """One value of the main graph as the reports show it."""

    name: str
    producer: str
    origin: str  # DECLARED, REFINED, INFERRED, or "" when nothing is known
    type: Any  # the runtime's type value, or None


def declared_types(model: Any) -> dict[str, Any]:
    """The types the model itself states for its main graph's values (inputs, initializers,
    value_info and outputs), read before inference."""
    from opspec.runtime.inference.convert import DimReader, tensor_type

    reader = DimReader()
    found: dict[str, Any] = {}
    graph = model.graph
    for tensor in graph.initializer:
        found[tensor.name] = tensor_type(tensor)
    for group in (graph.input, graph.value_info, graph.output):
        for value_info in group:
            value = reader.value_info(value_info)
            if value is not None and _informative(value):
                found.setdefault(value_info.name, value)
    return found


def _informative(value: Any) -> bool:
    from opspec.runtime.inference.convert import is_informative

    return is_informative(value)


def value_rows(values: dict, declared: dict[str, Any]) -> list[ValueRow]:
    """Rows for ``InferenceResult.values``, each marked by how its type came about."""
    rows = []
    for name, (value, producer) in values.items():
        name = _text(name)
        given = declared.get(name)
        if given is None:
            origin = INFERRED if value is not None and _informative(value) else ""
        else:
            origin = DECLARED if value is None or value == given else REFINED
            value = given if value is None else value
        rows.append(ValueRow(name, _text(producer), origin, value))
    return rows


def print_table(rows: Iterable[ValueRow], out: TextIO) -> None:
    """One line per value: name, producer, how its type is known, element type, shape."""
    from opspec.runtime.contract.values import type_string

    lines = []
    for row in rows:
        elem, dims = _tensor_parts(row.type)
        if elem is not None:
            shape = _shape_text(dims)
        elif row.type is None:
            elem, shape = "?", "?"
        else:
            elem, shape = type_string(row.type), ""
        lines.append((row.name, row.producer, row.origin or "-", elem, shape))
    header = ("NAME", "PRODUCER", "FROM", "TYPE", "SHAPE")
    widths = [max([len(header[i])] + [len(line[i]) for line in lines]) for i in range(4)]
    template = "{:<%d}  {:<%d}  {:<%d}  {:<%d}  {}" % tuple(widths)
    out.write(template.format(*header).rstrip() + "\n")
    out.write("".join(template.format(*line).rstrip() + "\n" for line in lines))


def _tensor_parts(value: Any) -> tuple[str | None, Any]:
    """(element type name, shape) of a tensor or sparse tensor type; (None, None) otherwise."""
    from opspec.runtime.inference.typeops import elem_name
    from opspec.runtime.contract.values import SparseTensorType, TensorType

    if type(value) is TensorType or type(value) is SparseTensorType:
        return elem_name(value.elem), value.shape
    return None, None


def _shape_text(shape: Any) -> str:
    from opspec.runtime.shape import format_shape

    return format_shape(shape)


def value_json(row: ValueRow) -> dict[str, Any]:
    """A value for scripts: dims are ints, symbol expressions as text, or null when unknown;
    ``shape`` is null when even the rank is unknown."""
    from opspec.runtime.contract.values import SparseTensorType, type_string

    elem, dims = _tensor_parts(row.type)
    entry: dict[str, Any] = {"name": row.name, "producer": row.producer, "from": row.origin or None,
                             "type": type_string(row.type) if row.type is not None else None}
    if elem is not None:
        entry["kind"] = "sparse_tensor" if type(row.type) is SparseTensorType else "tensor"
        entry["elem_type"] = None if elem == "?" else elem
        entry["shape"] = None if dims is None else [_dim_json(dim) for dim in dims]
    return entry


def _dim_json(dim: Any) -> int | str | None:
    return dim if dim is None or type(dim) is int else str(dim)


def problem_json(problem: Any) -> dict[str, Any]:
    """A node error or graph problem for scripts: its kind (a stable code), where it is and
    what is wrong."""
    if hasattr(problem, "op_type"):
        from opspec.runtime.checker.codes import node_code

        return {"code": node_code(problem.message), "node": problem.name or None, "index": problem.index,
                "op_type": problem.op_type, "domain": problem.domain or "ai.onnx", "message": problem.message}
    return {"code": problem.code, "where": problem.where, "message": problem.message}


def write_json(document: dict[str, Any], out: TextIO) -> None:
    """One JSON document on one line, for scripts (``jq`` makes it readable)."""
    json.dump(document, out, ensure_ascii=False)
    out.write("\n")


def _text(value: Any) -> str:
    """A name as text (protobuf hands over names that are not valid UTF-8 as bytes)."""
    return value if type(value) is str else bytes(value).decode("utf-8", "replace")


__all__ = ["DECLARED", "INFERRED", "REFINED", "ValueRow", "declared_types", "print_table", "problem_json",
           "value_json", "value_rows", "write_json"]
