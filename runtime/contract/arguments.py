"""Typed readers for a rule's arguments: "the value of the attribute or input that argument
``key`` names, when this op version has it".

A rule's arguments (``ctx.args``) map parameter names to what the opdefs YAML binds them
to: the name of an input or attribute of the op, or a plain value. Rules read them only
through these methods, so each conversion is written once.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Mapping, NamedTuple, NoReturn, Sequence, cast

from opspec.runtime.contract.elements import element_code
from opspec.runtime.contract.limits import MAX_RANK
from opspec.runtime.shape import Dim, Shape, Sym, format_shape

if TYPE_CHECKING:
    from opspec.runtime.contract.positions import Operand
    from opspec.runtime.contract.values import Data
    from opspec.runtime.schema import OpSchema


class IntList(NamedTuple):
    """An integer-list argument as the node supplies it.

    ``present`` is False when the node gives neither input nor attribute; ``values`` holds
    the elements when known (each an int, a ``Sym`` or None); ``length`` is the element
    count when known, even without the values. A present list with unknown values may
    hold anything: rules must not read it as empty.
    """

    present: bool
    values: tuple[Dim, ...] | None
    length: int | None

    @property
    def ints(self) -> tuple[int, ...] | None:
        """The values when every one is a known int, else None."""
        values = self.values
        if values is None or any(type(v) is not int for v in values):
            return None
        return cast("tuple[int, ...]", values)


ABSENT = IntList(False, None, None)


def element(value: object) -> Dim:
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


def dims_of(values: Sequence[object]) -> tuple[Dim, ...]:
    """Data elements as dim-like values (see :func:`element`): the values themselves, as a
    tuple, when each is one already (propagated shapes and sizes are)."""
    for value in values:
        kind = type(value)
        if kind is not int and kind is not Sym and value is not None:
            return tuple(map(element, values))
    return cast("tuple[Dim, ...]", values if type(values) is tuple else tuple(values))


class ArgumentReaders:
    """The argument readers of :class:`~opspec.runtime.contract.context.InferenceContext`."""

    __slots__ = ()
    schema: OpSchema
    args: Mapping[str, Any]  # what the YAML binds each parameter to: a name or a plain value

    if TYPE_CHECKING:  # what the readers use of the context they are part of
        def _formal_inputs(self) -> Mapping[str, int]: ...
        def attribute(self, name: str, default: object = None) -> Any: ...
        def fail(self, message: str) -> NoReturn: ...
        def input_index(self, name: str) -> int | None: ...
        def input_data(self, index: Operand) -> Data | None: ...
        def input_shape(self, index: Operand) -> Shape: ...

    def option(self, key: str, default: object = None) -> Any:
        """A plain argument's value (``compute``, ``negative_axes``...)."""
        value = self.args.get(key)
        return default if value is None else value

    def named(self, key: str) -> str | None:
        """The input or attribute name that argument ``key`` binds, or None."""
        name = self.args.get(key)
        return name if name else None

    def declares(self, key: str) -> bool:
        """True when this op version has the input or attribute that argument ``key`` names."""
        name = self.args.get(key)
        return bool(name) and (name in self.schema.attributes or name in self._formal_inputs())

    def attr(self, key: str, default: object = None) -> Any:
        """The attribute that argument ``key`` names, when this version has it (text decoded)."""
        name = self.args.get(key)
        if not name or name not in self.schema.attributes:
            return default
        value = self.attribute(name, default)
        return value.decode("utf-8", "replace") if isinstance(value, bytes) else value

    def int_attr(self, key: str, default: int) -> int:
        """An int attribute argument (bools as 0/1); a node error when the node gives another kind."""
        value = self.attr(key, default)
        if value is None:
            return default
        if type(value) is not int:
            value = self._integer(key, value)
        return value

    def flag_attr(self, key: str) -> bool:
        """A 0/1 attribute argument as a bool (False when this version lacks it)."""
        return bool(self.int_attr(key, 0))

    def ints_attr(self, key: str) -> tuple[int, ...] | None:
        """An ints attribute argument as a tuple of ints, or None when not set."""
        value = self.attr(key)
        if value is None:
            return None
        if not isinstance(value, (list, tuple)):
            self.fail(f"attribute '{self.named(key)}' must be a list of ints, got {value!r}")
        for item in value:
            if type(item) is not int:
                return tuple(v if type(v) is int else self._integer(key, v) for v in value)
        return tuple(value)

    def _integer(self, key: str, value: object) -> int:
        """``value`` of attribute argument ``key`` as an int, or a node error naming it."""
        if isinstance(value, (bool, int)) or (isinstance(value, float) and math.isfinite(value)):
            return int(value)  # a float attribute read as a count truncates, as it always has
        self.fail(f"attribute '{self.named(key)}' must be an int, got {value!r}")
        raise AssertionError  # fail raises

    def elem_attr(self, key: str, default: int | None = None, zero_unset: bool = False) -> int | None:
        """An element-type attribute argument (a TensorProto.DataType number or a type name)
        as its number; ``default`` when not set (or, with ``zero_unset``, 0: UNDEFINED, which
        some ops use for "not set"); a node error when it names no element type."""
        value = self.attr(key)
        if value is None or (zero_unset and value == 0):
            return default
        code = element_code(value)
        if code is None:
            self.fail(f"attribute '{self.named(key)}' is {value!r}, which is no element type")
        return code

    def input_arg(self, key: str) -> int | None:
        """The actual index of the input that argument ``key`` names, when the node supplies it."""
        name = self.args.get(key)
        return self.input_index(name) if name else None

    def ints_arg(self, key: str) -> IntList:
        """An integer list from the input that argument ``key`` names, when the node supplies
        it (known or not), else from the attribute of that name."""
        name = self.args.get(key)
        if not name:
            return ABSENT
        index = self.input_index(name)  # None as well when the op has no input of that name
        if index is not None:
            return self._input_ints(name, index)
        if name in self.schema.attributes:
            value = self.attribute(name)
            if value is not None:
                values = dims_of(value if isinstance(value, (list, tuple)) else (value,))
                return IntList(True, values, len(values))
        return ABSENT

    def _input_ints(self, name: str, index: int) -> IntList:
        data = self.input_data(index)
        if data is not None:
            if len(data.shape) > 1:
                self.fail(f"input '{name}' must be 1-D, got shape {format_shape(data.shape)}")
            values = dims_of(data.values)
            return IntList(True, values, len(values))
        shape = self.input_shape(index)
        if shape is not None and len(shape) > 1:
            self.fail(f"input '{name}' must be 1-D, got shape {format_shape(shape)}")
        length = None
        if shape == ():
            length = 1
        elif shape is not None and type(shape[0]) is int:
            length = shape[0] if shape[0] <= MAX_RANK else None  # a declared size, not data: bounded
        return IntList(True, None, length)
