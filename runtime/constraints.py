"""Enforcing the value constraints the YAML declares on attributes, against one node.

A constraint that needs no input (bounds, allowed values, list lengths) is checked on the
value alone; an axis range or a list length relative to an input's rank is checked when
that input's rank is known, and never otherwise. A relation to an input's dim (divides it,
equals it, or holds it to a size expression) is checked only where that dim is a known number:
a symbol or an unknown dim may take a value that fits. Only attributes the node sets are
checked: the compiler has checked every default already.

Every rule runs behind :func:`enforcing`, so inference reports a node whose attributes
break their constraints as one :class:`ConstraintError` carrying every :class:`Violation`,
in place of the rule's answer.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import wraps
from typing import Any, Callable, Mapping, Sequence

from opspec.runtime.contract.context import InferenceError
from opspec.runtime.contract.values import SequenceType, SparseTensorType, TensorType
from opspec.runtime.formula import attribute_names, evaluate, parse_formula
from opspec.runtime.schema import AttrType, DimRelation, DimRelationKind, ValueConstraint

_SCALARS: dict[AttrType, tuple[type, ...]] = {AttrType.INT: (int,), AttrType.FLOAT: (int, float),
                                              AttrType.STRING: (str,)}
_LISTS = {AttrType.INTS: AttrType.INT, AttrType.FLOATS: AttrType.FLOAT, AttrType.STRINGS: AttrType.STRING}


@dataclass(frozen=True)
class Violation:
    """One way a node's attribute breaks the constraint its schema declares: the attribute,
    the constraint in the YAML's notation, the value the node gives and what is wrong."""

    attribute: str
    constraint: str
    found: object
    problem: str

    def __str__(self) -> str:
        shown = list(self.found) if isinstance(self.found, tuple) else self.found
        return f"attribute '{self.attribute}' = {shown!r}: {self.problem} (constraint: {self.constraint})"


class ConstraintError(InferenceError):
    """A node whose attributes break their constraints: every violation, in order."""

    def __init__(self, violations: Sequence[Violation]) -> None:
        self.violations = tuple(violations)
        super().__init__("; ".join(str(violation) for violation in self.violations))


def _fits(kind: AttrType, value: Any) -> bool:
    """Whether ``value`` is of the kind the schema declares (a wrong kind is reported elsewhere)."""
    if kind in _SCALARS:
        return isinstance(value, _SCALARS[kind]) and not isinstance(value, bool)
    if kind in _LISTS:
        return isinstance(value, (list, tuple)) and all(_fits(_LISTS[kind], item) for item in value)
    return False


def _position(params: Sequence[Any], formal: str) -> int | None:
    """The position of formal parameter ``formal`` among ``params`` (only a schema's last formal
    may be variadic, so a formal's position is its input's position); found once per schema."""
    key = (id(params), formal)
    found = _POSITIONS.get(key)
    if found is None or found[0] is not params:
        position = next((index for index, param in enumerate(params) if param.name == formal), None)
        found = _POSITIONS[key] = (params, position)  # holding params keeps its id from being reused
    return found[1]


#: :func:`_position` by (the formal parameters' identity, name): schemas are few, nodes many.
_POSITIONS: dict[tuple[int, str], tuple[Any, int | None]] = {}


def _rank(schema: Any, inputs: Sequence[Any], formal: str) -> int | None:
    """The rank of the input bound to formal parameter ``formal`` (of its elements, for a
    sequence), when it is known."""
    position = _position(schema.inputs, formal)
    return None if position is None else _rank_at(inputs, position)


def _shape(schema: Any, inputs: Sequence[Any], formal: str) -> tuple | None:
    """The shape of the tensor input bound to formal ``formal``, when known."""
    for position, param in enumerate(schema.inputs):
        if param.name == formal:
            value = inputs[position] if position < len(inputs) else None
            if (type(value) is TensorType or type(value) is SparseTensorType) and value.shape is not None:
                return tuple(value.shape)
            return None
    return None


def _known(schema: Any, inputs: Sequence[Any], formal: str) -> bool:
    """Whether the node gives formal input ``formal`` a value of known type."""
    for position, param in enumerate(schema.inputs):
        if param.name == formal:
            return position < len(inputs) and inputs[position] is not None
    return False


