"""Tests for opspec.runtime.shape.dims: unification and arithmetic on single dims."""
import itertools
import random
from typing import Callable

import pytest

from opspec.runtime.shape import (
    parse_dim,
    ShapeError, Sym, add_dim, ceil_div_dim, div_dim, max_dim, merge_dim, min_dim, mul_dim,
    relax_dim, sub_dim,
)

N, M = Sym("N"), Sym("M")


# ----------------------------------------------------------------------------- merge / relax

@pytest.mark.parametrize("a, b, expected", [
    (2, 2, 2),
    (None, 3, 3),
    (3, None, 3),
    (None, None, None),
    (N, None, N),
    (None, N, N),
    (N, N, N),
    (N, 4, 4),
    (4, N, 4),
    (N, M, N),
    (M, N, M),
    (2 * N, parse_dim("2*N"), 2 * N),
])
def test_merge_dim(a, b, expected):
    assert merge_dim(a, b) == expected


def test_merge_dim_known_mismatch():
    with pytest.raises(ShapeError, match="cannot merge dims 2 and 3"):
        merge_dim(2, 3)


def test_shape_error_is_a_value_error():
    with pytest.raises(ValueError):
        merge_dim(0, 1)


@pytest.mark.parametrize("a, b, expected", [
    (2, 2, 2),
    (2, 3, None),
    (None, 3, None),
    (3, None, None),
    (None, None, None),
    (N, N, N),
    (N, M, None),
    (N, 3, None),
    (N + 1, 1 + N, N + 1),
])
def test_relax_dim(a, b, expected):
    assert relax_dim(a, b) == expected


def test_merge_is_commutative_on_known_dims():
    for a, b in itertools.product(range(4), repeat=2):
        if a == b:
            assert merge_dim(a, b) == merge_dim(b, a) == a
        else:
            with pytest.raises(ShapeError):
                merge_dim(a, b)
            with pytest.raises(ShapeError):
                merge_dim(b, a)
    for dim in [0, 5, None, N]:
        assert merge_dim(dim, None) == merge_dim(None, dim) == dim


def test_relax_is_commutative_and_merge_refines_relax():
    dims = [0, 1, 2, None, N, M, N + 1]
    for a, b in itertools.product(dims, repeat=2):
        assert relax_dim(a, b) == relax_dim(b, a)
        r = relax_dim(a, b)
        assert merge_dim(r, a) == a  # a refines the relaxed dim


# ----------------------------------------------------------------------------- arithmetic

def test_add_dim():
    assert add_dim(2, 3) == 5
    assert add_dim(None, 3) is None
    assert add_dim(3, None) is None
    assert add_dim(0, None) is None
    assert add_dim(N, 0) is N
    assert add_dim(N, 1) == parse_dim("N+1")
    assert add_dim(1, N) == N + 1
    assert add_dim(N, N) == 2 * N
    assert str(add_dim(N, M)) == "M+N"


def test_sub_dim():
    assert sub_dim(5, 3) == 2
    assert sub_dim(3, 3) == 0
    assert sub_dim(None, 3) is None
    assert sub_dim(3, None) is None
    assert sub_dim(None, 0) is None
    assert sub_dim(N, 0) is N
    assert sub_dim(N, N) == 0
    assert str(sub_dim(N, 1)) == "N-1"
    assert sub_dim(N + 2, N) == 2
    with pytest.raises(ShapeError, match="cannot subtract dim 5 from dim 3"):
        sub_dim(3, 5)
    with pytest.raises(ShapeError, match=r"cannot subtract dim N\+1 from dim N"):
        sub_dim(N, N + 1)


def test_mul_dim():
    assert mul_dim(2, 3) == 6
    assert mul_dim(None, 3) is None
    assert mul_dim(3, None) is None
    assert mul_dim(None, 0) == 0
    assert mul_dim(0, None) == 0
    assert mul_dim(0, N) == 0
    assert mul_dim(None, 1) is None
    assert mul_dim(1, N) is N
    assert mul_dim(N, 1) is N
    assert mul_dim(N, 2) == parse_dim("2*N")
    assert str(mul_dim(N, 2)) == "2*N"
    assert str(mul_dim(Sym("batch"), Sym("seq"))) == "batch*seq"


