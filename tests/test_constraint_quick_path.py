"""The quick pass of attribute constraints says exactly what the full check says.

Inference checks every node's attributes against their constraints; a value that plainly fits
is passed without weighing every limit in full. For every constrained attribute of every
schema, values on and around each limit, at input ranks known and unknown, get the same
violations (none, or the same ones in the same order) either way.
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

import opspec
from opspec.runtime import constraints
from opspec.runtime.contract.values import SequenceType, TensorType
from opspec.runtime.schema import AttrType

_INTS = (-29, -5, -2, -1, 0, 1, 2, 3, 4, 5, 28, 29)
_INT_LISTS: tuple[Any, ...] = ([], [0], [1], [-1], [0, 1], [1, 1], [2, 0], [-1, 0], [0, 0, 0], [1, 2, 3], [0, 1, 2, 3], [3, 2, 1, 0],
              [-4, 1], [1, 1, 1, 1], [0, 0, 0, 0, 0, 0], [1] * 8, [5, 0, -6], (0, 1), [1, True], [1, 2.0])
_FLOATS = (-1.0, 0, 0.0, 1e-9, 0.5, 1, 1.0, 2.0, 1e9, float("nan"), float("inf"))
_WRONG = (True, None, "1", 1.5, [1], b"x")


def _candidates(attribute: Any) -> list[Any]:
    """Values of the attribute's kind on and around its limits, and a few of other kinds."""
    constraint, kind = attribute.constraint, attribute.type
    found: list[Any] = list(_WRONG)
    for limit in (constraint.minimum, constraint.maximum):
        if limit is not None:
            found += [limit - 1, limit, limit + 1, int(limit), int(limit) + 1, int(limit) - 1]
    if kind is AttrType.INT:
        found += _INTS
    elif kind is AttrType.INTS:
        found += [list(v) if isinstance(v, list) else v for v in _INT_LISTS]
        found += [[value] * count for value in (0, 1, -1, 2) for count in range(9)]
    elif kind is AttrType.FLOAT:
        found += _FLOATS
    elif kind is AttrType.STRING:
        for choice in constraint.allowed or ():
            if isinstance(choice, str):
                found += [choice, choice.lower(), choice.upper(), choice + " "]
        found += ["", "x"]
    elif kind is AttrType.TENSOR:
        found += [SimpleNamespace(shape=shape) for shape in ((), (0,), (1,), (2,), (1, 1), (2, 3), ("N",), [1])]
    found += list(constraint.allowed or ())
    return found


def _input_sets(schema: Any) -> list[list[Any]]:
    """Every input at one rank (unknown, 0 to 4, 6), as tensors and as sequences; and no inputs."""
    count = max(len(schema.inputs), 1)
    sets: list[list[Any]] = [[], [None] * count, [TensorType(1, None)] * count]
    for rank in (0, 1, 2, 3, 4, 6):
        sets.append([TensorType(1, (3,) * rank)] * count)
        sets.append([SequenceType(TensorType(1, (3,) * rank))] * count)
    return sets


def _constrained() -> list[tuple[Any, Any]]:
    seen, found = set(), []
    for schema in opspec.get_all_schemas_with_history():
        for attribute in schema.attributes.values():
            key = (schema.domain, schema.name, attribute.name, attribute.constraint)
            if attribute.constraint is not None and key not in seen:
                seen.add(key)
                found.append((schema, attribute))
    return found


def test_quick_pass_agrees_with_the_full_check() -> None:
    cases = 0
    for schema, attribute in _constrained():
        for inputs in _input_sets(schema):
            for value in _candidates(attribute):
                attributes = {attribute.name: value}
                quick = constraints.attribute_violations(schema, attributes, inputs)
                full = constraints._all_violations(schema, attributes, inputs)
                assert quick == full, (schema.name, schema.since_version, attribute.name, value, inputs)
                cases += 1
    assert cases > 1000


def test_the_quick_pass_passes_plain_values_without_the_full_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """Values that fit never reach the full check (it is what the quick pass saves)."""
    def refuse(*_: Any) -> list[Any]:
        raise AssertionError("the full check ran")

    monkeypatch.setattr(constraints, "_all_violations", refuse)
    gather = opspec.get_schema("Gather", 13)
    transpose = opspec.get_schema("Transpose", 13)
    conv = opspec.get_schema("Conv", 11)
    rank3 = [TensorType(1, (2, 3, 4))] * 3
    assert constraints.attribute_violations(gather, {"axis": -3}, rank3) == []
    assert constraints.attribute_violations(transpose, {"perm": [2, 0, 1]}, rank3) == []
    assert constraints.attribute_violations(conv, {"kernel_shape": [3], "strides": [1], "pads": [1, 1],
                                                   "group": 1, "auto_pad": "NOTSET"}, rank3) == []


def test_a_broken_limit_still_gets_its_full_message() -> None:
    transpose = opspec.get_schema("Transpose", 13)
    rank3 = [TensorType(1, (2, 3, 4))]
    problems = [v.problem for v in constraints.attribute_violations(transpose, {"perm": [0, 3]}, rank3)]
    assert problems == ["axis 3 is outside [-3, 2] for input 'data' of rank 3",
                        "has 2 values, but rank(data) is 3 for input 'data' of rank 3"]
