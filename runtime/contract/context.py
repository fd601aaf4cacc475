"""What an inference rule sees of one node: the contract between the engine and rules.

A rule is ``rule(ctx: InferenceContext) -> None``: it reads input types, shapes,
attributes (schema defaults applied), known input data and its own arguments from the
opdefs YAML (``ctx.args``, read through the typed readers of
:class:`~opspec.runtime.contract.arguments.ArgumentReaders`), then sets output types and
shapes (and, for data propagation, output data).

Presence and knowledge are separate questions: :meth:`InferenceContext.has_input` says
whether the node supplies an input at all; :meth:`InferenceContext.input_type` and
:meth:`InferenceContext.input_data` say what is known of it. A supplied input whose type
or data is unknown is present, and a rule must give an answer that holds whatever it is.

An input or output is addressed by its position or by its formal name in the schema
(``ctx.input_shape("past_key")``, ``ctx.set_output_shape("present_key", ...)``); names are
resolved once per schema (see :mod:`~opspec.runtime.contract.positions`). A name reads better
and the compiler checks it against every op version bound to the rule; generic rules shared by
ops whose inputs have different names (elementwise, reductions) keep positions.

Before the rule runs, the engine gives every output the type its type parameter binds
to, so most rules only compute shapes.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, NoReturn, Sequence

from opspec.runtime.contract.arguments import ArgumentReaders
from opspec.runtime.contract.elements import UNDEFINED, ElementType
from opspec.runtime.contract.limits import MAX_RANK
from opspec.runtime.contract.positions import BY_NODE, FormalPositions, Operand, UnknownOperand
from opspec.runtime.contract.values import Data, TensorType
from opspec.runtime.kinds import AttrType, FormalParameterOption
from opspec.runtime.onnx_compat import onnx_bases
from opspec.runtime.shape import Dim, Shape, ShapeError, Sym, SymbolTable, with_rank, with_rank_at_least

if TYPE_CHECKING:
    from opspec.runtime.schema import OpSchema

_NO_ARGS: Mapping[str, Any] = {}
_NO_RANGE = range(0)


#: Attribute kinds whose plain values a rule may read as numbers or text: the Python types each
#: holds, and for lists the types of their elements (an element type's member is an int too).
_SCALAR_KINDS: dict[int, tuple[type, ...]] = {
    AttrType.FLOAT: (float,), AttrType.INT: (int, ElementType), AttrType.STRING: (str, bytes)}
_LIST_KINDS: dict[int, tuple[type, ...]] = {
    AttrType.FLOATS: (float,), AttrType.INTS: (int, ElementType), AttrType.STRINGS: (str, bytes)}
_KIND_NAMES = {AttrType.FLOAT: "a float", AttrType.INT: "an int", AttrType.STRING: "a string",
               AttrType.TENSOR: "a tensor", AttrType.FLOATS: "a list of floats", AttrType.INTS: "a list of ints",
               AttrType.STRINGS: "a list of strings"}
# Members read once here: reading an enum class's member costs several times a module global.
_VARIADIC, _TENSOR = FormalParameterOption.Variadic, AttrType.TENSOR
_tuple_new = tuple.__new__
#: What a name the schema does not have resolves to (a position is never negative; BY_NODE is -1).
_UNKNOWN = BY_NODE - 1



def _fits(kind: int, value: object) -> bool:
    """Whether a node's attribute value is of the kind the schema declares (kinds rules do not
    read as numbers or text always fit)."""
    if kind == _TENSOR:


        return hasattr(value, "elem")  # a TensorValue, or any object with its fields
    scalar = _SCALAR_KINDS.get(kind)
    if scalar is not None:
        return type(value) in scalar
    element = _LIST_KINDS.get(kind)
    if element is not None:
        if type(value) is not list:
            return False
        for item in value:  # a loop: most lists are short, and a generator costs more than it walks
            if type(item) not in element:
                return False
    return True


# onnx's class joins the bases at run time (when onnx is loaded first), out of a type checker's sight
class InferenceError(*onnx_bases("onnx.shape_inference", "InferenceError"), Exception):  # type: ignore[misc]
    """A node's inputs or attributes contradict its schema; the engine adds the node."""


class Subgraph:
    """A graph-valued attribute after inference: its inputs' and outputs' types (None: unknown)."""

    __slots__ = ("name", "inputs", "outputs")

    def __init__(self, name: str, inputs: tuple, outputs: tuple) -> None:
        self.name, self.inputs, self.outputs = name, inputs, outputs

    def __repr__(self) -> str:
        return f"Subgraph({self.name!r}, inputs={self.inputs!r}, outputs={self.outputs!r})"


