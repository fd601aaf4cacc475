"""Tests for the BitCast rule: same shape, the bits read as another type of the same width."""
from __future__ import annotations

import pytest

from opspec.runtime.contract import InferenceError
from opspec.runtime.contract.elements import ELEMENT_BITS, ELEMENT_NAMES, STRING
from opspec.runtime.shape import Sym
from opspec.runtime.testing import FLOAT, INT32, INT64, run_rule, t

N = Sym("N")
UINT8, INT8, BOOL, FLOAT16, BFLOAT16, DOUBLE, COMPLEX64, INT4, UINT4 = 2, 3, 9, 10, 16, 11, 14, 22, 21


@pytest.mark.parametrize("source,target", [
    (FLOAT, INT32), (INT32, FLOAT), (DOUBLE, INT64), (BOOL, UINT8), (INT8, UINT8), (FLOAT16, BFLOAT16),
    (COMPLEX64, DOUBLE), (INT4, UINT4),
])
def test_bit_cast_keeps_the_shape_and_takes_the_target_type(source, target):
    assert run_rule("BitCast", 26, [t(N, 3, elem=source)], {"to": target}).output_type(0) == t(N, 3, elem=target)
    assert run_rule("BitCast", 26, [t(elem=source)], {"to": target}).output_type(0) == t(elem=target)


def test_bit_cast_of_an_unknown_input_still_knows_the_type():
    assert run_rule("BitCast", 26, [None], {"to": FLOAT}, names=["x"]).output_type(0) == t(None)


@pytest.mark.parametrize("source,target,message", [
    (FLOAT, INT64, "float has 32 bits and int64 has 64"),
    (UINT8, FLOAT16, "uint8 has 8 bits"),
    (FLOAT, STRING, "no fixed width"),
])
def test_bit_cast_rejects_other_widths(source, target, message):
    with pytest.raises(InferenceError, match=message):
        run_rule("BitCast", 26, [t(4, elem=source)], {"to": target})


def test_every_element_type_but_string_has_a_width():
    assert set(ELEMENT_NAMES) - set(ELEMENT_BITS) == {STRING}
