"""Rule parameters that an operator gives as an attribute in some versions and an input in others.

Axes, shapes, split sizes and slice bounds moved from attributes to inputs over ONNX's
history; :func:`read_ints` reads either, with the known values or at least the count.
"""
from __future__ import annotations

from typing import NamedTuple

from opspec.runtime.inference.context import InferenceContext
from opspec.runtime.shape import Sym, format_shape


class IntList(NamedTuple):
    """An integer-list parameter as the node supplies it.

    ``present`` is False when the node gives neither input nor attribute; ``values`` holds
    the elements when known (each an int, a ``Sym`` or None); ``length`` is the element
    count when known, even without the values.
    """

    present: bool
    values: tuple | None
    length: int | None


ABSENT = IntList(False, None, None)


def _has_formal_input(ctx: InferenceContext, name: str) -> bool:
    return any(param.name == name for param in ctx.schema.inputs)


def element(value: object) -> object:
    """A data element as a dim-like value: int, ``Sym`` or None."""
    if type(value) is int or type(value) is Sym:
        return value
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def read_ints(ctx: InferenceContext, name: str | None) -> IntList:
    """Read parameter ``name`` from the op's input of that name, else its attribute."""
    if not name:
        return ABSENT
    if _has_formal_input(ctx, name):
        index = ctx.input_index(name)
        if index is not None:
            data = ctx.input_data(index)
            if data is not None:
                if len(data.shape) > 1:
                    ctx.fail(f"input '{name}' must be 1-D, got shape {format_shape(data.shape)}")
                values = tuple(element(v) for v in data.values)
                return IntList(True, values, len(values))
            shape = ctx.input_shape(index)
            if shape is not None and len(shape) > 1:
                ctx.fail(f"input '{name}' must be 1-D, got shape {format_shape(shape)}")
            length = None
            if shape == ():
                length = 1
            elif shape is not None and type(shape[0]) is int:
                length = shape[0]
            return IntList(True, None, length)
    if name in ctx.schema.attributes:
        value = ctx.attribute(name)
        if value is not None:
            values = tuple(element(v) for v in (value if isinstance(value, (list, tuple)) else [value]))
            return IntList(True, values, len(values))
    return ABSENT
