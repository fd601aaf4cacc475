"""Where a node's inputs and outputs stand, by the names its schema gives them.

Rules may address an input or output by its formal name (``ctx.input_shape("past_key")``)
instead of by position. A name resolves through a :class:`FormalPositions` table, built
once per schema: formals before any variadic stand at fixed positions; the others depend on
how many actual values the node has, and are found from the bound ranges of the node.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from opspec.runtime.kinds import FormalParameterOption

#: How a rule addresses one input or output: its position, or its formal name.
Operand = int | str

#: Marks a name whose position depends on the node (it follows a variadic, or is one).
BY_NODE = -1
_VARIADIC = FormalParameterOption.Variadic


def _fixed(params: Sequence[Any]) -> dict[str, int]:
    """Each formal's position when it does not depend on the node, else :data:`BY_NODE`."""
    positions: dict[str, int] = {}
    variadic_seen = False
    for position, param in enumerate(params):
        variadic_seen = variadic_seen or param.option == _VARIADIC


        positions[param.name] = BY_NODE if variadic_seen else position
    return positions


def bind_formals(params: Sequence[Any], count: int) -> list[range]:
    """The actual positions each formal parameter binds (TensorFlow's NameRangeMap).

    One range per formal, in order: a single or optional formal takes one position while
    any are left, a variadic takes everything the formals after it leave.
    """
    ranges, position = [], 0
    for index, param in enumerate(params):
        if param.option == 2:  # Variadic
            end = max(position, count - (len(params) - index - 1))
        else:
            end = min(position + 1, count)
        ranges.append(range(position, max(position, end)))
        position = max(position, end) if param.option == 2 else position + 1
    return ranges


class FormalPositions:
    """A schema's input and output names with their positions (see the module docstring), and
    the ranges each name binds for a given count of actual values (worked out once per count)."""

    __slots__ = ("inputs", "outputs", "op", "_params", "_ranges")

    def __init__(self, schema: Any) -> None:
        self.inputs: Mapping[str, int] = _fixed(schema.inputs)
        self.outputs: Mapping[str, int] = _fixed(schema.outputs)
        #: The op and version, as errors name them.
        self.op = f"{schema.name} {schema.since_version}"
        self._params = (schema.inputs, schema.outputs)
        self._ranges: dict[tuple[bool, int], Mapping[str, range]] = {}

    def ranges(self, output: bool, count: int) -> Mapping[str, range]:
        """The actual positions each formal input (or output) binds when the node has ``count``
        of them, by name (shared: callers must not change it)."""
        key = (output, count)
        found = self._ranges.get(key)
        if found is None:
            params = self._params[output]
            found = self._ranges[key] = {param.name: bound for param, bound in zip(params, bind_formals(params, count))}
        return found


class UnknownOperand(LookupError):
    """A rule named an input or output its schema does not have (the compiler checks the
    names built-in and tree rules use as literals, so this is a rule's own error)."""


__all__ = ["BY_NODE", "FormalPositions", "Operand", "UnknownOperand", "bind_formals"]