def _relation_violations(name: str, value: int, relations: Sequence[DimRelation], schema: Any,
                         inputs: Sequence[Any], attributes: Mapping[str, Any]) -> list[str]:
    """How attribute ``name`` = ``value`` breaks its relations to the dims the node's inputs make known."""
    problems = []
    for relation in relations:
        if relation.unless is not None and value == relation.unless:
            continue
        if relation.present is not None and not _known(schema, inputs, relation.present):
            continue  # an input left out, or one whose type is unknown (it may be absent): no relation
        shape = _shape(schema, inputs, relation.input)
        if shape is None or (relation.rank is not None and len(shape) != relation.rank):
            continue
        if not -len(shape) <= relation.axis < len(shape):
            continue  # a rank the op refuses is its rule's to report
        dim = shape[relation.axis]
        if type(dim) is not int:
            continue
        if relation.kind is DimRelationKind.DIVIDES:
            if value > 0 and dim % value:
                problems.append(f"{relation.dim_name()} ({name} {value}) {dim} is not divisible by {value}")
        elif relation.kind is DimRelationKind.EQUALS:
            if dim != value:
                problems.append(f"{name} {value} does not match {relation.dim_name()} {dim}")
        else:
            problems.extend(_size_violation(relation, dim, schema, attributes))
    return problems


@dataclass(frozen=True)
class _IntAttributes:
    """A :class:`~opspec.runtime.formula.FormulaEnv` holding int attribute values and no tensors."""

    values: Mapping[str, int]

    def tensor(self, name: str) -> tuple[bool, Any]:
        raise LookupError(name)

    def tensor_at(self, output: bool, index: int) -> tuple[bool, Any]:
        raise LookupError(index)

    def count(self, output: bool) -> int:
        raise LookupError("count")

    def attribute(self, name: str) -> Any:
        return self.values[name]


def _size_violation(relation: DimRelation, dim: int, schema: Any, attributes: Mapping[str, Any]) -> list[str]:
    """A dim against its size, with each attribute the node leaves out at its default; silent
    unless every attribute the size reads has an int value."""
    formula = parse_formula(relation.size or "")
    values = {}
    for name in attribute_names(formula):
        given = attributes.get(name)
        if given is None and name in schema.attributes:
            given = schema.attributes[name].default
        if type(given) is not int:
            return []
        values[name] = given
    wanted = evaluate(formula, _IntAttributes(values))
    if type(wanted) is not int or wanted == dim:
        return []
    bound = ", ".join(f"{name} = {values[name]}" for name in sorted(values))
    return [f"{relation.dim_name()} is {dim}, but {relation.size} is {wanted} ({bound})"]


def _rank_violations(constraint: ValueConstraint, value: Any, schema: Any, inputs: Sequence[Any]) -> list[str]:
    problems = []
    if constraint.axis_of is not None:
        rank = _rank(schema, inputs, constraint.axis_of)
        if rank is not None:
            bound = rank + constraint.axis_extra
            for axis in value if isinstance(value, (list, tuple)) else (value,):
                if bound == 0:
                    problems.append(f"axis {axis} cannot be given: input '{constraint.axis_of}' has rank 0")
                elif not -bound <= axis < bound:
                    problems.append(f"axis {axis} is outside [{-bound}, {bound - 1}] for input "
                                    f"'{constraint.axis_of}' of rank {rank}")
    if constraint.length_of is not None:
        rank = _rank(schema, inputs, constraint.length_of)
        if rank is not None:
            wanted = constraint.length_scale * rank + constraint.length_offset
            if len(value) != wanted:
                problems.append(f"has {len(value)} values, but {constraint.length_text()} is {wanted} for input "
                                f"'{constraint.length_of}' of rank {rank}")
    return problems


def _same_length_violations(other: str, value: Any, attributes: Mapping[str, Any], schema: Any) -> list[str]:
    """A list against the length of the node's list attribute ``other`` (its default when unset)."""
    given = attributes.get(other)
    if given is None and other in schema.attributes:
        given = schema.attributes[other].default
    if not isinstance(given, (list, tuple)) or len(given) == len(value):
        return []
    return [f"has {len(value)} values, but '{other}' has {len(given)}"]


