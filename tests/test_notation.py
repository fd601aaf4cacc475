"""The compact one-line notation for inputs, outputs and attributes."""
from __future__ import annotations

import pytest

from opspec.codegen.history import attribute_spec, param_spec
from opspec.codegen.notation import NotationError, parse_attribute, parse_param, shortest_float
from opspec.runtime.schema import (
    Attribute,
    AttrType,
    DifferentiationCategory,
    FormalParameter,
    FormalParameterOption,
    ValueConstraint,
)


@pytest.mark.parametrize("text, option, min_arity, homogeneous, category", [
    ("T", "Single", 1, True, "Unknown"),
    ("T?", "Optional", 1, True, "Unknown"),
    ("T+", "Variadic", 1, True, "Unknown"),
    ("T* heterogeneous", "Variadic", 0, False, "Unknown"),
    ("tensor(int64)? non-differentiable", "Optional", 1, True, "NonDifferentiable"),
    ("map(int64, tensor(float)) differentiable", "Single", 1, True, "Differentiable"),
])
def test_param_specs(text, option, min_arity, homogeneous, category):
    spec = parse_param(text)
    assert (spec.option.name, spec.min_arity, spec.is_homogeneous, spec.differentiation.name) == (
        option, min_arity, homogeneous, category)
    rendered = param_spec(FormalParameter("x", spec.type_str, frozenset(), spec.option, spec.is_homogeneous,
                                          spec.min_arity, spec.differentiation))
    assert parse_param(rendered) == spec


@pytest.mark.parametrize("text, message", [
    ("", "expected a type parameter"),
    ("T heterogeneous", "only a variadic"),
    ("tensor(float", "unbalanced parentheses"),
    ("T sometimes", "unknown flag 'sometimes'"),
])
def test_bad_param_specs(text, message):
    with pytest.raises(NotationError, match=message):
        parse_param(text)


@pytest.mark.parametrize("text, expected", [
    ("int = 1", (AttrType.INT, False, 1, None)),
    ("ints", (AttrType.INTS, False, None, None)),
    ("string required", (AttrType.STRING, True, None, None)),
    ("float = 1e-05", (AttrType.FLOAT, False, 1e-05, None)),
    ("float = -inf", (AttrType.FLOAT, False, float("-inf"), None)),
    ('string = "a b"', (AttrType.STRING, False, "a b", None)),
    ("ints = [1, -1]", (AttrType.INTS, False, [1, -1], None)),
    ("int >= 0 <= 3 = 1", (AttrType.INT, False, 1, ValueConstraint(minimum=0, maximum=3))),
    ("float > 0 = 0.5", (AttrType.FLOAT, False, 0.5, ValueConstraint(minimum=0, exclusive_minimum=True))),
    ("string in {NOTSET, VALID} = VALID", (AttrType.STRING, False, "VALID", ValueConstraint(allowed=("NOTSET", "VALID")))),
    ("ints len == 2", (AttrType.INTS, False, None, ValueConstraint(min_length=2, max_length=2))),
    ("int in rank(X) = 0", (AttrType.INT, False, 0, ValueConstraint(axis_of="X"))),
    ("int in rank(input) + 1 = 1", (AttrType.INT, False, 1, ValueConstraint(axis_of="input", axis_extra=1))),
    ("ints > 0 len == rank(X) - 2", (AttrType.INTS, False, None,
                                     ValueConstraint(minimum=0, exclusive_minimum=True, length_of="X", length_offset=-2))),
    ("ints len == 2 * rank(X)-4", (AttrType.INTS, False, None,
                                   ValueConstraint(length_of="X", length_scale=2, length_offset=-4))),
])
def test_attribute_specs(text, expected):
    spec = parse_attribute(text)
    assert (spec.type, spec.required, spec.default, spec.constraint) == expected


@pytest.mark.parametrize("text, message, offset", [
    ("integer = 1", "unknown attribute type 'integer'", 0),
    ("int = ", "unexpected end of spec", 6),
    ("int maybe", "unexpected 'maybe'", 4),
    ("int required = 1", "both required and defaulted", 0),
    ("int in {1 2}", "expected ',' or '}', found '2'", 10),
    ("int len ~ 2", "unexpected character '~'", 8),
    ("int in rank(1)", "expected an input name, found '1'", 12),
    ("ints len == 2 * rank{X}", "expected '\\(', found '{'", 20),
    ("ints len == rank(X) + x", "expected a whole number", 22),
])
def test_bad_attribute_specs(text, message, offset):
    with pytest.raises(NotationError, match=message) as caught:
        parse_attribute(text)
    assert caught.value.offset == offset


def test_attribute_spec_round_trip():
    attribute = Attribute("mode", AttrType.STRING, default="exact",
                          constraint=ValueConstraint(allowed=("fast", "exact")))
    assert attribute_spec(attribute) == 'string in {"fast", "exact"} = "exact"'
    spec = parse_attribute(attribute_spec(attribute))
    assert (spec.default, spec.constraint) == ("exact", attribute.constraint)


@pytest.mark.parametrize("value, text", [(1e-05, "1e-05"), (9.999999747378752e-06, "1e-05"), (0.5, "0.5"),
                                         (1.0, "1.0"), (3.4028234663852886e38, "3.4028235e+38"), (0.2, "0.2")])
def test_shortest_float32_text(value, text):
    assert shortest_float(value) == text


def test_value_constraint_messages():
    constraint = ValueConstraint(minimum=1, min_length=2)
    assert constraint.violations([0]) == ["needs at least 2 values, got 1", "0 must be >= 1"]
    assert constraint.violations([1, 2]) == []
    assert constraint.describe() == ">= 1 len >= 2"
    assert DifferentiationCategory.Unknown.name == "Unknown" and FormalParameterOption.Variadic.value == 2


@pytest.mark.parametrize("text", ["int in rank(X) + 1", "ints > 0 len == 2 * rank(X) - 4", "int in {0, 1}",
                                  "ints len == 2", "ints >= 1 len >= 1 len <= 3", "ints in rank(data) len == rank(data)"])
def test_a_constraint_reads_back_from_its_description(text):
    constraint = parse_attribute(text).constraint
    assert constraint is not None
    kind = text.split()[0]
    assert parse_attribute(f"{kind} {constraint.describe()}").constraint == constraint
