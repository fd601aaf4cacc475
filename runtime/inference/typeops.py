"""Merging and describing value types (what the engine does with declared vs inferred types)."""
from __future__ import annotations

from typing import Any

from opspec.runtime.contract.values import (
    LongShape,
    MapType,
    OptionalType,
    SequenceType,
    SparseTensorType,
    TensorType,
    type_string,
)
from opspec.runtime.contract.elements import element_name
from opspec.runtime.contract.limits import MAX_DIM
from opspec.runtime.shape import ShapeError, Sym, format_shape, merge_shapes


class TypeConflict(ValueError):
    """Two types of one value that cannot both hold."""


def merge_types(declared: Any, inferred: Any) -> Any:
    """The most specific type consistent with both; :class:`TypeConflict` when they contradict.

    Unknown parts yield to known ones; of two different symbols the declared one is kept.
    """
    if declared is None:
        return inferred
    if inferred is None or declared is inferred:
        return declared
    kind = type(declared)
    if kind is not type(inferred):
        raise TypeConflict(f"{describe(declared)} is not {describe(inferred)}")
    if kind is TensorType or kind is SparseTensorType:
        elem_a, elem_b = declared.elem, inferred.elem
        if elem_a and elem_b and elem_a != elem_b:
            raise TypeConflict(f"element types {elem_name(elem_a)} and {elem_name(elem_b)} differ")
        try:
            shape = merge_shapes(declared.shape, inferred.shape)
        except ShapeError as error:
            raise TypeConflict(str(error)) from None
        elem = elem_a or elem_b
        if elem == elem_a and shape is declared.shape:
            return declared
        return kind(elem, shape)
    if kind is SequenceType or kind is OptionalType:
        return kind(merge_types(declared.elem, inferred.elem))
    if kind is MapType:
        if declared.key and inferred.key and declared.key != inferred.key:
            raise TypeConflict(f"map key types {elem_name(declared.key)} and {elem_name(inferred.key)} differ")
        return MapType(declared.key or inferred.key, merge_types(declared.value, inferred.value))
    if declared != inferred:
        raise TypeConflict(f"{describe(declared)} is not {describe(inferred)}")
    return declared


def prefer_inferred(merged: Any, inferred: Any, loose: frozenset[str], inputs: frozenset[str]) -> Any:
    """``merged`` with each dim that keeps a declared symbol named in ``loose`` replaced by the
    inferred dim, where inference states it as a number or an expression of ``inputs``' symbols.

    A symbol that no graph input carries (like the ``unk__N`` dims an earlier inference run
    wrote into ``value_info`` and the outputs) says only "some size"; a number or an
    expression of the inputs' symbols names the same size and says more. A fresh symbol of
    inference's own says no more, so the declared name stays.
    """
    if type(merged) is not TensorType or type(inferred) is not TensorType:
        return merged
    shape, known = merged.shape, inferred.shape
    if shape is None or known is None or len(shape) != len(known):
        return merged
    dims = tuple(k if type(d) is Sym and d.name in loose and _of_inputs(k, inputs) else d for d, k in zip(shape, known))
    return merged if dims == shape else TensorType(merged.elem, dims)


def _of_inputs(dim: Any, inputs: frozenset[str]) -> bool:
    return type(dim) is int or (type(dim) is Sym and dim.names() <= inputs)


def elem_name(elem: int) -> str:
    """An element type's name (``float``), ``?`` when unknown."""
    return element_name(elem)


def describe(value: Any) -> str:
    """Readable text for a type: ``tensor(float) (2, N)``, ``seq(tensor(int64))``, ``?``."""
    if value is None:
        return "?"
    kind = type(value)
    if kind is TensorType or kind is SparseTensorType:
        head = "tensor" if kind is TensorType else "sparse_tensor"
        return f"{head}({elem_name(value.elem)}) {format_shape(value.shape)}"
    return type_string(value)


__all__ = ["TypeConflict", "describe", "dim_out_of_range", "elem_name", "is_informative", "merge_types", "type_only",
           "without_bad_dims"]


def type_only(value: Any) -> Any:
    """A value type with every shape in it dropped (element types kept)."""
    kind = type(value)
    if kind is TensorType or kind is SparseTensorType:
        return kind(value.elem, None)
    if kind is SequenceType or kind is OptionalType:
        return kind(type_only(value.elem) if value.elem is not None else None)
    if kind is MapType:
        return MapType(value.key, type_only(value.value) if value.value is not None else None)
    return value


def types_conflict(declared: Any, inferred: Any) -> bool:
    """Whether two types contradict beyond their shapes (in kind or element type): a conflict
    no run of the graph can settle, unlike one of dims, which holds only for the values it gets."""
    try:
        merge_types(type_only(declared), type_only(inferred))
    except TypeConflict:
        return True
    return False


def dim_out_of_range(value: Any) -> int | None:
    """The first known dim of ``value`` (a type) that no model can hold (not in 0..2**63-1), if any."""
    while value is not None:
        kind = type(value)
        if kind is TensorType or kind is SparseTensorType:
            if type(value.shape) is LongShape:  # read from a model, so every dim fits in one
                return None
            for dim in value.shape or ():
                if type(dim) is int and not 0 <= dim <= MAX_DIM:
                    return dim
            return None
        value = value.value if kind is MapType else getattr(value, "elem", None) if kind in (
            SequenceType, OptionalType) else None
    return None


def without_bad_dims(value: Any) -> Any:
    """``value`` with every dim that :func:`dim_out_of_range` would report made unknown."""
    kind = type(value)
    if kind is TensorType or kind is SparseTensorType:
        if value.shape is None:
            return value
        return kind(value.elem, tuple(None if type(d) is int and not 0 <= d <= MAX_DIM else d
                                      for d in value.shape))
    if kind is SequenceType or kind is OptionalType:
        return kind(without_bad_dims(value.elem))
    if kind is MapType:
        return MapType(value.key, without_bad_dims(value.value))
    return value


def is_informative(value: Any) -> bool:
    """False for a type that says nothing (unknown element type and rank)."""
    if value is None:
        return False
    if type(value) is TensorType:
        return bool(value.elem) or value.shape is not None
    return True
