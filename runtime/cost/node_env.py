"""What a cost formula reads from one node: its inputs' and outputs' shapes and its attributes."""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from opspec.runtime.contract.values import TensorType
from opspec.runtime.schema import OpSchema

__all__ = ["NodeEnv"]

_ABSENT = (False, None)


class NodeEnv:
    """A :class:`~opspec.runtime.formula.FormulaEnv` over one node: ``type_of`` gives a value's
    inferred type by name; an empty name is an input or output the node leaves out."""

    __slots__ = ("schema", "inputs", "outputs", "attributes", "type_of")

    def __init__(self, schema: OpSchema, inputs: Sequence[str], outputs: Sequence[str],
                 attributes: Mapping[str, Any], type_of: Callable[[str], Any]) -> None:
        self.schema, self.inputs, self.outputs = schema, inputs, outputs
        self.attributes, self.type_of = attributes, type_of

    def _value(self, name: str) -> tuple[bool, Any]:
        if not name:
            return _ABSENT
        found = self.type_of(name)
        return True, found.shape if type(found) is TensorType else None

    def tensor(self, name: str) -> tuple[bool, Any]:
        for formals, actuals in ((self.schema.inputs, self.inputs), (self.schema.outputs, self.outputs)):
            for position, formal in enumerate(formals):
                if formal.name == name:
                    return self._value(actuals[position]) if position < len(actuals) else _ABSENT
        return _ABSENT

    def tensor_at(self, output: bool, index: int) -> tuple[bool, Any]:
        actuals = self.outputs if output else self.inputs
        return self._value(actuals[index]) if index < len(actuals) else _ABSENT

    def count(self, output: bool) -> int:
        return sum(1 for name in (self.outputs if output else self.inputs) if name)

    def attribute(self, name: str) -> Any:
        if name in self.attributes:
            return self.attributes[name]
        declared = self.schema.attributes.get(name)
        return None if declared is None else declared.default
