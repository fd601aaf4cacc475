"""Data elements read as dims (``element``, ``dims_of``): ints, symbols and None as they are,
bools and whole floats as ints, anything else unknown."""
from __future__ import annotations

from opspec.runtime.contract import dims_of, element
from opspec.runtime.shape import Sym

N = Sym("N")


def test_dims_come_back_as_they_are():
    values = (2, N, None, -1)
    assert dims_of(values) is values
    assert dims_of([2, N]) == (2, N)


def test_other_elements_are_read_one_by_one():
    values = (True, 3.0, 2.5, "x", N, 4)
    assert dims_of(values) == tuple(element(v) for v in values) == (1, 3, None, None, N, 4)