def _rank_at(inputs: Sequence[Any], position: int) -> int | None:
    """The rank of actual input ``position`` (of its elements, for a sequence), when known."""
    value = inputs[position] if position < len(inputs) else None
    if type(value) is SequenceType:
        value = value.elem
    if (type(value) is TensorType or type(value) is SparseTensorType) and value.shape is not None:
        return len(value.shape)
    return None


# Members read once here: reading an enum class's member costs several times a module global.
_INT, _INTS, _FLOAT, _STRING = AttrType.INT, AttrType.INTS, AttrType.FLOAT, AttrType.STRING


@dataclass(frozen=True, slots=True)
class _QuickCheck:
    """One attribute's constraint, made ready to pass a value that plainly fits it: every limit
    of a number, a string or a list of ints, and the axis range and list length an input's rank
    sets. It only ever says "fits"; anything else (a relation to dims, a value of another kind,
    a limit broken) goes to the full check, which words the problem."""

    kind: AttrType
    low: float | None
    low_open: bool
    high: float | None
    high_open: bool
    allowed: frozenset[object] | None
    min_length: int | None
    max_length: int | None
    #: The actual input whose rank bounds an axis (``axis_of``), and what the range adds to that rank.
    axis_at: int | None
    axis_extra: int
    #: The actual input whose rank sets the list's length (``length_of``), and the length's scale and offset.
    length_at: int | None
    length_scale: int
    length_offset: int

    def fits(self, value: Any, inputs: Sequence[Any]) -> bool:
        """Whether ``value`` surely breaks no limit, given the node's input types ``inputs``."""
        kind = self.kind
        items: Sequence[Any]
        if kind is _INTS:
            if type(value) is not list and type(value) is not tuple:
                return False
            for item in value:
                if type(item) is not int:
                    return False
            count = len(value)
            if self.min_length is not None and count < self.min_length \
                    or self.max_length is not None and count > self.max_length:
                return False
            if self.length_at is not None:
                rank = _rank_at(inputs, self.length_at)
                if rank is not None and count != self.length_scale * rank + self.length_offset:
                    return False
            items = value
        elif kind is _INT:
            if type(value) is not int:
                return False
            items = (value,)
        elif kind is _FLOAT:
            if type(value) is not float and type(value) is not int:
                return False
            items = (value,)
        elif kind is _STRING:
            if type(value) is not str:
                return False
            items = (value,)
        else:  # a tensor, held to its element count alone
            shape = getattr(value, "shape", None)
            if type(shape) is not tuple:
                return False
            count = 1
            for dim in shape:
                if type(dim) is not int:
                    return False
                count *= dim
            return (self.min_length is None or count >= self.min_length) \
                and (self.max_length is None or count <= self.max_length)
        allowed, low, high = self.allowed, self.low, self.high
        for item in items:
            if allowed is not None and item not in allowed:
                return False
            if low is not None and (item <= low if self.low_open else item < low):
                return False
            if high is not None and (item >= high if self.high_open else item > high):
                return False
        if self.axis_at is not None:
            rank = _rank_at(inputs, self.axis_at)
            if rank is not None:
                bound = rank + self.axis_extra
                if bound == 0:
                    return False
                for item in items:
                    if not -bound <= item < bound:
                        return False
        return True


def _quick_check(schema: Any, kind: AttrType, constraint: Any) -> _QuickCheck | None:
    """``constraint`` of an attribute of ``kind`` made a :class:`_QuickCheck` (None when it has a
    part only the full check weighs: a relation to dims, another list's length, letters of
    either case, or an input's rank bounding a kind it does not apply to)."""
    listed, numbers = kind is AttrType.INTS, kind in (AttrType.INT, AttrType.INTS, AttrType.FLOAT)
    bounded = constraint.minimum is not None or constraint.maximum is not None
    if kind is AttrType.TENSOR:
        if bounded or constraint.allowed is not None or constraint.axis_of is not None \
                or constraint.length_of is not None or constraint.length_as is not None or constraint.relations:
            return None
    elif kind not in (AttrType.INT, AttrType.INTS, AttrType.FLOAT, AttrType.STRING) or constraint.relations \
            or constraint.length_as is not None or constraint.ignore_case or (bounded and not numbers) \
            or (constraint.length_of is not None and not listed) \
            or (constraint.axis_of is not None and kind not in (AttrType.INT, AttrType.INTS)) \
            or (not listed and (constraint.min_length is not None or constraint.max_length is not None)):
        return None
    try:
        allowed = frozenset(constraint.allowed) if constraint.allowed is not None else None
    except TypeError:  # an unhashable choice: compared one by one by the full check
        return None
    axis_at = _position(schema.inputs, constraint.axis_of) if constraint.axis_of is not None else None
    length_at = _position(schema.inputs, constraint.length_of) if constraint.length_of is not None else None
    return _QuickCheck(kind, constraint.minimum, constraint.exclusive_minimum, constraint.maximum,
                       constraint.exclusive_maximum, allowed, constraint.min_length, constraint.max_length,
                       axis_at, constraint.axis_extra, length_at, constraint.length_scale, constraint.length_offset)


