"""The resolved operator schema: what the generated registry builds and lookups return.

Names follow ``onnx.defs.OpSchema`` so code written against onnx works unchanged:
``schema.inputs[0].option is OpSchema.FormalParameterOption.Single`` and so on.
Everything is immutable; the registry hands out one shared instance per version.

Records subclass :class:`Record` (a named tuple of the annotated fields, with their
defaults) rather than being dataclasses: importing ``dataclasses`` and ``typing`` would cost
more than the whole lookup budget of ``import opspec; opspec.get_schema(...)``. Type
checkers see ``Record`` as ``typing.NamedTuple``, which the records are.
"""
from __future__ import annotations

import enum
import math
from collections import namedtuple
from types import MappingProxyType

from opspec.runtime.kinds import AttrType, FormalParameterOption

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any
    from typing import NamedTuple as Record, TypeAlias

    from opspec.generated.opspec_ir_pb2 import AttributeProto, FunctionProto
else:
    class _RecordType(type):
        """Makes each subclass of ``Record`` a named tuple of its annotated fields and their defaults."""

        def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, object]) -> type:
            if not bases:
                return super().__new__(mcs, name, bases, namespace)
            fields = list(namespace.get("__annotations__", {}))  # strings, in order (future annotations)
            if not fields:
                raise TypeError(f"{name}: a record declares its fields as annotations")
            has_default = [field in namespace for field in fields]
            if has_default != sorted(has_default):
                raise TypeError(f"{name}: a field without a default follows one with a default")
            defaults = [namespace.pop(field) for field in fields if field in namespace]
            namespace["__slots__"] = ()
            module = namespace.get("__module__")
            fields_tuple = namedtuple(name, fields, defaults=defaults, module=module)  # noqa: PYI024
            return type(name, (fields_tuple,), namespace)

    class Record(metaclass=_RecordType):
        """Base of an immutable record: named fields, keyword defaults, value equality."""

_EMPTY: Mapping[str, object] = MappingProxyType({})

#: The value onnx uses for "no upper bound" on a variadic arity.
UNBOUNDED = 2**31 - 1


class DifferentiationCategory(enum.IntEnum):
    """Whether gradients flow through a formal parameter."""

    Unknown = 0
    Differentiable = 1
    NonDifferentiable = 2


class FormalParameter(Record):
    """One formal input or output of an operator version.

    ``types`` is the frozenset of type strings it accepts.
    """

    name: str
    type_str: str
    types: frozenset[str]
    option: FormalParameterOption = FormalParameterOption.Single
    is_homogeneous: bool = True
    min_arity: int = 1
    differentiation_category: DifferentiationCategory = DifferentiationCategory.Unknown
    description: str = ""

    @property
    def is_variadic(self) -> bool:
        return self.option is FormalParameterOption.Variadic

    @property
    def is_optional(self) -> bool:
        return self.option is FormalParameterOption.Optional


class DimRelationKind(enum.Enum):
    """How an integer attribute relates to a dim of an input."""

    DIVIDES = "divides"  # the value divides the dim (a hidden size split into heads)
    EQUALS = "=="  # the value is the dim
    SIZE = "size"  # the dim is a size expression over the node's integer attributes (a packed block)


