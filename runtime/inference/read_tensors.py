"""Reading tensors from the IR: ``TensorProto`` / ``SparseTensorProto`` -> types and small data.

Only small tensors are decoded (shapes, axes, sizes, scales): the limits are
:data:`~opspec.runtime.contract.limits.DATA_LIMIT` and ``FLOAT_DATA_LIMIT``. Data stored
outside the model is never read here.
"""
from __future__ import annotations

import struct
from functools import lru_cache
from typing import Any, Mapping, Sequence

from opspec.runtime.contract.elements import DATA_FLOAT_ELEMS as FLOAT_ELEMS
from opspec.runtime.contract.elements import DATA_INT_ELEMS as INT_ELEMS
from opspec.runtime.contract.limits import DATA_LIMIT, FLOAT_DATA_LIMIT
from opspec.runtime.contract.values import Data, TensorType, TensorValue
from opspec.runtime.ir.codes import DataLocation, ElementType

#: ``struct`` codes of the element types whose raw data is read (bfloat16: raw 16-bit patterns, widened).
_RAW_FORMATS = {ElementType.FLOAT: "f", ElementType.UINT8: "B", ElementType.INT8: "b", ElementType.UINT16: "H",
                ElementType.INT16: "h", ElementType.INT32: "i", ElementType.INT64: "q", ElementType.BOOL: "?",
                ElementType.FLOAT16: "e", ElementType.DOUBLE: "d", ElementType.UINT32: "I", ElementType.UINT64: "Q",
                ElementType.BFLOAT16: "H"}
_EXTERNAL = DataLocation.EXTERNAL


def tensor_type(tensor: Any) -> TensorType:
    """A tensor's type: its element type and (fully known) shape."""
    return TensorType(tensor.data_type, tuple(tensor.dims))


#: Per element type whose initializers carry data: the most elements they may have.
INITIALIZER_DATA_LIMITS = {**{elem: DATA_LIMIT for elem in INT_ELEMS}, **{elem: FLOAT_DATA_LIMIT for elem in FLOAT_ELEMS}}


def initializer_data(tensor: Any, dims: tuple[int, ...] | None = None) -> Data | None:
    """The data an initializer carries into inference: small integer tensors (shapes, axes,
    sizes) and very small floating-point ones (scales); None for anything else (see
    :data:`INITIALIZER_DATA_LIMITS`).

    ``dims`` are the tensor's dims when the caller has read them already."""
    elem = tensor.data_type
    limit = INITIALIZER_DATA_LIMITS.get(elem)
    return None if limit is None else tensor_data(tensor, None, limit, dims)


def tensor_data(tensor: Any, elems: frozenset[int] | None = None, limit: int = DATA_LIMIT,
                dims: tuple[int, ...] | None = None) -> Data | None:
    """A small tensor's contents as :class:`Data` (None when too big, external or unreadable).

    ``elems`` restricts the element types read (default: integers and floats).
    """
    elem = tensor.data_type
    if elems is not None and elem not in elems:
        return None
    if elem not in INT_ELEMS and elem not in FLOAT_ELEMS:
        return None
    if dims is None:
        dims = tuple(tensor.dims)
    count = 1
    for dim in dims:
        count *= dim
    if count > limit or count < 0:
        return None
    return counted_tensor_data(tensor, elem, dims, count)


def counted_tensor_data(tensor: Any, elem: int, dims: tuple[int, ...], count: int) -> Data | None:
    """:func:`tensor_data` of a tensor whose element type (one that carries data), dims and
    element count (within its limit, not negative) the caller has read."""
    if tensor.data_location == _EXTERNAL:
        return None
    raw = tensor.raw_data
    if raw:  # models repeat the same small constants many times: each distinct one is decoded once
        return _raw_data(elem, dims, raw)
    values = _typed_values(tensor, elem)
    return _data(elem, dims, values) if len(values) == count else None


