"""A node while it is being converted: its inputs, outputs and attributes, editable."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from opspec.generated import opspec_ir_pb2 as ir
from opspec.runtime.inference.read_attributes import attribute_value
from opspec.runtime.schema import AttrType, FormalParameter, FormalParameterOption, OpSchema


@dataclass


class WorkNode:
    """One node in conversion; ``source`` is the message it came from (None for new nodes)."""

    op_type: str
    domain: str
    name: str
    inputs: list[str]
    outputs: list[str]
    attributes: dict[str, Any] = field(default_factory=dict)
    source: Any = None

    @classmethod
    def of(cls, node: Any) -> WorkNode:
        copied = {}
        for attribute in node.attribute:
            copy = ir.AttributeProto()
            copy.ParseFromString(attribute.SerializeToString())
            copied[attribute.name] = copy
        return cls(node.op_type, node.domain, node.name, list(node.input), list(node.output), copied, node)

    @property
    def label(self) -> str:
        return f"{self.op_type} node '{self.name}'" if self.name else f"{self.op_type} node (output '{self.outputs[0]}')"

    def value(self, name: str) -> Any:
        """An attribute's plain value (None when absent)."""
        attribute = self.attributes.get(name)
        return None if attribute is None else attribute_value(attribute)

    def set(self, name: str, kind: AttrType, value: Any) -> None:
        self.attributes[name] = make_attribute(name, kind, value)

    def message(self) -> Any:
        """The node as a ``NodeProto``, keeping the original's name, doc string and metadata."""
        node = ir.NodeProto()
        if self.source is not None:
            node.ParseFromString(self.source.SerializeToString())
            del node.input[:], node.output[:], node.attribute[:]
        node.op_type, node.domain, node.name = self.op_type, self.domain, self.name
        while self.inputs and not self.inputs[-1]:
            self.inputs.pop()
        node.input.extend(self.inputs)
        node.output.extend(self.outputs)
        node.attribute.extend(self.attributes[name] for name in sorted(self.attributes))
        return node


@dataclass(frozen=True)
class Surrounding:
    """Nodes an adapter writes around the node it converts, for the opset of the version the
    node steps to: ``before`` computes inputs the node now reads, ``after`` turns what it now
    gives into the outputs the model uses."""

    before: tuple[WorkNode, ...] = ()
    after: tuple[WorkNode, ...] = ()


def make_attribute(name: str, kind: AttrType, value: Any) -> Any:
    attribute = ir.AttributeProto(name=name, type=int(kind))
    if kind == AttrType.INT:
        attribute.i = int(value)
    elif kind == AttrType.FLOAT:
        attribute.f = float(value)
    elif kind == AttrType.STRING:
        attribute.s = value.encode() if isinstance(value, str) else value
    elif kind == AttrType.INTS:
        attribute.ints.extend(int(v) for v in value)
    elif kind == AttrType.FLOATS:
        attribute.floats.extend(float(v) for v in value)
    elif kind == AttrType.STRINGS:
        attribute.strings.extend(v.encode() if isinstance(v, str) else v for v in value)
    elif kind != AttrType.TENSOR:
        raise ValueError(f"attribute kind {kind.spelling} cannot be written from a plain value")
    return attribute


def bind_formals(formals: tuple[FormalParameter, ...], actuals: list[str]) -> dict[str, list[str]]:
    """The actual names each formal parameter binds (a variadic formal takes the rest)."""
    bound: dict[str, list[str]] = {}
    for index, formal in enumerate(formals):
        if formal.option == FormalParameterOption.Variadic:
            bound[formal.name] = actuals[index:]
            break
        bound[formal.name] = actuals[index:index + 1]
    return bound


def formal_named(schema: OpSchema, name: str, role: str = "inputs") -> FormalParameter | None:
    return next((formal for formal in getattr(schema, role) if formal.name == name), None)
