"""Graph input dims that have neither a value nor a name, given a symbol each.

Some tools (skl2onnx for its batch dim) write a graph input's dim with neither ``dim_value`` nor
``dim_param``. Read as unknown, it would lose that every value computed along that axis has the
same size. So each such dim gets a fresh symbol of its own, one per input and axis, which equals
no name of the model and no other such dim: equalities that follow from the graph are kept,
and none is claimed that the model does not state. The input's own declaration is never
rewritten; values of the graph that carry the symbol are written with it, as every fresh symbol
inference makes up is (``unk__0``, ``unk__1``..., named as onnx names its own).
"""
from __future__ import annotations

from typing import Any

from opspec.runtime.contract.values import LONG_RANK, LongShape, TensorType
from opspec.runtime.shape import SymbolTable


def with_input_symbols(values: list[Any], symbols: SymbolTable) -> list[Any]:
    """``values`` (graph input types, in order) with each dim of a tensor type that is neither a
    number nor a symbol replaced by a fresh symbol of ``symbols``."""
    found = list(values)
    for position, value in enumerate(found):
        if type(value) is TensorType and value.shape is not None and None in value.shape:
            dims = [symbols.fresh() if dim is None else dim for dim in value.shape]
            found[position] = TensorType(value.elem, LongShape(dims) if len(dims) >= LONG_RANK else tuple(dims))
    return found


__all__ = ["with_input_symbols"]
