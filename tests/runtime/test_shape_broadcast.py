"""Tests for opspec.runtime.shape.broadcast: multidirectional and unidirectional broadcasting."""
import random

import numpy as np
import pytest

from opspec.runtime.shape import ShapeError, Sym, broadcast_shapes, parse_dim, unidirectional_broadcast

N, M = Sym("N"), Sym("M")


# ----------------------------------------------------------------------------- numpy agreement

@pytest.mark.parametrize("shapes", [
    [(256, 256, 3), (3,)],
    [(8, 1, 6, 1), (7, 1, 5)],
    [(5, 4), (1,)],
    [(5, 4), (4,)],
    [(15, 3, 5), (15, 1, 5)],
    [(15, 3, 5), (3, 5)],
    [(15, 3, 5), (3, 1)],
    [(), (2, 3)],
    [(0,), (1,)],
    [(1, 0), (5, 1)],
    [(2, 1), (1, 3), (4, 1, 1)],
    [(3,)],
    [],
])
def test_numpy_documented_examples(shapes):
    assert broadcast_shapes(*shapes) == np.broadcast_shapes(*shapes)


@pytest.mark.parametrize("shapes", [[(3,), (4,)], [(2, 1), (8, 4, 3)], [(2,), (1,), (3,)]])
def test_numpy_documented_failures(shapes):
    with pytest.raises(ValueError):
        np.broadcast_shapes(*shapes)
    with pytest.raises(ShapeError, match="cannot broadcast shapes"):
        broadcast_shapes(*shapes)


def test_random_known_shapes_match_numpy():
    rng = random.Random(2024)
    for _ in range(3000):
        count = rng.randint(1, 4)
        shapes = [tuple(rng.choice([0, 1, 1, 2, 3]) for _ in range(rng.randint(0, 4))) for _ in range(count)]
        try:
            expected = np.broadcast_shapes(*shapes)
        except ValueError:
            with pytest.raises(ShapeError):
                broadcast_shapes(*shapes)
        else:
            assert broadcast_shapes(*shapes) == expected, shapes


# ----------------------------------------------------------------------------- unknown and symbolic

@pytest.mark.parametrize("a, b, expected", [
    ((None,), (1,), (None,)),
    ((None,), (4,), (4,)),
    ((None,), (0,), (0,)),
    ((None,), (None,), (None,)),
    ((N,), (1,), (N,)),
    ((1,), (N,), (N,)),
    ((N,), (N,), (N,)),
    ((N,), (M,), (None,)),
    ((N,), (5,), (5,)),
    ((N,), (None,), (None,)),
    ((2 * N, None), (1,), (2 * N, None)),
    ((N, 1, 3), (7, None), (N, 7, 3)),
])
def test_unknown_and_symbolic_dims(a, b, expected):
    assert broadcast_shapes(a, b) == expected
    assert broadcast_shapes(b, a) == expected


def test_unknown_rank_gives_unknown_rank():
    assert broadcast_shapes(None, (2, 3)) is None
    assert broadcast_shapes((2, 3), None) is None
    assert broadcast_shapes((1,), (2,), None) is None


def test_broadcast_error_messages_quote_all_operands():
    with pytest.raises(ShapeError, match=r"^cannot broadcast shapes \(3,\) and \(4,\)"):
        broadcast_shapes((3,), (4,))
    with pytest.raises(ShapeError, match=r"cannot broadcast shapes \(2, 3\) and \(4,\): dims 3 and 4 at axis -1 differ"):
        broadcast_shapes((2, 3), (4,))
    with pytest.raises(ShapeError, match=r"cannot broadcast shapes \(4,\) and \(2, 3\): dims 4 and 3"):
        broadcast_shapes((4,), (2, 3))
    with pytest.raises(ShapeError, match=r"cannot broadcast shapes \(2,\), \(N,\) and \(3,\)"):
        broadcast_shapes((2,), (N,), (3,))


def test_broadcast_is_commutative_and_associative_for_known_shapes():
    rng = random.Random(8)
    dims = [1, 2, None, N]
    for _ in range(1000):
        a, b, c = (tuple(rng.choice(dims) for _ in range(rng.randint(0, 3))) for _ in range(3))
        assert broadcast_shapes(a, b) == broadcast_shapes(b, a)
        assert broadcast_shapes(broadcast_shapes(a, b), c) == broadcast_shapes(a, broadcast_shapes(b, c))


# ----------------------------------------------------------------------------- unidirectional

def test_unidirectional_broadcast():
    t = (2, N, None, 4)
    assert unidirectional_broadcast(t, t) is t
    assert unidirectional_broadcast(t, ()) is t
    assert unidirectional_broadcast(t, (1, 1)) is t
    assert unidirectional_broadcast(t, (None, 4)) is t
    assert unidirectional_broadcast(t, (M, 4)) is t
    assert unidirectional_broadcast(t, (5, 4)) == (2, N, 5, 4)
    assert unidirectional_broadcast(t, (3, 1, 4)) == (2, 3, None, 4)
    assert unidirectional_broadcast(t, (2, 1, 1, 1)) is t
    assert unidirectional_broadcast((None,), (0,)) == (0,)
    assert unidirectional_broadcast(t, None) is t
    assert unidirectional_broadcast(None, (2,)) is None


def test_unidirectional_broadcast_errors():
    with pytest.raises(ShapeError, match=r"cannot broadcast shape \(4,\) to \(3,\): dims 4 and 3 at axis -1 differ"):
        unidirectional_broadcast((3,), (4,))
    with pytest.raises(ShapeError, match=r"cannot broadcast shape \(1, 3\) to \(3,\): rank 2 exceeds 1"):
        unidirectional_broadcast((3,), (1, 3))
    with pytest.raises(ShapeError):
        unidirectional_broadcast((1, 3), (2, 3))  # a 1 in the target is not stretched


def test_unidirectional_agrees_with_numpy_broadcast_to():
    rng = random.Random(17)
    for _ in range(2000):
        target = tuple(rng.choice([0, 1, 2, 3]) for _ in range(rng.randint(0, 4)))
        source = tuple(rng.choice([0, 1, 2, 3]) for _ in range(rng.randint(0, 4)))
        try:
            np.broadcast_to(np.empty(source), target)
        except ValueError:
            with pytest.raises(ShapeError):
                unidirectional_broadcast(target, source)
        else:
            assert unidirectional_broadcast(target, source) == target


def test_a_dim_broadcasts_with_its_clamp_to_itself():
    # GPT-2/ViT: x (B, T, D) + positions[:, :T] of shape (1, min(197, T), D).
    T, S = Sym("T"), Sym("S")
    assert broadcast_shapes((Sym("B"), T, 8), (1, Sym.min(T, 197), 8)) == (Sym("B"), T, 8)
    assert broadcast_shapes((Sym.min(T, 2),), (T,)) == (T,)
    assert broadcast_shapes((T,), (Sym.min(T, 1),)) == (T,)


@pytest.mark.parametrize("other", ["T-1", "min(S,T)", "T//2", "min(2,S+1,T)", "ceil(T/2)"])
def test_a_dim_and_what_may_be_zero_or_one_apart_stay_unknown(other):
    T = Sym("T")
    assert broadcast_shapes((T,), (parse_dim(other),)) == (None,)
    assert broadcast_shapes((parse_dim(other),), (T,)) == (None,)
