"""Compile-time checks of an attribute's value constraint against the attribute itself.

Each part of a constraint must make sense for the attribute's type (bounds for numbers,
lengths for lists, axes for ints), allowed values must be of that type, and an input a
limit is relative to must be an input of the version, and a size (a formula of
:mod:`opspec.runtime.formula`) may read only the version's int attributes and call only its
arithmetic functions. The default is checked against the
limits that need no input in :mod:`opspec.codegen.resolve`.
"""
from __future__ import annotations

from typing import Iterable, Mapping

from opspec.runtime.formula import ARITHMETIC, FormulaNames, formula_problems
from opspec.runtime.schema import AttrType, DimRelation, ValueConstraint

_NUMBERS = {AttrType.INT, AttrType.FLOAT, AttrType.INTS, AttrType.FLOATS}
_INTS = {AttrType.INT, AttrType.INTS}
_ELEMENT: dict[AttrType, type | tuple[type, ...]] = {AttrType.INT: int, AttrType.INTS: int, AttrType.FLOAT: (int, float), AttrType.FLOATS: (int, float),
            AttrType.STRING: str, AttrType.STRINGS: str}


def constraint_problems(kind: AttrType, constraint: ValueConstraint, inputs: Iterable[str],
                        attributes: Mapping[str, AttrType] | None = None) -> list[str]:
    """Every way ``constraint`` does not fit an attribute of type ``kind`` in a version whose
    inputs are ``inputs`` and whose attributes have the types ``attributes`` (empty when it fits)."""
    problems = []
    spelling = kind.spelling
    if (constraint.minimum is not None or constraint.maximum is not None) and kind not in _NUMBERS:
        problems.append(f"a bound (>, >=, <, <=) needs a number or a list of numbers, not {spelling}")
    if constraint.allowed is not None:
        element = _ELEMENT.get(kind)
        if element is None:
            problems.append(f"allowed values need an int, float or string type, not {spelling}")
        else:
            wrong = [value for value in constraint.allowed
                     if not isinstance(value, element) or isinstance(value, bool)]
            if wrong:
                problems.append(f"allowed value {wrong[0]!r} is not of the attribute's type {spelling}")
    if constraint.ignore_case and (constraint.allowed is None or _ELEMENT.get(kind) is not str):
        problems.append(f"'any case' needs allowed values of a string type, not {spelling}")
    if constraint.length_as is not None:
        other = (attributes or {}).get(constraint.length_as)
        if not kind.is_list:
            problems.append(f"a length (len) needs a list type, not {spelling}")
        elif other is None or not other.is_list:
            problems.append(f"len({constraint.length_as}) names no list attribute of this version")
    if constraint.length_of is not None and not kind.is_list:
        problems.append(f"a length (len) needs a list type, not {spelling}")
    elif (constraint.min_length is not None or constraint.max_length is not None) \
            and not (kind.is_list or kind is AttrType.TENSOR):
        problems.append(f"a length (len) needs a list or tensor type, not {spelling}")
    if constraint.axis_of is not None and kind not in _INTS:
        problems.append(f"an axis range (in rank(...)) needs int or ints, not {spelling}")
    names = set(inputs)
    for relative_to in (constraint.axis_of, constraint.length_of):
        if relative_to is not None and relative_to not in names:
            known = ", ".join(sorted(names)) or "none"
            problems.append(f"rank({relative_to}) names no input of this version (inputs: {known})")
    if constraint.relations and kind is not AttrType.INT:
        problems.append(f"a relation to a dim (divides, ==, dim(...)) needs an int, not {spelling}")
    for relation in constraint.relations:
        problems.extend(_relation_problems(relation, names, attributes or {}))
    return problems


def _relation_problems(relation: DimRelation, inputs: set[str], attributes: Mapping[str, AttrType]) -> list[str]:
    """Every way ``relation`` names what the version does not have."""
    problems = []
    shown = relation.describe()
    if relation.input not in inputs:
        known = ", ".join(sorted(inputs)) or "none"
        problems.append(f"{shown}: {relation.input!r} names no input of this version (inputs: {known})")
    if relation.present is not None and relation.present not in inputs:
        known = ", ".join(sorted(inputs)) or "none"
        problems.append(f"{shown}: present({relation.present}) names no input of this version (inputs: {known})")
    if relation.rank is not None and not -relation.rank <= relation.axis < relation.rank:
        problems.append(f"{shown}: axis {relation.axis} is not an axis of a rank-{relation.rank} input")
    if relation.size is not None:
        names = FormulaNames(attributes={name: kind.spelling for name, kind in attributes.items()},
                             functions=ARITHMETIC)
        problems.extend(f"{shown}: {message}" for message, _ in formula_problems(relation.size, names))
    return problems


__all__ = ["constraint_problems"]