def test_div_dim_known():
    assert div_dim(6, 3) == 2
    assert div_dim(7, 2, evenly=False) == 3
    with pytest.raises(ShapeError, match="cannot evenly divide dim 7 by 2"):
        div_dim(7, 2)
    with pytest.raises(ShapeError, match="cannot divide dim 7 by 0"):
        div_dim(7, 0)
    with pytest.raises(ShapeError, match="cannot divide dim 7 by 0"):
        div_dim(7, 0, evenly=False)
    with pytest.raises(ShapeError, match=r"cannot divide dim \? by 0"):
        div_dim(None, 0)


def test_div_dim_unknown_and_symbolic():
    assert div_dim(None, 2) is None
    assert div_dim(6, None) is None
    assert div_dim(None, 1) is None
    assert div_dim(0, None) == 0
    assert div_dim(N, 1) is N
    assert div_dim(2 * N, 2) == N
    assert str(div_dim(N, 2)) == "N//2"
    assert str(div_dim(N + 1, 2, evenly=False)) == "ceil(N/2)"
    assert div_dim(N * M, M) == N
    assert div_dim(N, M) is None
    assert div_dim(6, N) is None
    assert div_dim(0, N) == 0
    with pytest.raises(ShapeError, match=r"cannot evenly divide dim 2\*N\+1 by 2"):
        div_dim(2 * N + 1, 2)
    assert div_dim(2 * N + 1, 2, evenly=False) == N


def test_ceil_div_dim():
    assert ceil_div_dim(7, 2) == 4
    assert ceil_div_dim(6, 2) == 3
    assert ceil_div_dim(0, 5) == 0
    assert ceil_div_dim(None, 2) is None
    assert ceil_div_dim(5, None) is None
    assert ceil_div_dim(N, 1) is N
    assert str(ceil_div_dim(N, 2)) == "ceil(N/2)"
    assert ceil_div_dim(2 * N, 2) == N
    assert ceil_div_dim(N * M, N) == M
    assert ceil_div_dim(3, N) is None
    with pytest.raises(ShapeError, match="cannot divide dim 5 by 0"):
        ceil_div_dim(5, 0)
    with pytest.raises(ShapeError, match="cannot divide dim N by 0"):
        ceil_div_dim(N, 0)


def test_min_max_dim():
    assert min_dim(2, 3) == 2 and max_dim(2, 3) == 3
    assert min_dim(None, 0) == 0 and min_dim(N, 0) == 0
    assert min_dim(None, 3) is None and max_dim(None, 3) is None
    assert max_dim(None, 0) is None and max_dim(0, N) is N
    assert min_dim(N, N) is N and max_dim(N, N) is N
    assert str(min_dim(N, M)) == "min(M,N)"
    assert str(max_dim(N, 4)) == "max(4,N)"
    assert min_dim(N, N + 1) is N and max_dim(N, N + 1) == N + 1


def test_known_arithmetic_matches_python():
    rng = random.Random(3)
    for _ in range(1000):
        a, b = rng.randint(0, 50), rng.randint(1, 12)
        assert add_dim(a, b) == a + b
        assert mul_dim(a, b) == a * b
        assert div_dim(a, b, evenly=False) == a // b
        assert ceil_div_dim(a, b) == -(-a // b)
        assert min_dim(a, b) == min(a, b) and max_dim(a, b) == max(a, b)
        if a >= b:
            assert sub_dim(a, b) == a - b


def test_symbolic_arithmetic_agrees_with_evaluation():
    rng = random.Random(5)
    pool = [N, M, 2 * N, N + 1, N // 2, 0, 1, 3]
    references: dict[object, Callable[[int, int], int]] = {
        add_dim: lambda x, y: x + y, mul_dim: lambda x, y: x * y, min_dim: min, max_dim: max}
    ops = [add_dim, mul_dim, min_dim, max_dim]
    for _ in range(500):
        a, b, op = rng.choice(pool), rng.choice(pool), rng.choice(ops)
        env = {"N": rng.randint(0, 30), "M": rng.randint(0, 30)}
        ev = lambda d: d if type(d) is int else d.evaluate(env)  # noqa: E731
        assert ev(op(a, b)) == references[op](ev(a), ev(b))