class DimRelation(Record):
    """One relation between an integer attribute and dim ``axis`` of input ``input``.

    ``rank``, when set, limits the relation to nodes whose input has that rank (a 3-D query,
    not its packed 5-D form); ``present``, to nodes that give that other input (a key beside
    the query, which is otherwise packed with it). ``size`` is the expression a ``SIZE`` relation holds the dim to
    (a formula of :mod:`opspec.runtime.formula` over int attributes); ``named`` is how messages name the dim, and
    ``unless`` a value of the attribute that says "not set" and opts out.
    """

    kind: DimRelationKind
    input: str
    axis: int
    rank: int | None = None
    size: str | None = None
    named: str | None = None
    unless: int | None = None
    present: str | None = None

    def dim_text(self) -> str:
        """The dim in the YAML's notation: ``dim(query, -1)``."""
        return f"dim({self.input}, {self.axis})"

    def dim_name(self) -> str:
        """How messages name the dim: ``named``, else ``query's axis 2`` or ``query's last axis``."""
        if self.named is not None:
            return self.named
        return f"{self.input}'s last axis" if self.axis == -1 else f"{self.input}'s axis {self.axis}"

    def describe(self) -> str:
        """The relation in the YAML's notation (``divides dim(query, 2) if rank(query) == 3``)."""
        if self.kind is DimRelationKind.DIVIDES:
            text = f"divides {self.dim_text()}"
        elif self.kind is DimRelationKind.EQUALS:
            text = f"== {self.dim_text()}"
        else:
            text = f"{self.dim_text()} == {self.size}"
        if self.unless is not None:
            text += f" or {self.unless}"
        if self.rank is not None:
            text += f" if rank({self.input}) == {self.rank}"
        if self.present is not None:
            text += f" if present({self.present})"
        if self.named is not None:
            text += f' as "{self.named}"'
        return text


class ValueConstraint(Record):
    """opspec's own limits on an attribute's value, checked by ``opspec check`` and inference.

    ``minimum``/``maximum`` bound a number (or every element of a list);
    ``allowed`` enumerates the legal values (strings compared without regard to case when
    ``ignore_case``); ``min_length``/``max_length`` bound a list (a tensor: its element count).
    Two limits depend on a node's input, named by ``axis_of`` and ``length_of``: with ``r``
    the rank of input ``axis_of`` (of its elements, for a sequence), the value (or every
    element) is an axis in ``[-(r + axis_extra), r + axis_extra - 1]``; with ``r`` the rank of input ``length_of``,
    the list has ``length_scale * r + length_offset`` values. With ``length_as``, the list has
    as many values as the node's list attribute of that name. ``relations`` tie an integer to
    dims of the node's inputs (:class:`DimRelation`). :meth:`violations` checks the
    rest; :mod:`opspec.runtime.constraints` checks these against a node.
    """

    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    exclusive_maximum: bool = False
    allowed: tuple[object, ...] | None = None
    ignore_case: bool = False
    min_length: int | None = None
    max_length: int | None = None
    axis_of: str | None = None
    axis_extra: int = 0
    length_of: str | None = None
    length_scale: int = 1
    length_offset: int = 0
    length_as: str | None = None
    relations: tuple[DimRelation, ...] = ()

    def violations(self, value: object) -> list[str]:
        """Describe every way ``value`` breaks the limits that need no input (empty when it fits);
        a tensor value (with a ``shape`` of whole numbers) has its element count as its length."""
        problems: list[str] = []
        shape = getattr(value, "shape", None)
        if type(shape) is tuple and all(type(dim) is int for dim in shape):  # a tensor: its length is its size
            return self.length_violations(math.prod(shape))
        items = list(value) if isinstance(value, (list, tuple)) else None
        if items is not None:
            problems.extend(self.length_violations(len(items)))
        for item in items if items is not None else [value]:
            problems.extend(self._item_violations(item))
        return problems

    def length_violations(self, count: int) -> list[str]:
        """Describe how a list (or a tensor) of ``count`` values breaks the length limits."""
        problems = []
        if self.min_length is not None and count < self.min_length:
            problems.append(f"needs at least {self.min_length} values, got {count}")
        if self.max_length is not None and count > self.max_length:
            problems.append(f"allows at most {self.max_length} values, got {count}")
        return problems

    def _item_violations(self, item: object) -> list[str]:
        problems = []
        if self.allowed is not None and item not in self.allowed and not (
                self.ignore_case and isinstance(item, str)
                and item.lower() in {choice.lower() for choice in self.allowed if isinstance(choice, str)}):
            choices = ", ".join(repr(choice) for choice in self.allowed)
            problems.append(f"{item!r} is not one of {choices}")
        if self.minimum is not None and isinstance(item, (int, float)):
            if item < self.minimum or (self.exclusive_minimum and item == self.minimum):
                problems.append(f"{item!r} must be {'>' if self.exclusive_minimum else '>='} {self.minimum}")
        if self.maximum is not None and isinstance(item, (int, float)):
            if item > self.maximum or (self.exclusive_maximum and item == self.maximum):
                problems.append(f"{item!r} must be {'<' if self.exclusive_maximum else '<='} {self.maximum}")
        return problems

    def length_text(self) -> str:
        """The list length ``length_of`` asks for, in the YAML's notation (``2 * rank(X) - 4``)."""
        scale = f"{self.length_scale} * " if self.length_scale != 1 else ""
        offset = f" {'+' if self.length_offset > 0 else '-'} {abs(self.length_offset)}" if self.length_offset else ""
        return f"{scale}rank({self.length_of}){offset}"

    def describe(self) -> str:
        """Compact human text, the same notation the YAML uses (``>= 1``, ``in {a, b}``)."""
        parts = []
        if self.minimum is not None:
            parts.append(f"{'>' if self.exclusive_minimum else '>='} {self.minimum}")
        if self.maximum is not None:
            parts.append(f"{'<' if self.exclusive_maximum else '<='} {self.maximum}")
        if self.allowed is not None:
            parts.append("in {" + ", ".join(_literal(v) for v in self.allowed) + "}"
                         + (" any case" if self.ignore_case else ""))
        if self.axis_of is not None:
            parts.append(f"in rank({self.axis_of})" + (f" + {self.axis_extra}" if self.axis_extra else ""))
        if self.min_length is not None and self.min_length == self.max_length:
            parts.append(f"len == {self.min_length}")
        else:
            if self.min_length is not None:
                parts.append(f"len >= {self.min_length}")
            if self.max_length is not None:
                parts.append(f"len <= {self.max_length}")
        if self.length_of is not None:
            parts.append(f"len == {self.length_text()}")
        if self.length_as is not None:
            parts.append(f"len == len({self.length_as})")
        parts.extend(relation.describe() for relation in self.relations)
        return " ".join(parts)