def _quick_checks(schema: Any) -> Mapping[str, _QuickCheck | None]:
    """Each constrained attribute of ``schema`` with its :class:`_QuickCheck` (made once per schema)."""
    found = _QUICK.get(id(schema))
    if found is None or found[0] is not schema:
        checks = {name: _quick_check(schema, AttrType(spec.type), spec.constraint)
                  for name, spec in schema.attributes.items() if spec.constraint is not None}
        found = _QUICK[id(schema)] = (schema, checks)  # holding the schema keeps its id from being reused
    return found[1]


#: :func:`_quick_checks` by the schema's identity: schemas are few, nodes many.
_QUICK: dict[int, tuple[Any, Mapping[str, _QuickCheck | None]]] = {}


def attribute_violations(schema: Any, attributes: Mapping[str, Any], inputs: Sequence[Any]) -> list[Violation]:
    """Every way the node's ``attributes`` (plain values by name) break their constraints,
    given the node's input types ``inputs`` (None where unknown)."""
    found = _QUICK.get(id(schema))  # as _quick_checks, without a call where it is made already
    checks = found[1] if found is not None and found[0] is schema else _quick_checks(schema)
    for name in attributes:
        if name in checks:
            check = checks[name]
            if check is None or not check.fits(attributes[name], inputs):
                return _all_violations(schema, attributes, inputs)
    return []


def _all_violations(schema: Any, attributes: Mapping[str, Any], inputs: Sequence[Any]) -> list[Violation]:
    """:func:`attribute_violations` weighing every constraint in full."""
    violations: list[Violation] = []
    declared = schema.attributes
    for name in attributes:
        spec = declared.get(name)
        if spec is None or spec.constraint is None:
            continue  # its value is not even read
        value, constraint = attributes[name], spec.constraint
        tensor = spec.type is AttrType.TENSOR
        if not tensor and not _fits(spec.type, value):
            continue
        if tensor and not hasattr(value, "shape"):
            continue  # a node giving another kind of value is refused for its type, not held to the limit
        found = constraint.violations(value)
        if constraint.axis_of is not None or constraint.length_of is not None:
            found += _rank_violations(constraint, value, schema, inputs)
        if constraint.length_as is not None:
            found += _same_length_violations(constraint.length_as, value, attributes, schema)
        if constraint.relations and type(value) is int:
            found += _relation_violations(name, value, constraint.relations, schema, inputs, attributes)
        if found:
            text, shown = constraint.describe(), f"tensor of shape {list(value.shape)}" if tensor else value
            violations.extend(Violation(name, text, shown, problem) for problem in found)
    return violations


def enforcing(rule: Callable[[Any], None]) -> Callable[[Any], None]:
    """``rule`` behind a check of the node's attribute constraints: a node that breaks one
    is a :class:`ConstraintError` carrying every violation."""

    @wraps(rule)
    def checked(ctx: Any) -> None:
        # A schema without attributes constrains none: the node's are not even read.
        attributes = ctx.node_attributes if ctx.schema.attributes else None
        if attributes:
            violations = attribute_violations(ctx.schema, attributes, ctx.input_types)
            if violations:
                raise ConstraintError(violations)
        rule(ctx)

    return checked


__all__ = ["ConstraintError", "Violation", "attribute_violations", "enforcing"]
