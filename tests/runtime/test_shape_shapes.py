"""Tests for opspec.runtime.shape.shapes: operations on whole shapes."""
import itertools
import random

import pytest

from opspec.runtime.shape import (
    ShapeError, Sym, concatenate, merge_shapes, num_elements, rank, relax_shapes, replace_dim,
    subshape, with_rank, with_rank_at_least, with_rank_at_most,
)

N, M = Sym("N"), Sym("M")


# ----------------------------------------------------------------------------- merge / relax

def test_tensorflow_examples():
    # From TensorFlow's shape_inference.h documentation.
    assert merge_shapes((2, None), (None, 2)) == (2, 2)
    assert relax_shapes((2, 2), (3, 2)) == (None, 2)
    assert relax_shapes((2, 2), (2, 2, 2)) is None


def test_merge_shapes():
    s = (2, N, None)
    assert merge_shapes(s, s) is s
    assert merge_shapes(None, s) is s
    assert merge_shapes(s, None) is s
    assert merge_shapes(None, None) is None
    assert merge_shapes((), ()) == ()
    assert merge_shapes((N, None, 3), (4, M, None)) == (4, M, 3)
    assert merge_shapes((N,), (M,)) == (N,)


def test_merge_shapes_errors_quote_the_operands():
    with pytest.raises(ShapeError, match=r"cannot merge shapes \(2, 3\) and \(2,\): ranks 2 and 1 differ"):
        merge_shapes((2, 3), (2,))
    with pytest.raises(ShapeError, match=r"cannot merge shapes \(N, 3\) and \(\?, 4\): dims 3 and 4 differ at axis 1"):
        merge_shapes((N, 3), (None, 4))


def test_relax_shapes():
    assert relax_shapes(None, (2,)) is None
    assert relax_shapes((2,), None) is None
    assert relax_shapes((N, 2, None), (N, 2, 5)) == (N, 2, None)
    assert relax_shapes((N,), (M,)) == (None,)
    s = (1, 2)
    assert relax_shapes(s, (1, 2)) is s


def test_merge_and_relax_are_commutative_on_known_shapes():
    rng = random.Random(11)
    for _ in range(300):
        r = rng.randint(0, 3)
        a = tuple(rng.choice([1, 2, None]) for _ in range(r))
        b = tuple(rng.choice([1, 2, None]) for _ in range(r))
        assert relax_shapes(a, b) == relax_shapes(b, a)
        try:
            ab = merge_shapes(a, b)
        except ShapeError:
            with pytest.raises(ShapeError):
                merge_shapes(b, a)
        else:
            assert ab == merge_shapes(b, a)
            # merged shape refines both operands; relaxed shape generalises both
            assert merge_shapes(ab, a) == ab and merge_shapes(ab, b) == ab
            assert merge_shapes(relax_shapes(a, b), a) == a


# ----------------------------------------------------------------------------- rank checks

def test_rank():
    assert rank(None) is None
    assert rank(()) == 0
    assert rank((N, None, 3)) == 3


def test_with_rank():
    assert with_rank(None, 3) == (None, None, None)
    assert with_rank(None, 0) == ()
    s = (2, N)
    assert with_rank(s, 2) is s
    with pytest.raises(ShapeError, match=r"shape \(2, N\) must have rank 3"):
        with_rank(s, 3)


def test_with_rank_at_least_and_at_most():
    s = (2, N)
    assert with_rank_at_least(None, 4) is None
    assert with_rank_at_most(None, 0) is None
    assert with_rank_at_least(s, 2) is s and with_rank_at_least(s, 0) is s
    assert with_rank_at_most(s, 2) is s and with_rank_at_most(s, 5) is s
    with pytest.raises(ShapeError, match=r"shape \(2, N\) must have rank at least 3"):
        with_rank_at_least(s, 3)
    with pytest.raises(ShapeError, match=r"shape \(2, N\) must have rank at most 1"):
        with_rank_at_most(s, 1)


# ----------------------------------------------------------------------------- slicing and editing

def test_subshape_follows_python_slicing():
    s = (1, N, None, 4, 5)
    for start, end, stride in itertools.product([None, 0, 1, -2, 7, -9], [None, 0, 3, -1, 9], [1, 2, -1]):
        assert subshape(s, start, end, stride) == s[start:end:stride]
    assert subshape(s, 1) == (N, None, 4, 5)
    assert subshape(s, 1, 3) == (N, None)
    assert subshape(s, -2) == (4, 5)
    assert subshape(None, 1) is None
    with pytest.raises(ShapeError, match="stride 0"):
        subshape(s, 0, None, 0)


def test_concatenate():
    assert concatenate((1, N), (None,)) == (1, N, None)
    assert concatenate((), ()) == ()
    assert concatenate(None, (1,)) is None
    assert concatenate((1,), None) is None


def test_replace_dim():
    s = (1, 2, 3)
    assert replace_dim(s, 0, N) == (N, 2, 3)
    assert replace_dim(s, -1, None) == (1, 2, None)
    assert replace_dim(s, 2, 7) == (1, 2, 7)
    assert replace_dim(None, 5, 1) is None
    with pytest.raises(ShapeError, match=r"axis 3 is out of range for shape \(1, 2, 3\)"):
        replace_dim(s, 3, 1)
    with pytest.raises(ShapeError, match=r"axis -4 is out of range"):
        replace_dim(s, -4, 1)
    with pytest.raises(ShapeError):
        replace_dim((), 0, 1)


# ----------------------------------------------------------------------------- element count

def test_num_elements():
    assert num_elements(()) == 1
    assert num_elements((2, 3, 4)) == 24
    assert num_elements(None) is None
    assert num_elements((2, None)) is None
    assert num_elements((None, 0)) == 0
    assert num_elements((N, 0)) == 0
    assert num_elements((2, N, 3)) == 6 * N
    assert str(num_elements((Sym("batch"), Sym("seq"), 1))) == "batch*seq"
    assert num_elements((N, None, M)) is None
    assert num_elements((N, N)) == N * N
