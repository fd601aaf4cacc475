"""What the converter knows about the values of one graph: types, constants, fresh names.

Types come from opspec's own inference over the whole model (subgraphs included);
constants are initializers that a caller cannot override and outputs of ``Constant``
nodes. New constants the converter needs become initializers of the graph being
converted.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from opspec.generated.opspec_ir_pb2 import TensorProto
from opspec.runtime.contract.elements import ELEMENT_NAMES, ElementType
from opspec.runtime.inference.read_attributes import attribute_value
from opspec.runtime.inference.read_tensors import tensor_data

if TYPE_CHECKING:
    from opspec.runtime.op_set import OpSet
    from opspec.runtime.registry import Registry


#: Operators of the standard domain whose first output never holds a negative number.
NON_NEGATIVE_OPS = frozenset({"ArgMax", "ArgMin", "Shape", "Size", "NonZero"})


class Refusal(Exception):
    """A node that cannot be converted; the message says why."""


@dataclass(frozen=True)


class ValueType:
    """A value's element type and dims (None: unknown dim; ``dims`` None: unknown rank);
    ``symbols``: the name inference gives each dim it does not know (None where it gives none),
    two dims of one name being equal."""

    elem: int
    dims: tuple[int | None, ...] | None
    symbols: tuple[str | None, ...] | None = field(default=None, compare=False)

    @property
    def type_string(self) -> str:
        return f"tensor({ELEMENT_NAMES.get(self.elem, '?')})"

    @property
    def rank(self) -> int | None:
        return None if self.dims is None else len(self.dims)


def value_type(type_proto: Any) -> ValueType | str | None:
    """A tensor type as :class:`ValueType`, any other type as its type string (``seq(tensor(float))``),
    None when unset or partly unknown."""
    kind = type_proto.WhichOneof("value")
    if kind != "tensor_type":
        return _type_string(type_proto)
    tensor = type_proto.tensor_type
    if not tensor.elem_type:
        return None
    dims = symbols = None
    if tensor.HasField("shape"):
        dims = tuple(d.dim_value if d.WhichOneof("value") == "dim_value" else None for d in tensor.shape.dim)
        symbols = tuple(d.dim_param if d.WhichOneof("value") == "dim_param" else None for d in tensor.shape.dim)
    return ValueType(tensor.elem_type, dims, symbols)


def _type_string(type_proto: Any) -> str | None:
    kind = type_proto.WhichOneof("value")
    if kind in ("tensor_type", "sparse_tensor_type"):
        elem = getattr(type_proto, kind).elem_type
        name = ELEMENT_NAMES.get(elem)
        return f"{kind[:-5]}({name})" if name else None
    if kind in ("sequence_type", "optional_type"):
        inner = _type_string(getattr(type_proto, kind).elem_type)
        return f"{'seq' if kind == 'sequence_type' else 'optional'}({inner})" if inner else None
    return None


def type_proto(known: ValueType) -> Any:
    """``known`` as a ``TypeProto``."""
    from opspec.generated.opspec_ir_pb2 import TypeProto

    result = TypeProto()
    result.tensor_type.elem_type = known.elem
    if known.dims is not None:
        shape = result.tensor_type.shape
        shape.SetInParent()
        for dim in known.dims:
            shape.dim.add(**({} if dim is None else {"dim_value": dim}))
    return result


def collect_types(graph: Any, found: dict[str, Any]) -> None:
    """Every declared or inferred type of ``graph`` and its subgraphs, by value name."""
    for info in [*graph.input, *graph.value_info, *graph.output]:
        known = value_type(info.type)
        if known is not None:
            found.setdefault(info.name, known)
    for tensor in graph.initializer:
        found.setdefault(tensor.name, ValueType(tensor.data_type, tuple(tensor.dims)))
    for node in graph.node:
        for attribute in node.attribute:
            for sub in [attribute.g, *attribute.graphs] if attribute.HasField("g") else attribute.graphs:
                collect_types(sub, found)


@dataclass


class GraphValues:
    """Values of one graph as the converter sees them; ``added`` collects new initializers."""

    graph: Any
    types: dict[str, Any]
    constants: dict[str, Any]
    taken: set[str]
    #: Where the converter looks the standard operators' versions up.
    registry: Registry
    #: What inference answers from (None: the installed op set).
    op_set: OpSet | None
    added: list[Any] = field(default_factory=list)
    read: set[str] = field(default_factory=set)
    #: The opset each domain is converted to ("" for the standard domain).
    target_opsets: dict[str, int] = field(default_factory=dict)
    #: Values computed at run time that hold no negative number (outputs of :data:`NON_NEGATIVE_OPS`).
    non_negative: set[str] = field(default_factory=set)
    _producers: dict[str, Any] | None = None

    @classmethod
    def of(cls, graph: Any, types: dict[str, Any], outer: GraphValues | None, overridable: bool,
           registry: Registry, op_set: OpSet | None, target_opsets: dict[str, int] | None = None) -> GraphValues:
        graph_inputs = {value.name for value in graph.input}
        constants = dict(outer.constants) if outer is not None else {}
        for tensor in graph.initializer:
            if not (overridable and tensor.name in graph_inputs):
                constants[tensor.name] = tensor
        for node in graph.node:
            if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and len(node.output) == 1:
                tensor = constant_tensor(node)
                if tensor is not None:
                    constants[node.output[0]] = tensor
        taken = set(outer.taken) if outer is not None else set()
        taken |= value_names(graph)
        targets = dict(target_opsets if target_opsets is not None else outer.target_opsets if outer is not None else {})
        non_negative = set(outer.non_negative) if outer is not None else set()
        non_negative.update(name for node in graph.node if node.domain in ("", "ai.onnx")
                            and node.op_type in NON_NEGATIVE_OPS for name in node.output[:1])
        return cls(graph, types, constants, taken, registry, op_set, read=read_names(graph), target_opsets=targets,
                   non_negative=non_negative)

    def type_of(self, name: str) -> ValueType | None:
        known = self.types.get(name)
        return known if isinstance(known, ValueType) else None

    def fresh(self, hint: str) -> str:
        """A value name used nowhere in the model yet."""
        base = f"{hint}_cv"
        name, count = base, 0
        while name in self.taken:
            count += 1
            name = f"{base}{count}"
        self.taken.add(name)
        return name

    def producer(self, name: str) -> Any | None:
        """The node of this graph (as the model gave it) that outputs ``name``, if any."""
        if self._producers is None:
            self._producers = {output: node for node in self.graph.node for output in node.output if output}
        return self._producers.get(name)

    def is_used(self, name: str) -> bool:
        """Whether a node of the graph (or of a graph inside it) reads ``name``, or the graph gives it."""
        return bool(name) and name in self.read

    def values_of(self, name: str) -> tuple[tuple[int, ...], tuple] | None:
        """``(dims, values)`` of a constant input (None when it is not a readable constant)."""
        tensor = self.constants.get(name)
        if tensor is None:
            return None
        data = tensor_data(tensor, limit=1 << 16)
        return None if data is None else (tuple(data.shape), tuple(data.values))

    def learn(self, node: Any, schema: Any) -> None:
        """Record the output types inference gives a new ``node`` (a ``NodeProto`` of ``schema``)."""
        from opspec.runtime.inference.single_node import infer_node_outputs

        types, data = {}, {}
        for name in node.input:
            known = self.type_of(name)
            if name and known is not None:
                types[name] = type_proto(known)
            if name in self.constants:
                data[name] = self.constants[name]
        try:
            outputs = infer_node_outputs(schema, node, types, input_data=data, op_set=self.op_set)
        except Exception:  # noqa: BLE001 - what inference cannot tell stays unknown
            return
        for name, found in outputs.items():
            result = value_type(found)
            if result is not None:
                self.types.setdefault(name, result)

    def add_constant(self, hint: str, elem: int, dims: tuple[int, ...], values: list) -> str:
        """A new initializer holding ``values``; returns its name."""
        name = self.fresh(hint)
        tensor = make_tensor(name, elem, dims, values)
        self.added.append(tensor)
        self.constants[name] = tensor
        self.types[name] = ValueType(elem, dims)
        return name


def value_names(graph: Any) -> set[str]:
    """Every value name ``graph`` and its subgraphs use."""
    names = {value.name for value in [*graph.input, *graph.output, *graph.value_info, *graph.initializer]}
    for node in graph.node:
        names.update(node.input)
        names.update(node.output)
        for attribute in node.attribute:
            for sub in [attribute.g, *attribute.graphs] if attribute.HasField("g") else attribute.graphs:
                names |= value_names(sub)
    return names


def read_names(graph: Any) -> set[str]:
    """Every value name a node of ``graph`` or of its subgraphs reads, and the graph's outputs."""
    names = {value.name for value in graph.output}
    for node in graph.node:
        names.update(node.input)
        for attribute in node.attribute:
            for sub in [attribute.g, *attribute.graphs] if attribute.HasField("g") else attribute.graphs:
                names |= read_names(sub)
    return names


