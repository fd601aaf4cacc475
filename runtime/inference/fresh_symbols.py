"""Kept results that made up fresh symbols, handed out again with fresh symbols of their own.

A nested graph or a function body inferred again with the same inputs gives the same
result, except that each fresh symbol the inference makes up (the length of a NonZero's
output, say) is a new one: two inferences must never claim that their unknown sizes are
equal. So a kept result is handed out with each fresh symbol it made replaced by a new
fresh symbol, issued in the order the first inference issued its own, which is what
inferring it again gives. A value of a kind this module does not know is never guessed
at: :class:`NotRenamable` is raised, and the result is not kept.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping, Sequence

from opspec.runtime.contract.context import Subgraph
from opspec.runtime.contract.values import (
    Data, MapType, OptionalType, SequenceType, SparseTensorType, TensorType, TensorValue,
)
from opspec.runtime.inference.write_back import SubgraphRecord
from opspec.runtime.shape.sym import Sym
from opspec.runtime.shape.symbols import SymbolTable

_PLAIN = (int, float, str, bytes, bool, type(None))


class NotRenamable(Exception):
    """A kept result holds a value whose symbols cannot be renamed."""


def issued_since(symbols: SymbolTable, mark: int) -> tuple[str, ...]:
    """The fresh names ``symbols`` handed out since its ``issued`` count was ``mark``."""
    return tuple(symbols.names_issued[mark:])


def kept_names(value: Any, symbols: SymbolTable, mark: int) -> tuple[str, ...] | None:
    """The fresh names made since ``symbols``'s count was ``mark`` that ``value`` holds, in order, to
    keep ``value`` with (None: it holds a kind that cannot be renamed, and is not kept)."""
    try:
        return fresh_in(value, issued_since(symbols, mark))
    except NotRenamable:
        return None


def fresh_in(value: Any, issued: Sequence[str]) -> tuple[str, ...]:
    """The names of ``issued`` that ``value`` holds, in ``issued``'s order (names made up and
    dropped again on the way, such as a Loop's relaxed dims, need no new name).
    Raises :class:`NotRenamable` when ``value`` holds a kind this module does not know."""
    if not issued:
        return ()
    present = _names_in(value)
    return tuple([name for name in issued if name in present])


def renewed(value: Any, made: Sequence[str], symbols: SymbolTable) -> Any:
    """``value`` (whose fresh names ``made`` came from :func:`fresh_in`) with each name in ``made``
    replaced by a new fresh name of ``symbols``, issued in ``made``'s order."""
    if not made:
        return value
    return _Renamer({name: symbols.fresh_name() for name in made}).value(value)


def _names_in(value: Any) -> set[str]:
    """Every symbol name ``value`` holds (the kinds :class:`_Renamer` rebuilds; any other kind
    raises :class:`NotRenamable`)."""
    names: set[str] = set()
    pending = [value]
    while pending:
        item = pending.pop()
        kind = type(item)
        if kind is Sym:
            names.update(item.names())
        elif kind in _PLAIN:
            continue
        elif kind in (TensorType, SparseTensorType):
            pending.extend(item.shape or ())
        elif kind in (SequenceType, OptionalType):
            pending.append(item.elem)
        elif kind is MapType:
            pending.append(item.value)
        elif kind in (Data, TensorValue, tuple, list):
            pending.extend(item)
        elif kind is Subgraph:
            pending += [item.inputs, item.outputs]
        elif kind is SubgraphRecord:
            pending += [item.types, item.value_info_types, item.output_types]
        elif kind is dict:
            pending.extend(item.values())
        else:
            raise NotRenamable(kind.__name__)
    return names


class _Renamer:
    """Rebuilds values with symbols renamed (the kinds :func:`_names_in` accepts)."""

    __slots__ = ("names",)

    def __init__(self, names: Mapping[str, str]) -> None:
        self.names = names

    def value(self, item: Any) -> Any:
        kind = type(item)
        if kind is Sym:
            return item.renamed(self.names)
        if kind in _PLAIN:
            return item
        if kind in (TensorType, SparseTensorType):
            return item if item.shape is None else kind(item.elem, self.sequence(tuple(item.shape)))
        if kind in (SequenceType, OptionalType):
            return kind(self.value(item.elem))
        if kind is MapType:
            return MapType(item.key, self.value(item.value))
        if kind in (Data, TensorValue):
            return kind(*[self.value(field) for field in item])
        if kind is Subgraph:
            return Subgraph(item.name, self.sequence(item.inputs), self.sequence(item.outputs))
        if kind is SubgraphRecord:
            return replace(item, types=self.mapping(item.types), value_info_types=self.mapping(item.value_info_types),
                           output_types=self.mapping(item.output_types))
        if kind in (tuple, list):
            return self.sequence(item)
        return self.mapping(item)  # a dict: _names_in lets nothing else through

    def sequence(self, items: Any) -> Any:
        return type(items)([self.value(item) for item in items])

    def mapping(self, items: dict[Any, Any]) -> dict[Any, Any]:
        return {key: self.value(item) for key, item in items.items()}


__all__ = ["NotRenamable", "fresh_in", "issued_since", "kept_names", "renewed"]
