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

from typing import Any, cast

from opspec.runtime.contract.values import LONG_RANK, LongShape, TensorType
from opspec.runtime.inference.deferred_types import EMPTY_DIM, UnreadType, plain_tensor
from opspec.runtime.inference.write_types import name_fields, tensor_type_bytes
from opspec.runtime.shape import Sym, SymbolTable
from opspec.runtime.shape.sym import plain_symbols


def with_input_symbols(values: list[Any], symbols: SymbolTable) -> list[Any]:
    """``values`` (graph input types, in order) with each dim of a tensor type that is neither a
    number nor a symbol replaced by a fresh symbol of ``symbols``."""
    found = list(values)
    #: Per input to name, in order: its position, how many dims it names, and its type's dim
    #: fields split at each empty one (a type held as bytes) or else the axes to name.
    unnamed: list[tuple[int, int, list[bytes] | list[int]]] = []
    split: dict[int, list[bytes]] = {}  # per unread type object (inputs may share one)
    for position, value in enumerate(found):
        kind = type(value)
        if kind is UnreadType:
            if EMPTY_DIM in value.key:  # (a quick look first: it may be found in the header only)
                pieces = split.get(id(value))
                if pieces is None:
                    key = value.key
                    pieces = split[id(value)] = key[plain_tensor(key, check_dims=False)[1]:].split(EMPTY_DIM)
                if len(pieces) > 1:
                    unnamed.append((position, len(pieces) - 1, pieces))
        elif kind is TensorType and value.shape is not None and None in value.shape:
            axes = [axis for axis, dim in enumerate(value.shape) if dim is None]
            unnamed.append((position, len(axes), axes))
    if not unnamed:
        return found
    # Every name at once, in input and axis order (what naming them one by one gives).
    names = symbols.fresh_names(sum([count for _, count, _ in unnamed]))
    start = 0
    for position, count, parts in unnamed:
        value, end = found[position], start + count
        if type(value) is UnreadType:
            found[position] = value.with_key(tensor_type_bytes(
                value.elem, _joined(cast(list[bytes], parts), *name_fields(names[start:end]))))
        else:
            found[position] = TensorType(value.elem, _named_shape(value.shape, cast(list[int], parts), names[start:end]))
        start = end
    return found


def named_dim_fields(dim_fields: bytes, names: list[str]) -> bytes | None:
    """Dim fields a writer writes (see :data:`.EMPTY_DIM`) with their empty ones, in order, holding
    ``names`` instead; None unless there is one name per empty field."""
    pieces = dim_fields.split(EMPTY_DIM)
    return _joined(pieces, *name_fields(names)) if len(pieces) == len(names) + 1 else None


def _joined(pieces: list[bytes], heads: list[bytes], texts: list[bytes]) -> bytes:
    """``pieces`` joined with a name's field (its head and text) between each two."""
    if len(pieces) == 2:  # the common case: one dim to name
        return pieces[0] + heads[0] + texts[0] + pieces[1]
    joined: list[bytes] = [b""] * (len(pieces) + 2 * len(heads))
    joined[0::3] = pieces
    joined[1::3] = heads
    joined[2::3] = texts
    return b"".join(joined)


def _named_shape(shape: tuple[Any, ...], axes: list[int], names: list[str]) -> tuple[Any, ...]:
    """``shape`` with the dim at each of ``axes`` (each None) the symbol of the name at its place."""
    dims = list(shape)
    for axis, symbol in zip(axes, plain_symbols(names) if len(dims) >= LONG_RANK else map(Sym, names)):
        dims[axis] = symbol
    if len(dims) < LONG_RANK:
        return tuple(dims)
    named = LongShape(dims)
    encoded = shape.encoded if type(shape) is LongShape else None
    if encoded is not None:  # (each unknown dim of such bytes is an empty field)
        named.encoded = named_dim_fields(encoded, names)
    return named


__all__ = ["named_dim_fields", "with_input_symbols"]