@lru_cache(maxsize=4096)
def _raw_data(elem: int, dims: tuple[int, ...], raw: bytes) -> Data | None:
    """:class:`Data` from little-endian ``raw_data`` (None when its length does not fit ``dims``)."""
    code = _RAW_FORMATS.get(elem)  # type: ignore[call-overload]
    count = 1
    for dim in dims:
        count *= dim
    if code is None or len(raw) != count * struct.calcsize(code):
        return None
    values = struct.unpack(f"<{count}{code}", raw)
    if elem == ElementType.BFLOAT16:
        values = tuple([_bfloat16(bits) for bits in values])
    return _data(elem, dims, values)


def _data(elem: int, dims: tuple[int, ...], values: tuple[Any, ...]) -> Data:
    if elem == ElementType.BOOL:
        values = tuple(int(bool(v)) for v in values)
    return Data(dims, values)


def _typed_values(tensor: Any, elem: int) -> tuple[Any, ...]:
    """The elements of a tensor from the typed field its element type uses."""
    if elem == ElementType.INT64:
        return tuple(tensor.int64_data)
    if elem == ElementType.UINT32 or elem == ElementType.UINT64:
        return tuple(tensor.uint64_data)
    if elem == ElementType.FLOAT:
        return tuple(tensor.float_data)
    if elem == ElementType.DOUBLE:
        return tuple(tensor.double_data)
    if elem == ElementType.FLOAT16:
        return tuple([_float16(bits) for bits in tensor.int32_data])
    if elem == ElementType.BFLOAT16:
        return tuple([_bfloat16(bits) for bits in tensor.int32_data])
    return tuple(tensor.int32_data)


def _float16(bits: int) -> float:
    value: float = struct.unpack("<e", struct.pack("<H", bits & 0xFFFF))[0]
    return value


def _bfloat16(bits: int) -> float:
    value: float = struct.unpack("<f", struct.pack("<I", (bits & 0xFFFF) << 16))[0]
    return value


def tensor_value(tensor: Any) -> TensorValue:
    """A tensor attribute as its type and (when small and numeric) its data."""
    return TensorValue(tensor_type(tensor), tensor_data(tensor))


def sparse_tensor_value(sparse: Any) -> TensorValue:
    """A sparse tensor attribute as its dense type, with dense data when small and readable."""
    dense = TensorType(sparse.values.data_type, tuple(sparse.dims))
    return TensorValue(dense, _dense_data(sparse, dense.shape))


def _dense_data(sparse: Any, shape: tuple[int, ...]) -> Data | None:
    """The dense contents of a small sparse tensor: zeros with the given values placed."""
    count = 1
    for dim in shape:
        count *= dim
    if count > DATA_LIMIT:
        return None
    values = tensor_data(sparse.values)
    indices = tensor_data(sparse.indices, INT_ELEMS)
    if values is None or indices is None:
        return None
    given, positions = values.values, list(indices.values)
    if len(indices.shape) == 2:  # coordinates: one row of `rank` indices per value
        rank = indices.shape[1]
        positions = []
        for row in range(len(given)):
            position = 0
            for axis in range(rank):
                position = position * shape[axis] + indices.values[row * rank + axis]
            positions.append(position)
    if len(positions) != len(given) or any(not 0 <= p < count for p in positions):
        return None
    dense = [0.0 if given and type(given[0]) is float else 0] * count
    for position, value in zip(positions, given):
        dense[position] = value
    return Data(shape, tuple(dense))


class InputDataOnDemand(Sequence[Any]):
    """A node's input data (:class:`Data` or None per input), looked up in ``datas`` by name
    only when first asked for; ``read`` says whether it was."""

    __slots__ = ("_names", "_datas", "read")

    def __init__(self, names: Sequence[str], datas: Mapping[str, Any]) -> None:
        self._names = names
        self._datas = datas
        self.read = False

    def __len__(self) -> int:
        return len(self._names)

    def __getitem__(self, index: Any) -> Any:
        self.read = True
        if isinstance(index, slice):
            return [self._datas.get(name) for name in self._names[index]]
        return self._datas.get(self._names[index])


__all__ = ["DATA_LIMIT", "INITIALIZER_DATA_LIMITS", "INT_ELEMS", "InputDataOnDemand", "counted_tensor_data",
           "initializer_data", "sparse_tensor_value", "tensor_data", "tensor_type",
           "tensor_value"]
