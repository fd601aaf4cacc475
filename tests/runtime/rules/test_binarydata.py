"""Tests for the binary element functions of data propagation on symbolic counts."""
import pytest

from opspec.runtime.contract import Data
from opspec.runtime.rules._binarydata import binary_data
from opspec.runtime.shape import Sym

INT64 = 7
B, S = Sym("B"), Sym("S")


def combine(compute, a, b):
    result = binary_data([Data((len(a),), tuple(a)), Data((len(b),), tuple(b))], compute, INT64)
    assert result is not None
    return result.values


def test_a_count_never_equals_a_negative_number():
    # torch exports expand(B, -1, -1) as Where(Equal(shape, -1), 1, shape).
    assert combine("equal", (B, -1, -1), (-1, -1, -1)) == (0, 1, 1)
    assert combine("equal", (-2, 2 * B + S, Sym.min(B, 4)), (B, -1, -1)) == (0, 0, 0)
    assert combine("less", (B, -1, B // 2), (-1, B, -3)) == (0, 1, 0)
    assert combine("greater", (B, -1), (-1, S + 1)) == (1, 0)


@pytest.mark.parametrize("value", [B - 1, -B, B - S, S - 2 * B])
def test_a_difference_may_be_negative(value):
    # B-1 is -1 at B = 0; -B and B-S are negative for some sizes.
    assert combine("equal", (value,), (-1,)) == (None,)
    assert combine("less", (value,), (-1,)) == (None,)
