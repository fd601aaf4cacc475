"""The one table of element types: ONNX wire numbers (TensorProto.DataType), names and kinds.

Every module that needs an element type number takes it from here: :class:`ElementType` names
them all (an ``IntEnum``, so a member goes wherever a plain number does: protobuf fields, table
keys); the short names and tables below are plain ints derived from it.
"""
from __future__ import annotations

import enum


class ElementType(enum.IntEnum):
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


#: Element type name (as written in type strings) -> its number (``"float"`` -> 1).
ELEMENT_TYPES: dict[str, int] = {
    member.name.lower(): int(member) for member in ElementType if member is not ElementType.UNDEFINED
}
#: TensorProto.DataType number -> element type name.
ELEMENT_NAMES: dict[int, str] = {number: name for name, number in ELEMENT_TYPES.items()}

# The short names rules use, and the tables below, hold plain ints taken from the enum: CPython
# compares and hashes an exact int on its fast path and an IntEnum member about three times
# slower, and these meet the numbers read from every model's protobuf in the engine's hot loop.
UNDEFINED = int(ElementType.UNDEFINED)
FLOAT, UINT8, INT8 = int(ElementType.FLOAT), int(ElementType.UINT8), int(ElementType.INT8)
UINT16, INT16 = int(ElementType.UINT16), int(ElementType.INT16)
INT32, INT64 = int(ElementType.INT32), int(ElementType.INT64)
STRING, BOOL = int(ElementType.STRING), int(ElementType.BOOL)
FLOAT16, DOUBLE = int(ElementType.FLOAT16), int(ElementType.DOUBLE)
UINT32, UINT64 = int(ElementType.UINT32), int(ElementType.UINT64)
COMPLEX64, COMPLEX128 = int(ElementType.COMPLEX64), int(ElementType.COMPLEX128)
BFLOAT16 = int(ElementType.BFLOAT16)


def _numbers(*members: ElementType) -> tuple[int, ...]:
    return tuple(int(member) for member in members)


_UINT4, _INT4, _UINT2, _INT2 = _numbers(ElementType.UINT4, ElementType.INT4, ElementType.UINT2, ElementType.INT2)
#: Floating-point element types of 8 bits or fewer.
_SMALL_FLOAT_BITS: dict[int, int] = dict(zip(_numbers(
    ElementType.FLOAT8E4M3FN, ElementType.FLOAT8E4M3FNUZ, ElementType.FLOAT8E5M2, ElementType.FLOAT8E5M2FNUZ,
    ElementType.FLOAT4E2M1, ElementType.FLOAT8E8M0, ElementType.FLOAT6E2M3, ElementType.FLOAT6E3M2,
), (8, 8, 8, 8, 4, 8, 6, 6)))

#: Integer element types with (bits, signed).
INT_WIDTHS: dict[int, tuple[int, bool]] = {
    UINT8: (8, False), INT8: (8, True), UINT16: (16, False), INT16: (16, True), INT32: (32, True),
    INT64: (64, True), UINT32: (32, False), UINT64: (64, False), _UINT4: (4, False), _INT4: (4, True),
    _UINT2: (2, False), _INT2: (2, True),
}
#: Storage width in bits of every fixed-size element type (strings have none).
ELEMENT_BITS: dict[int, int] = {
    **{elem: bits for elem, (bits, _) in INT_WIDTHS.items()},
    FLOAT: 32, BOOL: 8, FLOAT16: 16, DOUBLE: 64, COMPLEX64: 64, COMPLEX128: 128, BFLOAT16: 16,
    **_SMALL_FLOAT_BITS,
}
#: Floating-point element types (complex ones excluded).
FLOAT_ELEMS = frozenset({FLOAT, FLOAT16, DOUBLE, BFLOAT16, *_SMALL_FLOAT_BITS})
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
    if type(value) is int or type(value) is ElementType:
        return int(value) if value in ELEMENT_NAMES else None
    return None