def _literal(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)


class Attribute(Record):
    """One attribute of an operator version.

    ``default`` is the plain Python value (None when there is none); ``default_value`` is
    the same value as an ``AttributeProto``, as onnx gives it, built on each access.
    """

    name: str
    type: AttrType
    description: str = ""
    required: bool = False
    default: object = None
    constraint: ValueConstraint | None = None

    @property
    def default_value(self) -> AttributeProto:
        """The default as an ``AttributeProto`` (type ``UNDEFINED`` when there is none)."""
        from opspec.runtime.attribute_proto import default_proto

        return default_proto(self)


class TypeConstraintParam(Record):
    """A type parameter (``T``) and the type strings (a tuple) it may bind to."""

    type_param_str: str
    allowed_type_strs: tuple[str, ...]
    description: str = ""


class RuleRef(Record):
    """The inference rule an operator version uses, with its arguments from the YAML."""

    name: str
    args: Mapping[str, object] = _EMPTY

    def __hash__(self) -> int:
        return hash((self.name, tuple(sorted(self.args.items()))))


class SupportType(enum.IntEnum):
    """Whether an operator version is part of the stable standard."""

    COMMON = 0
    EXPERIMENTAL = 1


class NodeDeterminism(enum.IntEnum):
    """Whether a node of this operator always gives the same outputs for the same inputs."""

    Unknown = 0
    NonDeterministic = 1
    Deterministic = 2


class FunctionBody(Record):
    """A function body in ONNX text syntax (one node per line), written for ``opset``."""

    opset: int
    text: str


class _OpSchemaFields(Record):
    """The fields of :class:`OpSchema`."""

    name: str
    domain: str
    since_version: int
    inputs: tuple[FormalParameter, ...]
    outputs: tuple[FormalParameter, ...]
    attributes: Mapping[str, Attribute]
    type_constraints: tuple[TypeConstraintParam, ...]
    min_input: int
    max_input: int
    min_output: int
    max_output: int
    doc: str = ""
    summary: str = ""
    deprecated: bool = False
    inference: RuleRef | None = None
    support_level: SupportType = SupportType.COMMON
    node_determinism: NodeDeterminism = NodeDeterminism.Deterministic
    functions: tuple[FunctionBody, ...] = ()
    context_dependent_function_opset_versions: tuple[int, ...] = ()
    change_class: str = ""
    file: str = ""
    line: int = 0
    convert: Mapping[str, Any] = _EMPTY
    cost: Mapping[str, Any] = _EMPTY


