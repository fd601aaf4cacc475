"""Change classes of version steps, on variations of one real schema."""
from __future__ import annotations

import pytest

import opspec
from opspec.codegen.change_class import BREAKING, COMPATIBLE, NARROWING, SEMANTIC
from opspec.codegen.history import change_class
from opspec.runtime.schema import Attribute, AttrType, DifferentiationCategory, FormalParameterOption

BASE = opspec.get_schema("Conv", 22)
X, W, B = BASE.inputs
FEWER_TYPES = frozenset({"tensor(float)"})


def _attributes(**changes):
    attributes = dict(BASE.attributes)
    for name, attribute in changes.items():
        if attribute is None:
            attributes.pop(name)
        else:
            attributes[name] = attribute
    return attributes


def _fewer_types():
    inputs = tuple(p._replace(types=FEWER_TYPES) for p in BASE.inputs)
    outputs = tuple(p._replace(types=FEWER_TYPES) for p in BASE.outputs)
    constraint = BASE.type_constraints[0]._replace(allowed_type_strs=("tensor(float)",))
    return BASE._replace(inputs=inputs, outputs=outputs, type_constraints=(constraint,))


STEPS = {
    "a new optional input at the end": (BASE._replace(inputs=(X, W)), BASE, COMPATIBLE),
    "a new required input": (BASE._replace(inputs=(X, W)), BASE._replace(inputs=(X, W, B._replace(
        option=FormalParameterOption.Single))), BREAKING),
    "an input removed": (BASE, BASE._replace(inputs=(X, W)), BREAKING),
    "inputs reordered": (BASE, BASE._replace(inputs=(W, X, B)), BREAKING),
    "an optional input made required": (BASE, BASE._replace(inputs=(X, W, B._replace(
        option=FormalParameterOption.Single))), BREAKING),
    "a required input made optional": (BASE._replace(inputs=(X, W, B._replace(
        option=FormalParameterOption.Single))), BASE, COMPATIBLE),
    "more types": (_fewer_types(), BASE, COMPATIBLE),
    "types removed": (BASE, _fewer_types(), NARROWING),
    "a new attribute with a default": (BASE._replace(attributes=_attributes(group=None)), BASE, COMPATIBLE),
    "a new required attribute": (BASE, BASE._replace(attributes=_attributes(
        mode=Attribute("mode", AttrType.STRING, required=True))), BREAKING),
    "a default changed": (BASE, BASE._replace(attributes=_attributes(
        group=BASE.attributes["group"]._replace(default=2))), BREAKING),
    "an attribute removed": (BASE, BASE._replace(attributes=_attributes(group=None)), NARROWING),
    "an attribute becomes an input": (BASE, BASE._replace(
        attributes=_attributes(group=None), inputs=(X, W, B, B._replace(name="group"))), BREAKING),
    "only differentiability": (BASE._replace(inputs=(X._replace(
        differentiation_category=DifferentiationCategory.Unknown), W, B)), BASE, SEMANTIC),
    "deprecated": (BASE, BASE._replace(deprecated=True), BREAKING),
}


@pytest.mark.parametrize("step", sorted(STEPS))
def test_each_kind_of_change_has_its_class(step):
    before, after, expected = STEPS[step]
    assert change_class(before, after) == expected


def test_the_most_severe_change_decides():
    after = _fewer_types()._replace(inputs=(X, W))  # types removed and an input removed
    assert change_class(BASE, after) == BREAKING
