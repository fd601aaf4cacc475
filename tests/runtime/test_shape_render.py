"""Tests for opspec.runtime.shape.render: text for dims and shapes."""
from opspec.runtime.shape import Sym, format_dim, format_shape

N = Sym("N")


def test_format_dim():
    assert format_dim(None) == "?"
    assert format_dim(0) == "0"
    assert format_dim(7) == "7"
    assert format_dim(N) == "N"
    assert format_dim(2 * N + 1) == "2*N+1"


def test_format_shape():
    assert format_shape(None) == "<unknown rank>"
    assert format_shape(()) == "()"
    assert format_shape((3,)) == "(3,)"
    assert format_shape((None,)) == "(?,)"
    assert format_shape((2, N, None)) == "(2, N, ?)"
    assert format_shape((Sym("batch size"), N // 2)) == "(batch size, N//2)"
