"""Data elements read as dims (``element``, ``dims_of``): ints, symbols and None as they are,
bools and whole floats as ints, anything else unknown; an ints attribute read as plain ints."""
from __future__ import annotations

import opspec
from opspec.runtime.contract import TensorType, dims_of, element
from opspec.runtime.contract.elements import ElementType
from opspec.runtime.shape import Sym
from opspec.runtime.testing import make_context

N = Sym("N")


def test_dims_come_back_as_they_are():
    values = (2, N, None, -1)
    assert dims_of(values) is values
    assert dims_of([2, N]) == (2, N)


def test_other_elements_are_read_one_by_one():
    values = (True, 3.0, 2.5, "x", N, 4)
    assert dims_of(values) == tuple(element(v) for v in values) == (1, 3, None, None, N, 4)


def test_an_ints_attribute_reads_as_a_tuple_of_plain_ints():
    schema = opspec.get_schema("Transpose", 13)
    plain = make_context(schema, [TensorType(1, (2, 3))], {"perm": [1, 0]})
    assert plain.ints_attr("perm") == (1, 0)
    members = make_context(schema, [TensorType(1, (2, 3))], {"perm": [ElementType(1), 0]})
    read = members.ints_attr("perm")
    assert read == (1, 0) and all(type(axis) is int for axis in read)
