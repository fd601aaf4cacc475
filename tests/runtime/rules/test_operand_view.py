"""The view a rule hands to a standard rule (``_operand_view``) and the declared defaults it starts from."""
from __future__ import annotations

import pytest

from opspec.runtime.contract import rule_spec
from opspec.runtime.contract.declare import DeclarationError
from opspec.runtime.rules import nn
from opspec.runtime.rules._operand_view import OperandView, rule_defaults
from opspec.runtime.shape import SymbolTable
from opspec.runtime.testing import run_rule, t


def test_rule_spec_reads_a_declaration():
    spec = rule_spec(nn.conv)
    assert spec.name == "conv" and spec.defaults()["x"] == "X"
    with pytest.raises(DeclarationError, match="not a declared rule"):
        rule_spec(test_rule_spec_reads_a_declaration)


def test_rule_defaults_with_overrides():
    args = rule_defaults(nn.conv, x="x", w=None)
    assert args["x"] == "x" and args["w"] == "W" and args["bias"] == "B"


def test_a_view_shows_chosen_inputs_and_shares_the_node_symbols():
    outer = run_rule("Conv", 11, [t(1, 3, 8, 8), t(4, 3, 3, 3)], symbols=SymbolTable())
    view = OperandView(outer, (1, 0), [t(4, 3, 3, 3), t(1, 3, 8, 8)], rule_defaults(nn.conv))
    assert view.input_shape(0) == (4, 3, 3, 3) and view.input_data(0) is None
    assert view.output_type(0) == outer.output_type(0)
    fresh = view.fresh_dim()
    assert fresh is not None and fresh != outer.fresh_dim()