#: What the engine gives a context to infer a graph attribute: (attribute name, input types
#: or None for the declared ones) -> the inferred :class:`Subgraph` (a tuple per graph for
#: a list of graphs).
SubgraphInferrer = Callable[[str, "tuple | None"], Any]


class InferenceContext(ArgumentReaders):
    """One node, as rules see it. Built by the engine from plain values."""

    __slots__ = ("schema", "node_name", "op_type", "domain", "opset", "args", "_inputs", "_names", "_data",
                 "_attributes", "_outputs", "_output_data", "_symbols", "_input_ranges", "_output_ranges",
                 "_subgraphs", "_infer_subgraph", "unsure_graphs", "_positions", "_table_built")

    def __init__(self, schema: OpSchema, inputs: list, attributes: Mapping[str, Any], *,
                 args: Mapping[str, Any] | None = None, data: Sequence | None = None, names: list | None = None,
                 symbols: SymbolTable | None = None, node_name: str = "", opset: int = 0,
                 output_count: int | None = None,
                 subgraphs: Mapping[str, Any] | None = None,
                 infer_subgraph: SubgraphInferrer | None = None,
                 positions: Callable[[], FormalPositions] | None = None) -> None:
        """``inputs``: one entry per actual input, its value type or None when unknown.

        ``names`` are the node's input names: an empty name marks an omitted optional
        input. Without ``names``, an input whose type is None counts as omitted (for
        building contexts by hand). ``attributes`` maps names to plain Python values as
        the node sets them; ``data`` gives propagated :class:`Data` per input (None when
        unknown); ``args`` are the rule's arguments.
        """
        self.schema = schema
        self.node_name = node_name
        self.op_type = schema.name
        self.domain = schema.domain
        self.opset = opset
        self.args = args if args is not None else _NO_ARGS
        self._inputs = inputs
        self._names = names
        self._data = data if data is not None else [None] * len(inputs)
        self._attributes = attributes
        count = output_count if output_count is not None else len(schema.outputs)
        self._outputs: list = [None] * count
        self._output_data: list = [None] * count
        self._symbols = symbols
        self._input_ranges: Mapping[str, range] | None = None
        self._output_ranges: Mapping[str, range] | None = None
        self._subgraphs = subgraphs
        self._infer_subgraph = infer_subgraph
        #: The graph attributes the rule said may not run (see :meth:`may_not_run`).
        self.unsure_graphs: set[str] = set()
        #: Gives the schema's names with their positions, built once per schema by the engine
        #: (None: the context builds its own on first use).
        self._positions = positions
        self._table_built: FormalPositions | None = None

    # -- inputs -----------------------------------------------------------------------
    @property
    def input_count(self) -> int:
        return len(self._inputs)

    @property
    def input_types(self) -> Sequence[Any]:
        """One entry per actual input: its type, or None when unknown or omitted."""
        return self._inputs

    def has_input(self, index: Operand) -> bool:
        """True when the node supplies input ``index``, known or not (an omitted optional is absent)."""
        if isinstance(index, str):
            index = self._input_at(index)
        if index >= len(self._inputs):
            return False
        names = self._names
        return bool(names[index]) if names is not None else self._inputs[index] is not None

    def input_type(self, index: Operand):
        """The input's type (``TensorType``, ``SequenceType``, ...) or None when absent or unknown."""
        if isinstance(index, str):
            index = self._input_at(index)
        return self._inputs[index] if index < len(self._inputs) else None

    def input_shape(self, index: Operand) -> Shape:
        """The input tensor's shape: a tuple of dims, or None (unknown rank, or not a tensor)."""
        if isinstance(index, str):
            index = self._input_at(index)
        value = self._inputs[index] if index < len(self._inputs) else None
        return value.shape if type(value) is TensorType else None

    def input_with_rank(self, index: Operand, rank: int) -> tuple[Dim, ...]:
        """Input ``index``'s shape checked to have ``rank`` (TensorFlow's ``WithRank``): an
        unknown rank becomes ``rank`` unknown dims; another rank fails, naming the input."""
        if isinstance(index, str):
            index = self._input_at(index)
        try:
            return with_rank(self.input_shape(index), rank)
        except ShapeError as error:
            self.fail(f"{self.input_name(index)}: {error}")

    def input_with_rank_at_least(self, index: Operand, rank: int) -> Shape:
        """Input ``index``'s shape checked to have at least ``rank`` dims (unknown stays unknown)."""
        if isinstance(index, str):
            index = self._input_at(index)
        try:
            return with_rank_at_least(self.input_shape(index), rank)
        except ShapeError as error:
            self.fail(f"{self.input_name(index)}: {error}")

    def input_name(self, index: Operand) -> str:
        """The formal name of actual input ``index`` (``inputs[2]`` for the third of a variadic)."""
        if isinstance(index, str):
            index = self._input_at(index)
        for param in self.schema.inputs:
            bound = self.input_range(param.name)
            if index in bound:
                single = len(bound) == 1 and param.option != _VARIADIC
                return param.name if single else f"{param.name}[{index - bound.start}]"
        return f"input {index}"

    def input_elem(self, index: Operand) -> int:
        if isinstance(index, str):
            index = self._input_at(index)
        value = self._inputs[index] if index < len(self._inputs) else None
        return value.elem if type(value) is TensorType else UNDEFINED

    def input_data(self, index: Operand) -> Data | None:
        """Known contents of input ``index`` (constants, initializers, propagated shapes)."""
        if isinstance(index, str):
            index = self._input_at(index)
        return self._data[index] if index < len(self._data) else None

    def input_values(self, index: Operand) -> tuple | None:
        """Known contents of a scalar or 1-D input as a tuple of elements, or None."""
        if isinstance(index, str):
            index = self._input_at(index)
        data = self._data[index] if index < len(self._data) else None
        return data.values if data is not None else None

    def input_range(self, name: str) -> range:
        """Indices of the actual inputs bound to formal input ``name`` (variadics span many)."""
        ranges = self._input_ranges
        if ranges is None:
            ranges = self._input_ranges = (self._table_built or self._table()).ranges(False, len(self._inputs))
        return ranges.get(name, _NO_RANGE)

    def input_index(self, name: str) -> int | None:
        """The index of formal input ``name`` when the node supplies it (known or not), else None."""
        position = (self._table_built or self._table()).inputs.get(name)
        if position is None:
            return None
        if position == BY_NODE:  # after a variadic: where it stands depends on the node
            bound = self.input_range(name)
            position = bound.start if len(bound) else len(self._inputs)
        if position >= len(self._inputs):
            return None
        names = self._names
        supplied = bool(names[position]) if names is not None else self._inputs[position] is not None
        return position if supplied else None

    # -- attributes ---------------------------------------------------------------------
    def attribute(self, name: str, default: object = None) -> Any:
        """The node's attribute, else the schema's default, else ``default``."""
        value = self._attributes.get(name)
        declared = self.schema.attributes.get(name)
        if value is not None:
            if declared is not None and not _fits(declared.type, value):
                self.fail(f"attribute '{name}' must be {_KIND_NAMES[declared.type]}, got {value!r}")
            return value
        if declared is not None and declared.default is not None:
            return declared.default
        return default

    @property
    def node_attributes(self) -> Mapping[str, Any]:
        """The attributes the node itself sets, as plain values by name (no schema defaults)."""
        return self._attributes

    def has_attribute(self, name: str) -> bool:
        """True when the node itself sets ``name`` (schema defaults do not count)."""
        return name in self._attributes

    # -- subgraphs ------------------------------------------------------------------------
    def subgraph(self, name: str | None):
        """Graph attribute ``name`` as the engine inferred it before the rule ran: a
        :class:`Subgraph` (a tuple of them for a list of graphs), or None when the node has none."""
        return self._subgraphs.get(name) if self._subgraphs and name is not None else None

    def infer_subgraph(self, name: str | None, input_types: tuple | None = None):
        """Infer graph attribute ``name`` again with the given input types (None: as declared),
        e.g. until loop-carried types settle; None when the engine offers no subgraph inference."""
        if self._infer_subgraph is None or name is None or name not in self._attributes:
            return None
        return self._infer_subgraph(name, input_types)

    def may_not_run(self, name: str | None) -> None:
        """Say that graph attribute ``name`` may not run (an If's branch): what inference finds
        wrong in the values it would compute is then a note that it would fail if it ran, not an
        error of the model. Graphs not named here count as running whenever the node runs."""
        if name is not None:
            self.unsure_graphs.add(name)

    # -- outputs ------------------------------------------------------------------------
    @property
    def output_count(self) -> int:
        return len(self._outputs)

    def output_range(self, name: str) -> range:
        ranges = self._output_ranges
        if ranges is None:
            ranges = self._output_ranges = (self._table_built or self._table()).ranges(True, len(self._outputs))
        return ranges.get(name, _NO_RANGE)

    def has_output(self, index: Operand) -> bool:
        """True when the node has output ``index`` (the rule's result there is kept)."""
        if isinstance(index, str):
            index = self._output_at(index)
        return index < len(self._outputs)

    def output_type(self, index: Operand):
        """Output ``index``'s type so far (None when unknown, or beyond the node's outputs)."""
        if isinstance(index, str):
            index = self._output_at(index)
        return self._outputs[index] if index < len(self._outputs) else None

    def output_elem(self, index: Operand) -> int:
        if isinstance(index, str):
            index = self._output_at(index)
        value = self._outputs[index] if index < len(self._outputs) else None
        return value.elem if type(value) is TensorType else UNDEFINED

    def set_output(self, index: Operand, value) -> None:
        """Set an output's full type (any value type)."""
        if isinstance(index, str):
            index = self._output_at(index)
        if index < len(self._outputs):
            self._outputs[index] = value

    def set_output_shape(self, index: Operand, shape: Shape, elem: int | None = None) -> None:
        """Set a tensor output's shape; the element type is the engine's binding unless given."""
        if isinstance(index, str):
            index = self._output_at(index)
        outputs = self._outputs
        if index < len(outputs):
            if elem is None:
                value = outputs[index]
                elem = value.elem if type(value) is TensorType else UNDEFINED
            outputs[index] = _tuple_new(TensorType, (elem, shape))  # TensorType(elem, shape), without its __new__


    def set_output_data(self, index: Operand, data: Data) -> None:
        """Record an output's known contents, for data propagation."""
        if isinstance(index, str):
            index = self._output_at(index)
        if index < len(self._output_data):
            self._output_data[index] = data

    def results(self) -> tuple[list, list]:
        """The engine's side of the contract: the output types and their data by output position, as
        the lists themselves (the engine binds the types from the type parameters before the rule
        runs, and reads both lists after it)."""
        return self._outputs, self._output_data

    def output_data(self, index: Operand) -> Data | None:
        if isinstance(index, str):
            index = self._output_at(index)
        return self._output_data[index] if index < len(self._output_data) else None

    # -- names ----------------------------------------------------------------------------
    def _formal_inputs(self) -> Mapping[str, int]:
        """The schema's input names, each with its position (:data:`BY_NODE` where the node decides)."""
        return (self._table_built or self._table()).inputs

    def _table(self) -> FormalPositions:
        table = self._table_built
        if table is None:
            source = self._positions
            table = self._table_built = source() if source is not None else FormalPositions(self.schema)
        return table

    # A name before any variadic resolves in one lookup (a named read costs little more than a
    # positional one); the rest, and unknown names, go to ``_position_by_node``.
    def _input_at(self, name: str) -> int:
        """The position of formal input ``name``: past the node's inputs when it supplies none."""
        position = (self._table_built or self._table()).inputs.get(name, _UNKNOWN)
        return position if position >= 0 else self._position_by_node(name, position, False)

    def _output_at(self, name: str) -> int:
        """The position of formal output ``name``: past the node's outputs when it has none."""
        position = (self._table_built or self._table()).outputs.get(name, _UNKNOWN)
        return position if position >= 0 else self._position_by_node(name, position, True)

    def _position_by_node(self, name: str, position: int, output: bool) -> int:
        if position != BY_NODE:
            raise UnknownOperand(f"{self._table().op} has no {'output' if output else 'input'} {name!r}")
        bound = self.output_range(name) if output else self.input_range(name)
        return bound.start if len(bound) else len(self._outputs if output else self._inputs)


    # -- helpers ------------------------------------------------------------------------
    def fresh_dim(self) -> Sym | None:
        """A new symbolic dim that clashes with no name in the graph."""
        return self._symbols.fresh() if self._symbols is not None else None

    def unknown_dims(self, count: int | None) -> tuple | None:
        """``count`` unknown dims; an unknown rank when the count is unknown or beyond
        :data:`~opspec.runtime.contract.limits.MAX_RANK` (nothing is built in proportion to
        a size that only a declaration states)."""
        if count is None or count > MAX_RANK:
            return None
        return (None,) * count

    def fail(self, message: str) -> NoReturn:
        """Stop with an error that the engine reports against this node."""
        raise InferenceError(message)

    def normalize_axis(self, axis: int, rank: int, what: str = "axis") -> int:
        """``axis`` in ``[-rank, rank)`` made non-negative, or a failure naming the range."""
        if not -rank <= axis < rank:
            self.fail(f"{what} {axis} is out of range for rank {rank}")
        return axis + rank if axis < 0 else axis
