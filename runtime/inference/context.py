"""What an inference rule sees of one node: the contract between the engine and rules.

A rule is ``rule(ctx: InferenceContext, args: Mapping[str, object]) -> None``: it reads
input types, shapes, attributes (schema defaults applied) and known input data, then
sets output shapes (and, for data propagation, output data). ``args`` are the rule's
arguments from the opdefs YAML with the catalog's defaults filled in.

Before the rule runs, the engine gives every output the element type its type
parameter binds to (the type of the input using the same parameter, or the single type
the parameter allows), so most rules only compute shapes.
"""
from __future__ import annotations

from opspec.runtime.inference.values import Data, TensorType
from opspec.runtime.onnx_compat import onnx_bases
from opspec.runtime.schema import OpSchema
from opspec.runtime.shape import ShapeError, SymbolTable


class InferenceError(*onnx_bases("onnx.shape_inference", "InferenceError"), Exception):
    """A node's inputs or attributes contradict its schema; the engine adds the node."""


class InferenceContext:
    """One node, as rules see it. Built by the engine from plain values."""

    __slots__ = ("schema", "node_name", "op_type", "domain", "opset", "_inputs", "_data", "_attributes",
                 "_outputs", "_output_data", "_symbols", "_input_ranges", "_output_ranges")

    def __init__(self, schema: OpSchema, inputs: list, attributes: dict, *, data: list | None = None,
                 symbols: SymbolTable | None = None, node_name: str = "", opset: int = 0,
                 output_count: int | None = None) -> None:
        """``inputs``: one entry per actual input, a value type or None (missing or unknown).

        ``attributes`` maps names to plain Python values as the node sets them; ``data``
        gives propagated :class:`Data` per input (None when unknown).
        """
        self.schema = schema
        self.node_name = node_name
        self.op_type = schema.name
        self.domain = schema.domain
        self.opset = opset
        self._inputs = inputs
        self._data = data if data is not None else [None] * len(inputs)
        self._attributes = attributes
        count = output_count if output_count is not None else len(schema.outputs)
        self._outputs: list = [None] * count
        self._output_data: list = [None] * count
        self._symbols = symbols
        self._input_ranges: dict | None = None
        self._output_ranges: dict | None = None

    # -- inputs -----------------------------------------------------------------------
    @property
    def input_count(self) -> int:
        return len(self._inputs)

    def has_input(self, index: int) -> bool:
        """True when the node supplies input ``index`` (an omitted optional input is absent)."""
        return index < len(self._inputs) and self._inputs[index] is not None

    def input_type(self, index: int):
        """The input's type (``TensorType``, ``SequenceType``, ...) or None when absent/unknown."""
        return self._inputs[index] if index < len(self._inputs) else None

    def input_shape(self, index: int):
        """The input tensor's shape: a tuple of dims, or None (unknown rank, or not a tensor)."""
        value = self._inputs[index] if index < len(self._inputs) else None
        return value.shape if type(value) is TensorType else None

    def input_elem(self, index: int) -> int:
        value = self._inputs[index] if index < len(self._inputs) else None
        return value.elem if type(value) is TensorType else 0

    def input_data(self, index: int) -> Data | None:
        """Known contents of input ``index`` (constants, initializers, propagated shapes)."""
        return self._data[index] if index < len(self._data) else None

    def input_values(self, index: int):
        """Known contents of a scalar or 1-D input as a tuple of elements, or None."""
        data = self._data[index] if index < len(self._data) else None
        return data.values if data is not None else None

    def input_range(self, name: str) -> range:
        """Indices of the actual inputs bound to formal input ``name`` (variadics span many)."""
        if self._input_ranges is None:
            self._input_ranges = _ranges(self.schema.inputs, len(self._inputs))
        return self._input_ranges.get(name, range(0))

    def input_index(self, name: str) -> int | None:
        """The index of formal input ``name`` when the node supplies it, else None."""
        bound = self.input_range(name)
        return bound.start if len(bound) and self.has_input(bound.start) else None

    # -- attributes ---------------------------------------------------------------------
    def attribute(self, name: str, default: object = None) -> object:
        """The node's attribute, else the schema's default, else ``default``."""
        value = self._attributes.get(name)
        if value is not None:
            return value
        declared = self.schema.attributes.get(name)
        if declared is not None and declared.default is not None:
            return declared.default
        return default

    def has_attribute(self, name: str) -> bool:
        """True when the node itself sets ``name`` (schema defaults do not count)."""
        return name in self._attributes

    # -- outputs ------------------------------------------------------------------------
    @property
    def output_count(self) -> int:
        return len(self._outputs)

    def output_range(self, name: str) -> range:
        if self._output_ranges is None:
            self._output_ranges = _ranges(self.schema.outputs, len(self._outputs))
        return self._output_ranges.get(name, range(0))

    def output_type(self, index: int):
        return self._outputs[index]

    def output_elem(self, index: int) -> int:
        value = self._outputs[index]
        return value.elem if type(value) is TensorType else 0

    def set_output(self, index: int, value) -> None:
        """Set an output's full type (any value type)."""
        if index < len(self._outputs):
            self._outputs[index] = value

    def set_output_shape(self, index: int, shape, elem: int | None = None) -> None:
        """Set a tensor output's shape; the element type is the engine's binding unless given."""
        if index < len(self._outputs):
            if elem is None:
                elem = self.output_elem(index)
            self._outputs[index] = TensorType(elem, shape)

    def set_output_data(self, index: int, data: Data) -> None:
        """Record an output's known contents, for data propagation."""
        if index < len(self._output_data):
            self._output_data[index] = data

    def output_data(self, index: int) -> Data | None:
        return self._output_data[index]

    # -- helpers ------------------------------------------------------------------------
    def fresh_dim(self):
        """A new symbolic dim that clashes with no name in the graph."""
        return self._symbols.fresh() if self._symbols is not None else None

    def fail(self, message: str) -> None:
        """Stop with an error that the engine reports against this node."""
        raise InferenceError(message)

    def normalize_axis(self, axis: int, rank: int, what: str = "axis") -> int:
        """``axis`` in ``[-rank, rank)`` made non-negative, or a failure naming the range."""
        if not -rank <= axis < rank:
            self.fail(f"{what} {axis} is out of range for rank {rank}")
        return axis + rank if axis < 0 else axis


def bind_formals(params, count: int) -> list[range]:
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


def _ranges(params, count: int) -> dict[str, range]:
    return {param.name: bound for param, bound in zip(params, bind_formals(params, count))}


__all__ = ["Data", "InferenceContext", "InferenceError", "ShapeError", "bind_formals"]