class OpSchema(_OpSchemaFields):
    """One version of one operator, fully resolved.

    ``attributes`` is a read-only mapping from name to :class:`Attribute`. ``functions``
    holds the bodies that define the operator in terms of others, oldest opset first;
    ``context_dependent_function_opset_versions`` the opsets for which a body exists
    only as code that depends on the node (none of it is data here). ``change_class``
    says how this version relates to the one before (``compatible``, ``narrowing``,
    ``breaking`` or ``semantic``; empty for a first version), as opdefs/README.md defines.
    ``file`` and ``line`` say where the version is declared (a YAML path relative to the
    folder that holds the opdefs tree). ``convert`` says how a model converts between this
    version and the one before where the signature cannot say it (the YAML's ``convert``
    block; see opdefs/README.md). ``cost`` is the version's cost block (a kind, formulas by
    measure, a cost computed in code, or why it is unknown; see opdefs/README.md), inherited
    by later versions until one changes it; empty when the version declares none.
    """

    __slots__ = ()

    # onnx exposes the enums and record types on the class; so do we.
    FormalParameterOption: TypeAlias = FormalParameterOption
    DifferentiationCategory: TypeAlias = DifferentiationCategory
    AttrType: TypeAlias = AttrType
    Attribute: TypeAlias = Attribute
    FormalParameter: TypeAlias = FormalParameter
    TypeConstraintParam: TypeAlias = TypeConstraintParam
    SupportType: TypeAlias = SupportType
    NodeDeterminism: TypeAlias = NodeDeterminism

    @property
    def has_function(self) -> bool:
        return bool(self.functions)

    @property
    def has_context_dependent_function(self) -> bool:
        return bool(self.context_dependent_function_opset_versions)

    @property
    def all_function_opset_versions(self) -> list[int]:
        """Opsets with a body of either kind, ascending."""
        return sorted({*self.function_opset_versions, *self.context_dependent_function_opset_versions})

    @property
    def non_deterministic(self) -> bool:
        return self.node_determinism is NodeDeterminism.NonDeterministic

    @property
    def function_opset_versions(self) -> tuple[int, ...]:
        return tuple(body.opset for body in self.functions)

    @property
    def function_body(self) -> FunctionProto | None:
        """The body for the newest opset it is written for (None when there is none)."""
        return self.get_function_with_opset_version(self.functions[-1].opset) if self.functions else None

    def get_function_with_opset_version(self, opset: int) -> FunctionProto | None:
        """The body written for the newest opset not after ``opset``, as a ``FunctionProto``.

        None when every body is written for a later opset. Parsed on first use.
        """
        chosen = None
        for body in self.functions:
            if body.opset <= opset:
                chosen = body
        if chosen is None:
            return None
        from opspec.runtime.function_text import function_proto

        return function_proto(self, chosen)

    def __hash__(self) -> int:
        return hash((self.domain, self.name, self.since_version))

    def __repr__(self) -> str:
        return f"OpSchema({self.domain or 'ai.onnx'}::{self.name}, since_version={self.since_version})"

    @property
    def has_type_and_shape_inference_function(self) -> bool:
        """Whether the version has an inference rule (the YAML names it; every named rule is implemented)."""
        return self.inference is not None

    @staticmethod
    def is_infinite(value: int) -> bool:
        """Whether an arity bound means "no bound" (as ``max_input`` of variadic ops)."""
        return value == UNBOUNDED

    @property
    def type_constraint_map(self) -> dict[str, TypeConstraintParam]:
        """Type constraints by parameter name."""
        return {constraint.type_param_str: constraint for constraint in self.type_constraints}