_PACKED: dict[int, str] = {
    ElementType.FLOAT16: "e", ElementType.FLOAT: "f", ElementType.DOUBLE: "d", ElementType.INT64: "q",
    ElementType.INT32: "i", ElementType.INT8: "b", ElementType.UINT8: "B", ElementType.INT16: "h",
    ElementType.UINT16: "H", ElementType.UINT32: "I", ElementType.UINT64: "Q", ElementType.BOOL: "?",
}


def make_tensor(name: str, elem: int, dims: tuple[int, ...], values: list) -> Any:
    """A ``TensorProto`` with ``values`` stored as little-endian raw data."""
    if elem == ElementType.STRING:
        strings = [v.encode() if isinstance(v, str) else v for v in values]
        return TensorProto(name=name, data_type=elem, dims=list(dims), string_data=strings)
    if elem == ElementType.BFLOAT16:
        raw = b"".join(struct.pack("<f", float(v))[2:] for v in values)
    elif elem in _PACKED:
        code = _PACKED[elem]
        cast = float if code in "efd" else bool if code == "?" else int
        raw = struct.pack(f"<{len(values)}{code}", *[cast(v) for v in values])
    else:
        raise Refusal(f"cannot write a constant of element type {ELEMENT_NAMES.get(elem, elem)}")
    return TensorProto(name=name, data_type=elem, dims=list(dims), raw_data=raw)


#: The typed value attributes of Constant (version 12 on): element type, and whether a list.
CONSTANT_FORMS = {"value_float": (ElementType.FLOAT, False), "value_floats": (ElementType.FLOAT, True),
                  "value_int": (ElementType.INT64, False), "value_ints": (ElementType.INT64, True),
                  "value_string": (ElementType.STRING, False), "value_strings": (ElementType.STRING, True)}


def constant_tensor(node: Any) -> Any | None:
    """The tensor a ``Constant`` node gives (None for a sparse one)."""
    for attribute in node.attribute:
        if attribute.name == "value" and attribute.HasField("t"):
            return attribute.t
        if attribute.name in CONSTANT_FORMS:
            elem, is_list = CONSTANT_FORMS[attribute.name]
            items = list(attribute_value(attribute)) if is_list else [attribute_value(attribute)]
            return make_tensor("", elem, (len(items),) if is_list else (), items)
    return None
