"""Tests for the sequence and optional rules."""
from __future__ import annotations

import pytest

from opspec.runtime.contract import Data, InferenceError, OptionalType, SequenceType, TensorType
from opspec.runtime.shape import Sym
from opspec.runtime.testing import INT64, run_rule, t

F, BOOL = 1, 9
N = Sym("N")


def seq(*shape, elem=F):
    return SequenceType(t(*shape, elem=elem))


def out(ctx):
    return ctx.output_type(0)


def test_construct_relaxes_what_the_elements_do_not_share():
    assert out(run_rule("SequenceConstruct", 11, [t(N, 3), t(N, 3)])) == seq(N, 3)
    assert out(run_rule("SequenceConstruct", 11, [t(N, 3), t(N, 4)])) == seq(N, None)
    assert out(run_rule("SequenceConstruct", 11, [t(N, 3), t(3)])) == seq(None)


def test_empty_insert_at_erase_length():
    assert out(run_rule("SequenceEmpty", 11, [], {"dtype": INT64})) == SequenceType(TensorType(INT64, None))
    assert out(run_rule("SequenceInsert", 11, [seq(2, 3), t(2, 4)])) == seq(2, None)
    assert out(run_rule("SequenceInsert", 11, [None, t(2, 4)], names=["s", "x"])) == seq(None)
    with pytest.raises(InferenceError, match="cannot insert"):
        run_rule("SequenceInsert", 11, [seq(2), t(2, elem=INT64)])
    assert out(run_rule("SequenceAt", 11, [seq(N, 3), t(elem=INT64)])) == t(N, 3)
    assert out(run_rule("SequenceErase", 11, [seq(N, 3)])) == seq(N, 3)
    assert out(run_rule("SequenceLength", 11, [seq(N, 3)])) == t(elem=INT64)


def test_split_to_sequence_piece_shapes():
    assert out(run_rule("SplitToSequence", 11, [t(6, 4)], {"axis": 0})) == seq(1, 4)
    assert out(run_rule("SplitToSequence", 11, [t(6, 4)], {"axis": 0, "keepdims": 0})) == seq(4)
    assert out(run_rule("SplitToSequence", 11, [t(6, 4), t(elem=INT64)], data=[None, Data((), (3,))])) == seq(3, 4)
    assert out(run_rule("SplitToSequence", 11, [t(7, 4), t(elem=INT64)], data=[None, Data((), (3,))])) == seq(None, 4)
    assert out(run_rule("SplitToSequence", 11, [t(6, 4), t(2, elem=INT64)], data=[None, Data((2,), (1, 5))])) == \
        seq(None, 4)
    assert out(run_rule("SplitToSequence", 11, [t(6, 4), None], names=["x", "s"])) == seq(None, 4)


def test_concat_from_sequence_joins_or_stacks():
    assert out(run_rule("ConcatFromSequence", 11, [seq(N, 3)], {"axis": 0})) == t(None, 3)
    assert out(run_rule("ConcatFromSequence", 11, [seq(N, 3)], {"axis": -1, "new_axis": 1})) == t(N, 3, None)


def test_optionals_wrap_and_unwrap():
    assert out(run_rule("Optional", 15, [t(N)])) == OptionalType(t(N))
    assert out(run_rule("Optional", 15, [], {"type": seq(2)})) == OptionalType(seq(2))
    with pytest.raises(InferenceError, match="needs the 'type' attribute"):
        run_rule("Optional", 15, [])
    assert out(run_rule("OptionalGetElement", 18, [OptionalType(t(N))])) == t(N)
    assert out(run_rule("OptionalGetElement", 18, [seq(2)])) == seq(2)
    assert out(run_rule("OptionalHasElement", 18, [OptionalType(t(N))])) == t(elem=BOOL)
