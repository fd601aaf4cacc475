"""Graph input dims that have neither a value nor a name, given a symbol each.

Some tools (skl2onnx for its batch dim) write a graph input's dim with neither ``dim_value``
nor ``dim_param``. Read as unknown, it would lose that every value computed along that axis
has the same size. So each such dim gets a fresh symbol of its own, one per input and axis,
which equals no name of the model and no other such dim: equalities that follow from the
graph are kept, and none is claimed that the model does not state. The input's own
declaration is never rewritten; values of the graph that carry the symbol are written with
it, as every fresh symbol inference makes up is (``unk__0``, ``unk__1``..., named as onnx
names its own).

The names are made together, in input and axis order. A type still held as its bytes
(:class:`UnreadType`) gets them in its bytes, and a long shape read from bytes a writer
writes keeps such bytes (:attr:`LongShape.encoded`): each empty ``dim`` field is replaced by
its name's, so a shape of 10^5 dims is named, and written back, without a step per dim.
"""
from __future__ import annotations

from typing import Any

from opspec.runtime.contract.values import LONG_RANK, LongShape, TensorType
from opspec.runtime.inference.deferred_types import UnreadType, plain_tensor
from opspec.runtime.inference.write_types import name_fields, tensor_type_bytes
from opspec.runtime.shape import SymbolTable
from opspec.runtime.shape.sym import plain_symbols

#: A ``TensorShapeProto.dim`` field holding an empty ``Dimension``: neither value nor name.
#: In dim fields a writer writes, each a number, a plain name or neither, these two bytes are
#: only ever such a field: a zero byte is otherwise only a number's varint 0, after the
#: ``dim_value`` key 0x08 (a varint's other bytes, a length and a name's letters are not zero).
EMPTY_DIM = b"\x0a\x00"


def with_input_symbols(values: list[Any], symbols: SymbolTable) -> list[Any]:
    """``values`` (graph input types, in order) with each dim of a tensor type that is neither a
    number nor a symbol replaced by a fresh symbol of ``symbols``."""
    found = list(values)
    for position, value in enumerate(found):
        kind = type(value)
        if kind is UnreadType:
            if EMPTY_DIM in value.key:  # (a quick look first: it may be found in the header only)
                found[position] = _named_unread(value, symbols)
        elif kind is TensorType and value.shape is not None and None in value.shape:
            found[position] = TensorType(value.elem, _named_shape(value.shape, symbols))
    return found


def named_dim_fields(dim_fields: bytes, names: list[str]) -> bytes:
    """Dim fields a writer writes (see :data:`EMPTY_DIM`) with their empty ones, in order, holding
    ``names`` instead (one per empty field)."""
    pieces = dim_fields.split(EMPTY_DIM)
    if len(pieces) != len(names) + 1:
        raise ValueError(f"{len(pieces) - 1} unnamed dims for {len(names)} names")
    joined: list[bytes] = [b""] * (len(pieces) + 2 * len(names))
    joined[0::3] = pieces
    joined[1::3], joined[2::3] = name_fields(names)
    return b"".join(joined)


def _named_unread(value: UnreadType, symbols: SymbolTable) -> UnreadType:
    """``value`` with each unnamed dim named in its bytes."""
    key = value.key
    _, start = plain_tensor(key, check_dims=False)
    dim_fields = key[start:]
    count = dim_fields.count(EMPTY_DIM)
    if not count:
        return value
    return value.with_key(tensor_type_bytes(value.elem, named_dim_fields(dim_fields, symbols.fresh_names(count))))


def _named_shape(shape: tuple[Any, ...], symbols: SymbolTable) -> tuple[Any, ...]:
    """``shape`` with each None a fresh symbol."""
    dims = list(shape)
    unnamed = [axis for axis, dim in enumerate(dims) if dim is None]
    names = symbols.fresh_names(len(unnamed))
    for axis, symbol in zip(unnamed, plain_symbols(names)):
        dims[axis] = symbol
    if len(dims) < LONG_RANK:
        return tuple(dims)
    named = LongShape(dims)
    encoded = shape.encoded if type(shape) is LongShape else None
    if encoded is not None:
        named.encoded = named_dim_fields(encoded, names)
    return named


__all__ = ["EMPTY_DIM", "named_dim_fields", "with_input_symbols"]
