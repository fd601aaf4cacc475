"""Rules address inputs and outputs by their formal names as well as by position."""
from __future__ import annotations

import pytest

from opspec.runtime.contract import InferenceContext
from opspec.runtime.contract.positions import FormalPositions, UnknownOperand
from opspec.runtime.op_set import installed_op_set
from opspec.runtime.schema import FormalParameter, FormalParameterOption
from opspec.runtime.testing import make_context, t


def _schema(op: str, version: int, domain: str = ""):
    return installed_op_set().registry.get_schema(op, version, domain)


def test_a_name_reads_the_input_at_its_position():
    ctx = make_context(_schema("LayerNormalization", 17), [t(2, 3), t(3), t(3)])
    assert ctx.input_shape("Scale") == ctx.input_shape(1) == (3,)
    assert ctx.has_input("B") and ctx.input_name("B") == "B"
    assert ctx.input_with_rank("X", 2) == (2, 3)


def test_an_omitted_optional_input_is_absent_by_name():
    ctx = make_context(_schema("LayerNormalization", 17), [t(2, 3), t(3)])
    assert not ctx.has_input("B") and ctx.input_type("B") is None and ctx.input_shape("B") is None
    ctx = make_context(_schema("LayerNormalization", 17), [t(2, 3), t(3), None], names=["x", "s", ""])
    assert not ctx.has_input("B")


def test_outputs_are_written_by_name():
    ctx = make_context(_schema("LayerNormalization", 17), [t(2, 3), t(3)], output_count=3)
    ctx.set_output_shape("Mean", (2, 1))
    assert ctx.output_type(1) == ctx.output_type("Mean") and ctx.output_type(1).shape == (2, 1)
    assert ctx.output_type("InvStdDev") is None


def test_a_name_after_a_variadic_follows_the_node():
    base = _schema("Concat", 13)
    variadic, = base.inputs
    tail = FormalParameter("tail", "T", variadic.types)
    schema = base._replace(inputs=(variadic, tail))
    ctx = InferenceContext(schema, [t(1), t(2), t(3), t(4)], {})
    assert ctx.input_shape("inputs") == (1,) and ctx.input_shape("tail") == (4,)
    assert ctx.input_name("tail") == "tail"
    assert variadic.option is FormalParameterOption.Variadic


def test_an_unknown_name_is_a_rule_error_that_names_the_op():
    ctx = make_context(_schema("LayerNormalization", 17), [t(2, 3), t(3)])
    with pytest.raises(UnknownOperand, match="LayerNormalization 17 has no input 'scale'"):
        ctx.input_shape("scale")
    with pytest.raises(UnknownOperand, match="has no output 'mean'"):
        ctx.set_output_shape("mean", (1,))


def test_the_table_is_asked_for_once_and_only_when_a_name_is_used():
    schema = _schema("LayerNormalization", 17)
    table, asked = FormalPositions(schema), []

    def positions() -> FormalPositions:
        asked.append(1)
        return table

    ctx = InferenceContext(schema, [t(2, 3), t(3)], {}, positions=positions)
    assert ctx.input_shape(1) == (3,) and not asked
    assert ctx.input_shape("Scale") == (3,) and ctx.has_input("X") and ctx.output_type("Y") is None
    assert asked == [1]
    assert dict(table.inputs) == {"X": 0, "Scale": 1, "B": 2}
