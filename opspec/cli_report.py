"""What ``opspec infer`` and ``opspec check`` report: rows of values, as a table or as JSON.

Rows are produced one at a time and written as they come: a report never holds every
value of a model at once.
"""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Callable, Iterable, TextIO

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
    from opspec.runtime.inference.read_tensors import tensor_type
    from opspec.runtime.inference.read_types import DimReader

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
    from opspec.runtime.inference.typeops import is_informative

    return is_informative(value)


def value_rows(values: Iterable[tuple[str, Any, str]], declared: dict[str, Any]) -> Iterator[ValueRow]:
    """Rows for ``InferenceResult.iter_values()``, each marked by how its type came about."""
    for name, value, producer in values:
        name = _text(name)
        given = declared.get(name)
        yield ValueRow(name, _text(producer), _origin(value, given), given if value is None else value)


_HEADER = ("NAME", "PRODUCER", "FROM", "TYPE", "SHAPE")


def print_table(rows: Callable[[], Iterable[ValueRow]], out: TextIO) -> None:
    """One line per value: name, producer, how its type is known, element type, shape.

    ``rows`` gives the rows afresh on each call: one pass measures the columns, the next
    writes the lines as they come."""
    widths = [len(title) for title in _HEADER[:4]]
    for row in rows():
        for column, text in enumerate(_line(row)[:4]):
            if len(text) > widths[column]:
                widths[column] = len(text)
    template = "{:<%d}  {:<%d}  {:<%d}  {:<%d}  {}" % tuple(widths)
    out.write(template.format(*_HEADER).rstrip() + "\n")
    for row in rows():
        out.write(template.format(*_line(row)).rstrip() + "\n")


def _line(row: ValueRow) -> tuple[str, str, str, str, str]:
    from opspec.runtime.contract.values import type_string

    elem, dims = _tensor_parts(row.type)
    if elem is not None:
        shape = _shape_text(dims)
    elif row.type is None:
        elem, shape = "?", "?"
    else:
        elem, shape = type_string(row.type), ""
    return row.name, row.producer, row.origin or "-", elem, shape


def origin_counts(result: Any, graph: Any, declared: dict[str, Any]) -> Counter[str]:
    """How many of ``result``'s values :func:`value_rows` would mark with each origin, without
    visiting every value: only those the model names itself (inputs, initializers,
    ``value_info``, outputs) are looked at; every other value is inferred when inference added
    it to ``value_info`` (``result.added_values``) and unknown otherwise. ``graph`` is the main
    graph as it was inferred, before any new ``value_info`` entry was merged into it."""
    named = {tensor.name for tensor in graph.initializer}
    named.update(value_info.name for value_info in graph.input)
    named.update(sparse.values.name for sparse in graph.sparse_initializer)
    named.update(name for group in (graph.value_info, graph.output) for value_info in group
                 if (name := value_info.name) not in named and result.is_produced(name))
    counts: Counter[str] = Counter()
    known: dict[tuple[int, int], str] = {}  # by (inferred, stated) type objects: both are mostly shared
    type_of, stated = result.type_of, declared.get
    for name in named:
        value, given = type_of(name), stated(name if type(name) is str else _text(name))
        pair = (id(value), id(given))
        origin = known.get(pair)
        if origin is None:
            origin = known[pair] = _origin(value, given)
        counts[origin] += 1
    rest = result.value_count - len(named)
    counts[INFERRED] += result.added_values
    counts[""] += rest - result.added_values
    return counts


def _origin(value: Any, given: Any) -> str:
    """How a value's type came about, from the type the model states for it (or None)."""
    if given is None:
        return INFERRED if _informative(value) else ""
    return DECLARED if value is None or value == given else REFINED


def print_summary(counts: Counter[str], out: TextIO) -> int:
    """How many values are known and how (in place of the table for large models); the value count."""
    total = sum(counts.values())
    parts = [f"{counts[origin]:,} {origin}" for origin in (INFERRED, REFINED, DECLARED) if counts[origin]]
    if counts[""]:
        parts.append(f"{counts['']:,} unknown")
    out.write(f"{total:,} values: {', '.join(parts) or 'none'} (--values lists every value)\n")
    return total


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


class EncodedJSON(str):
    """Text that is already JSON: :func:`write_json` writes it as it is."""


def values_json(rows: Iterable[ValueRow]) -> Iterator[EncodedJSON]:
    """:func:`value_json` of each row, encoded: what follows a value's name is encoded once per
    distinct (type object, origin, producer), as values mostly share their type objects (which
    stay alive, with their ids, while the rows are written)."""
    dumps = json.JSONEncoder(ensure_ascii=False).encode
    encoded: dict[tuple[int, str, str], str] = {}
    for row in rows:
        key = (id(row.type), row.origin, row.producer)
        rest = encoded.get(key)
        if rest is None:
            entry = value_json(row)
            del entry["name"]
            rest = encoded[key] = ", " + dumps(entry)[1:]
        yield EncodedJSON('{"name": ' + dumps(row.name) + rest)


def _dim_json(dim: Any) -> int | str | None:
    return dim if dim is None or type(dim) is int else str(dim)


def problem_json(problem: Any) -> dict[str, Any]:
    """A node error or graph problem for scripts: its kind (a stable code), where it is and
    what is wrong."""
    if hasattr(problem, "op_type"):
        from opspec.runtime.checker.codes import node_code

        entry = {"code": node_code(problem), "node": problem.name or None, "index": problem.index,
                 "op_type": problem.op_type, "domain": problem.domain or "ai.onnx", "message": problem.message,
                 "severity": problem.severity.value}
        if len(problem.violations) == 1:
            (violation,) = problem.violations
            found = list(violation.found) if isinstance(violation.found, tuple) else violation.found
            entry.update(attribute=violation.attribute, constraint=violation.constraint, found=found)
        return entry
    return {"code": problem.code, "where": problem.where, "message": problem.message}


def write_json(document: dict[str, Any], out: TextIO) -> None:
    """One JSON document on one line, for scripts (``jq`` makes it readable).

    A member whose value is an iterator is written as a list, item by item as it comes; an
    :class:`EncodedJSON` item is written as it is."""
    dumps = json.JSONEncoder(ensure_ascii=False).encode
    out.write("{")
    for position, (key, value) in enumerate(document.items()):
        out.write(f"{', ' if position else ''}{dumps(key)}: ")
        if isinstance(value, Iterator):
            out.write("[")
            for index, item in enumerate(value):
                text = item if type(item) is EncodedJSON else dumps(item)
                out.write(f", {text}" if index else text)
            out.write("]")
        else:
            out.write(dumps(value))
    out.write("}\n")


def _text(value: Any) -> str:
    """A name as text (protobuf hands over names that are not valid UTF-8 as bytes)."""
    return value if type(value) is str else bytes(value).decode("utf-8", "replace")


__all__ = ["DECLARED", "EncodedJSON", "INFERRED", "REFINED", "ValueRow", "declared_types", "origin_counts", "print_summary",
           "print_table", "problem_json", "value_json", "value_rows", "values_json",
           "write_json"]
