"""Checks of one stored tensor: its data type, which field holds its data, how much data
there is for its dims, and where external data lies. Nothing is ever read from disk.

ONNX stores each element type in one field (``float_data`` for float and complex64,
``int32_data`` for the small integer and float types, ...) or as ``raw_data`` bytes; the
sub-byte types pack two (4-bit) or four (2-bit) values per stored item.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Iterator

from opspec.runtime.checker.problems import ModelProblem
from opspec.runtime.ir.codes import DataLocation, ElementType

_FIELDS = frozenset({"float_data", "int32_data", "string_data", "int64_data", "raw_data", "double_data",
                     "uint64_data"})

#: data type -> (the field its values go in, stored items per element, raw bytes per element);
#: None where ONNX does not define the packing.
_LAYOUT: dict[int, tuple[str, float | None, float | None]] = {
    ElementType.FLOAT: ("float_data", 1, 4),
    ElementType.UINT8: ("int32_data", 1, 1),
    ElementType.INT8: ("int32_data", 1, 1),
    ElementType.UINT16: ("int32_data", 1, 2),
    ElementType.INT16: ("int32_data", 1, 2),
    ElementType.INT32: ("int32_data", 1, 4),
    ElementType.INT64: ("int64_data", 1, 8),
    ElementType.STRING: ("string_data", 1, None),
    ElementType.BOOL: ("int32_data", 1, 1),
    ElementType.FLOAT16: ("int32_data", 1, 2),
    ElementType.DOUBLE: ("double_data", 1, 8),
    ElementType.UINT32: ("uint64_data", 1, 4),
    ElementType.UINT64: ("uint64_data", 1, 8),
    ElementType.COMPLEX64: ("float_data", 2, 8),
    ElementType.COMPLEX128: ("double_data", 2, 16),
    ElementType.BFLOAT16: ("int32_data", 1, 2),
    ElementType.FLOAT8E4M3FN: ("int32_data", 1, 1),
    ElementType.FLOAT8E4M3FNUZ: ("int32_data", 1, 1),
    ElementType.FLOAT8E5M2: ("int32_data", 1, 1),
    ElementType.FLOAT8E5M2FNUZ: ("int32_data", 1, 1),
    ElementType.UINT4: ("int32_data", 0.5, 0.5),
    ElementType.INT4: ("int32_data", 0.5, 0.5),
    ElementType.FLOAT4E2M1: ("int32_data", 0.5, 0.5),
    ElementType.FLOAT8E8M0: ("int32_data", 1, 1),
    ElementType.UINT2: ("int32_data", 0.25, 0.25),
    ElementType.INT2: ("int32_data", 0.25, 0.25),
    ElementType.FLOAT6E2M3: ("int32_data", None, None),
    ElementType.FLOAT6E3M2: ("int32_data", None, None),
}

#: The element types ONNX defines (TensorProto.DataType without UNDEFINED).
DATA_TYPES = frozenset(_LAYOUT)

Report = Callable[[str, str], None]  # (message, code)


def _stored(count: int, per_element: float) -> int:
    return math.ceil(count * per_element)


def check_tensor(tensor: Any, report: Report, location_problem: Callable[[str, str], str | None]) -> None:
    """Report every problem of ``tensor``; ``location_problem(name, location)`` says why an
    external location may not be used (None when it may)."""
    if _fine_raw(tensor):
        return
    data_type, dims, external, filled, empty_raw = 0, (), False, [], False
    for field, value in tensor.ListFields():  # one pass over the fields that are set: models hold many tensors
        name = field.name
        if name in _FIELDS:
            if len(value):
                filled.append((name, len(value)))
            elif name == "raw_data":
                empty_raw = True  # set but empty: readers that look at raw_data first find nothing
        elif name == "dims":
            dims = value
        elif name == "data_type":
            data_type = value
        elif name == "data_location":
            external = value == DataLocation.EXTERNAL
    layout = _LAYOUT.get(data_type)
    if layout is None:
        _report_data_type(tensor, data_type, report)
    if dims and min(dims) < 0:
        report(f"tensor '{tensor.name}' has a negative dim ({min(dims)}) in {list(dims)}", "tensor-dims")
        return
    if external:
        _check_external(tensor, [name for name, _ in filled], report, location_problem)
        return
    count = math.prod(dims)
    if empty_raw and count:
        filled.append(("raw_data", 0))
    if len(filled) == 1 and count and layout is not None:
        field, size = filled[0]
        expected_field, per_item, per_byte = layout
        if field == "raw_data" and data_type != ElementType.STRING:
            if per_byte is not None and size != _stored(count, per_byte):
                report(f"tensor '{tensor.name}' has {size} bytes of raw_data, but dims {list(dims)} of data type "
                       f"{data_type} need {_stored(count, per_byte)}", "tensor-data-count")
        elif field != expected_field:
            report(f"tensor '{tensor.name}' of data type {data_type} holds its values in {field}; they belong in "
                   f"{expected_field}" + ("" if field != "raw_data" else " (strings cannot be raw bytes)"),
                   "tensor-data-field")
        elif per_item is not None and size != _stored(count, per_item):
            report(f"tensor '{tensor.name}' has {size} values in {field}, but dims {list(dims)} need "
                   f"{_stored(count, per_item)}", "tensor-data-count")
    elif count == 0 and filled:
        report(f"tensor '{tensor.name}' has no elements (dims {list(dims)}) but holds data in {filled[0][0]}",
               "tensor-data-count")
    elif count and len(filled) != 1:
        found = " and ".join(name for name, _ in filled) or "none"
        report(f"tensor '{tensor.name}' must hold its data in exactly one field, found {found}", "tensor-data-field")


def _fine_raw(tensor: Any) -> bool:
    """Whether ``tensor`` is the common case that is fine: the right number of raw bytes for
    its dims and type, and nothing else (a few field reads, where listing every field would
    copy them all)."""
    raw = tensor.raw_data
    if not raw or tensor.data_location:
        return False
    layout = _LAYOUT.get(tensor.data_type)
    if layout is None or layout[2] is None or tensor.data_type == ElementType.STRING:
        return False
    dims = tensor.dims
    return (len(raw) == _stored(math.prod(dims), layout[2]) and (not dims or min(dims) >= 0)
            and not (tensor.float_data or tensor.int32_data or tensor.int64_data or tensor.double_data
                     or tensor.uint64_data or tensor.string_data))


def _report_data_type(tensor: Any, data_type: int, report: Report) -> None:
    if data_type == ElementType.UNDEFINED:
        report(f"tensor '{tensor.name}' has data type UNDEFINED", "tensor-data-type")
    else:
        report(f"tensor '{tensor.name}' has data type {data_type}, which is not an ONNX data type",
               "tensor-data-type")


def _check_external(tensor: Any, filled: list[str], report: Report,
                    location_problem: Callable[[str, str], str | None]) -> None:
    if filled:
        report(f"tensor '{tensor.name}' is stored externally but also holds data in {filled[0]}", "tensor-data-field")
    locations = [entry.value for entry in tensor.external_data if entry.key == "location"]
    if not locations:
        report(f"tensor '{tensor.name}' is stored externally but has no location", "external-data")
        return
    problem = location_problem(tensor.name, locations[0])
    if problem is not None:
        report(problem, "external-data")


def check_sparse(sparse: Any, report: Report, location_problem: Callable[[str, str], str | None]) -> None:
    """Report every problem of a sparse tensor: its values and indices as tensors, their
    ranks and counts, and every index inside the dense shape."""
    values, indices = sparse.values, sparse.indices
    label = f"sparse tensor '{values.name}'"
    check_tensor(values, report, location_problem)
    dense = list(sparse.dims)
    if not dense:
        report(f"{label} has no dims", "sparse-tensor")
        return
    if len(values.dims) != 1:
        report(f"{label}: values must have rank 1, found rank {len(values.dims)}", "sparse-tensor")
        return
    if not sparse.HasField("indices"):
        return
    check_tensor(indices, report, location_problem)
    count = values.dims[0]
    shape = list(indices.dims)
    if len(shape) == 1:
        bound, width = math.prod(dense), 1
    elif len(shape) == 2 and shape[1] == len(dense):
        bound, width = 0, len(dense)
    else:
        report(f"{label}: indices have dims {shape}, expected [{count}] or [{count}, {len(dense)}]",
               "sparse-tensor")
        return
    if shape[0] != count:
        report(f"{label}: {shape[0]} indices for {count} values", "sparse-tensor")
        return
    flat = list(_int64_values(indices))
    if len(flat) != count * width:
        return  # already reported as the indices' own data count
    for position in range(count):
        index = flat[position * width:(position + 1) * width]
        limits = [bound] if width == 1 else dense
        if any(not 0 <= value < limit for value, limit in zip(index, limits)):
            report(f"{label}: index {index if width > 1 else index[0]} at position {position} is outside "
                   f"dims {dense}", "sparse-tensor")
            return


def _int64_values(tensor: Any) -> Iterator[int]:
    if tensor.data_type != ElementType.INT64:
        return iter(())
    if tensor.raw_data:
        data = tensor.raw_data
        return (int.from_bytes(data[i:i + 8], "little", signed=True) for i in range(0, len(data) - 7, 8))
    return iter(tensor.int64_data)


__all__ = ["check_sparse", "check_tensor"]
