"""The one table of element types: ONNX wire numbers (TensorProto.DataType), names and kinds.

Every module that needs an element type number takes it from here.
"""
from __future__ import annotations

import enum

#: Element type name (as written in type strings) -> TensorProto.DataType number.
ELEMENT_TYPES: dict[str, int] = {
    "float": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6, "int64": 7,
    "string": 8, "bool": 9, "float16": 10, "double": 11, "uint32": 12, "uint64": 13,
    "complex64": 14, "complex128": 15, "bfloat16": 16, "float8e4m3fn": 17,
    "float8e4m3fnuz": 18, "float8e5m2": 19, "float8e5m2fnuz": 20, "uint4": 21, "int4": 22,
    "float4e2m1": 23, "float8e8m0": 24, "uint2": 25, "int2": 26, "float6e2m3": 27,
    "float6e3m2": 28,
}
#: TensorProto.DataType number -> element type name.
ELEMENT_NAMES: dict[int, str] = {number: name for name, number in ELEMENT_TYPES.items()}



class ElemType(enum.IntEnum):
    """Element types by their TensorProto.DataType number (0: not known)."""

    UNDEFINED = 0
    FLOAT = 1
    UINT8 = 2
    INT8 = 3
    UINT16 = 4
    INT16 = 5
    INT32 = 6
    INT64 = 7
    STRING = 8
    BOOL = 9
    FLOAT16 = 10
    DOUBLE = 11
    UINT32 = 12
    UINT64 = 13
    COMPLEX64 = 14
    COMPLEX128 = 15
    BFLOAT16 = 16
    FLOAT8E4M3FN = 17
    FLOAT8E4M3FNUZ = 18
    FLOAT8E5M2 = 19
    FLOAT8E5M2FNUZ = 20
    UINT4 = 21
    INT4 = 22
    FLOAT4E2M1 = 23
    FLOAT8E8M0 = 24
    UINT2 = 25
    INT2 = 26
    FLOAT6E2M3 = 27
    FLOAT6E3M2 = 28


UNDEFINED = 0
FLOAT, UINT8, INT8, UINT16, INT16, INT32, INT64, STRING, BOOL = 1, 2, 3, 4, 5, 6, 7, 8, 9
FLOAT16, DOUBLE, UINT32, UINT64, COMPLEX64, COMPLEX128, BFLOAT16 = 10, 11, 12, 13, 14, 15, 16

#: Integer element types with (bits, signed).
INT_WIDTHS: dict[int, tuple[int, bool]] = {
    UINT8: (8, False), INT8: (8, True), UINT16: (16, False), INT16: (16, True), INT32: (32, True),
    INT64: (64, True), UINT32: (32, False), UINT64: (64, False), 21: (4, False), 22: (4, True),
    25: (2, False), 26: (2, True),
}
#: Storage width in bits of every fixed-size element type (strings have none).
ELEMENT_BITS: dict[int, int] = {
    **{elem: bits for elem, (bits, _) in INT_WIDTHS.items()},
    FLOAT: 32, BOOL: 8, FLOAT16: 16, DOUBLE: 64, COMPLEX64: 64, COMPLEX128: 128, BFLOAT16: 16,
    17: 8, 18: 8, 19: 8, 20: 8, 23: 4, 24: 8, 27: 6, 28: 6,
}
#: Floating-point element types (complex ones excluded).
FLOAT_ELEMS = frozenset({FLOAT, FLOAT16, DOUBLE, BFLOAT16, 17, 18, 19, 20, 23, 24, 27, 28})
#: Element types whose small tensors carry data through inference (shapes, axes, sizes, masks).
DATA_INT_ELEMS = frozenset({UINT8, INT8, UINT16, INT16, INT32, INT64, BOOL, UINT32, UINT64})
#: Floating-point element types whose small tensors carry data.
DATA_FLOAT_ELEMS = frozenset({FLOAT, FLOAT16, DOUBLE, BFLOAT16})
#: Element types a map may use as its key (by name).
MAP_KEY_TYPES = frozenset({"string", "int64", "int32", "int16", "int8", "uint64", "uint32", "uint16", "uint8"})


def element_name(elem: int) -> str:
    """An element type's name (``float``); ``?`` when unknown, ``<N>`` for a number we do not know."""
    if not elem:
        return "?"
    return ELEMENT_NAMES.get(elem, f"<{elem}>")


def element_code(value: object) -> int | None:
    """An element type number from an attribute value: a number, or a name in any case
    (``"FLOAT"``, ``b"int64"``); None when it names no element type."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        return ELEMENT_TYPES.get(value.strip().lower())
    return value if type(value) is int and value in ELEMENT_NAMES else None
