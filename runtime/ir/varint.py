"""Protobuf's base-128 varints, read and written by the modules that handle wire bytes directly."""
from __future__ import annotations

_UINT64_MASK = (1 << 64) - 1


class TruncatedVarint(ValueError):
    """The bytes end inside a varint, or it runs past the ten bytes a 64-bit value needs."""


def read_varint(data: bytes | memoryview, position: int) -> tuple[int, int]:
    """The varint at ``position`` and the position after it."""
    value = shift = 0
    end = len(data)
    while position < end and shift < 70:
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, position
        shift += 7
    raise TruncatedVarint(f"no complete varint at byte {position}")


def encode_varint(value: int) -> bytes:
    """``value`` as a varint; a negative number as protobuf writes an int64 (its 64-bit two's complement)."""
    if value < 0:
        value &= _UINT64_MASK
    if value < 0x80:
        return bytes((value,))
    if value < 0x4000:
        return bytes((value & 0x7F | 0x80, value >> 7))
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


__all__ = ["TruncatedVarint", "encode_varint", "read_varint"]
