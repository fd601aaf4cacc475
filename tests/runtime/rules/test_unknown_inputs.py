"""Present is not absent: a supplied input whose type or data is unknown.

For every rule that reads an optional input or input data, the answer with that input
unknown must hold for every value the input could have: the test runs the rule once with
the input unknown and once per concrete value, and checks that the first answer is never
more specific than, nor contradicts, any of the others (no wrong dim, no false error).
"""
from __future__ import annotations

import pytest

from opspec.runtime.contract import Data

from opspec.runtime.shape import Sym, SymbolTable
from opspec.runtime.testing import INT64, run_rule, t, vec

UNKNOWN = object()  # marks the input under test


def _answers(op, version, inputs, data, attributes, outputs):
    names = [f"in{i}" for i in range(len(inputs))]  # every input is supplied
    ctx = run_rule(op, version, inputs, attributes, data=data, names=names, output_count=outputs,
              symbols=SymbolTable(()))
    return [ctx.output_type(i) for i in range(ctx.output_count)]


def _holds_for(general, specific) -> bool:
    """``general`` (from the unknown input) is consistent with and no more specific than ``specific``."""
    if general is None:
        return True
    if specific is None or general.elem and specific.elem and general.elem != specific.elem:
        return False
    if general.shape is None:
        return True
    if specific.shape is None or len(general.shape) != len(specific.shape):
        return False
    return all(g is None or type(g) is Sym or g == s for g, s in zip(general.shape, specific.shape))


#: (op, version, inputs with UNKNOWN at the position under test, data (UNKNOWN likewise),
#:  attributes, output count, concrete (type, data) values the unknown input may take)
CASES = [
    ("Split", 13, [t(6, 4), UNKNOWN], [None, UNKNOWN], {"axis": 0}, 2,
     [(t(2, elem=INT64), vec(1, 5)), (t(2, elem=INT64), vec(3, 3)), (t(2, elem=INT64), vec(6, 0))]),
    ("Split", 1, [t(6, 4), UNKNOWN], [None, UNKNOWN], {"axis": 0}, 2,
     [(t(2, elem=INT64), vec(2, 4)), (t(2, elem=INT64), vec(3, 3))]),
    ("Unsqueeze", 13, [t(3, 4), UNKNOWN], [None, UNKNOWN], {}, 1,
     [(t(1, elem=INT64), vec(0)), (t(2, elem=INT64), vec(0, 3))]),
    ("Squeeze", 13, [t(1, 4, 1), UNKNOWN], [None, UNKNOWN], {}, 1,
     [(t(1, elem=INT64), vec(0)), (t(2, elem=INT64), vec(0, 2)), (t(0, elem=INT64), vec())]),
    ("Reshape", 14, [t(2, 3, 4), UNKNOWN], [None, UNKNOWN], {}, 1,
     [(t(2, elem=INT64), vec(6, 4)), (t(3, elem=INT64), vec(4, -1, 2)), (t(1, elem=INT64), vec(24))]),
    ("Expand", 13, [t(3, 1), UNKNOWN], [None, UNKNOWN], {}, 1,
     [(t(2, elem=INT64), vec(3, 5)), (t(3, elem=INT64), vec(2, 1, 1))]),
    ("Slice", 13, [t(10, 8), t(1, elem=INT64), t(1, elem=INT64), UNKNOWN], [None, vec(1), vec(5), UNKNOWN], {}, 1,
     [(t(1, elem=INT64), vec(0)), (t(1, elem=INT64), vec(1)), (t(1, elem=INT64), vec(-1))]),
    ("Slice", 13, [t(10, 8), t(1, elem=INT64), t(1, elem=INT64), t(1, elem=INT64), UNKNOWN],
     [None, vec(0), vec(8), vec(0), UNKNOWN], {}, 1,
     [(t(1, elem=INT64), vec(1)), (t(1, elem=INT64), vec(2)), (t(1, elem=INT64), vec(-1))]),
    ("Slice", 13, [t(10, 8), UNKNOWN, t(1, elem=INT64)], [None, UNKNOWN, vec(5)], {}, 1,
     [(t(1, elem=INT64), vec(0)), (t(1, elem=INT64), vec(4))]),
    ("ReduceSum", 13, [t(2, 3, 4), UNKNOWN], [None, UNKNOWN], {"keepdims": 0}, 1,
     [(t(1, elem=INT64), vec(1)), (t(0, elem=INT64), vec()), (t(2, elem=INT64), vec(0, 2))]),
    ("ReduceSum", 13, [t(2, 3, 4), UNKNOWN], [None, UNKNOWN], {"keepdims": 1}, 1,
     [(t(1, elem=INT64), vec(1)), (t(0, elem=INT64), vec())]),
    ("ReduceMax", 18, [t(2, 3, 4), UNKNOWN], [None, UNKNOWN], {"keepdims": 0, "noop_with_empty_axes": 1}, 1,
     [(t(1, elem=INT64), vec(1)), (t(0, elem=INT64), vec())]),
    ("ConstantOfShape", 9, [UNKNOWN], [UNKNOWN], {}, 1,
     [(t(2, elem=INT64), vec(3, 4)), (t(1, elem=INT64), vec(0))]),
    ("Range", 11, [t(elem=INT64), UNKNOWN, t(elem=INT64)], [None, UNKNOWN, None], {}, 1,
     [(t(elem=INT64), None)]),
    ("Gemm", 13, [t(4, 3), t(3, 5), UNKNOWN], [None, None, UNKNOWN], {}, 1,
     [(t(5), None), (t(4, 5), None), (t(1, 1), None)]),
    ("QLinearConv", 10, [t(1, 3, 8, 8, elem=2), t(), t(elem=2), t(6, 3, 3, 3, elem=2), t(), t(elem=2), t(),
                         t(elem=2), UNKNOWN], [None] * 8 + [UNKNOWN], {}, 1,
     [(t(6, elem=6), None)]),
    ("ConvInteger", 10, [t(1, 3, 8, 8, elem=2), t(6, 3, 3, 3, elem=2), UNKNOWN], [None, None, UNKNOWN], {}, 1,
     [(t(elem=2), None), (t(1, elem=2), None)]),
    ("Conv", 11, [t(1, 3, 8, 8), t(6, 3, 3, 3), UNKNOWN], [None, None, UNKNOWN], {}, 1,
     [(t(6), None)]),
    ("LayerNormalization", 17, [t(2, 5, 8), t(8), UNKNOWN], [None, None, UNKNOWN], {}, 1,
     [(t(8), None), (t(1), None)]),
    ("Add", 14, [t(2, 3), UNKNOWN], [None, UNKNOWN], {}, 1,
     [(t(2, 3), None), (t(3), None), (t(1, 3), None)]),
    ("Concat", 13, [t(2, elem=INT64), UNKNOWN], [vec(1, 2), UNKNOWN], {"axis": 0}, 1,
     [(t(2, elem=INT64), vec(3, 4)), (t(1, elem=INT64), vec(7))]),
    ("Gather", 13, [t(4, elem=INT64), UNKNOWN], [vec(5, 6, 7, 8), UNKNOWN], {"axis": 0}, 1,
     [(t(2, elem=INT64), vec(0, 3)), (t(elem=INT64), vec(1))]),
    ("Clip", 13, [t(2, 3), UNKNOWN], [None, UNKNOWN], {}, 1, [(t(), None)]),
    ("HannWindow", 17, [UNKNOWN], [UNKNOWN], {}, 1,
     [(t(elem=INT64), Data((), (4,))), (t(elem=INT64), Data((), (0,)))]),
    ("MelWeightMatrix", 17, [t(elem=INT64), UNKNOWN, t(elem=INT64), t(), t()],
     [Data((), (8,)), UNKNOWN, None, None, None], {}, 1,
     [(t(elem=INT64), Data((), (512,))), (t(elem=INT64), Data((), (7,)))]),
    ("Resize", 19, [t(2, 3, 4, 4), t(0), UNKNOWN], [None, None, UNKNOWN], {}, 1,
     [(t(4), Data((4,), (1.0, 1.0, 2.0, 2.0))), (t(4), Data((4,), (1.0, 2.0, 0.5, 1.5)))]),
    ("Resize", 19, [t(2, 3, 4, 4), t(0), t(0), UNKNOWN], [None, None, Data((0,), ()), UNKNOWN], {}, 1,
     [(t(4, elem=INT64), Data((4,), (2, 3, 8, 8))),]),
    ("Resize", 19, [t(2, 3, 4, 4), t(0), t(0), UNKNOWN], [None, None, Data((0,), ()), UNKNOWN], {"axes": [2, 3]}, 1,
     [(t(2, elem=INT64), Data((2,), (8, 8))), (t(2, elem=INT64), Data((2,), (1, 1)))]),
    ("Col2Im", 18, [t(1, 12, 16), UNKNOWN, t(2, elem=INT64)], [None, UNKNOWN, Data((2,), (2, 2))], {}, 1,
     [(t(2, elem=INT64), Data((2,), (5, 5))), (t(2, elem=INT64), Data((2,), (4, 7)))]),
    ("AffineGrid", 20, [t(2, 2, 3), UNKNOWN], [None, UNKNOWN], {}, 1,
     [(t(4, elem=INT64), Data((4,), (2, 3, 8, 9))), (t(4, elem=INT64), Data((4,), (2, 1, 1, 1)))]),
    ("RandomNormalLike", 22, [UNKNOWN], [UNKNOWN], {"dtype": 1}, 1, [(t(2, 3), None), (t(), None)]),
    ("TopK", 11, [t(3, 8), UNKNOWN], [None, UNKNOWN], {}, 2,
     [(t(1, elem=INT64), vec(0)), (t(1, elem=INT64), vec(8)), (t(1, elem=INT64), vec(3))]),
    ("OneHot", 11, [t(4, elem=INT64), UNKNOWN, t(2)], [None, UNKNOWN, None], {"axis": 0}, 1,
     [(t(elem=INT64), Data((), (3,))), (t(elem=INT64), Data((), (10,)))]),
    ("Tile", 13, [t(2, 3), UNKNOWN], [None, UNKNOWN], {}, 1,
     [(t(2, elem=INT64), vec(1, 1)), (t(2, elem=INT64), vec(0, 4)), (t(2, elem=INT64), vec(3, 2))]),
    ("Tile", 13, [UNKNOWN, t(1, elem=INT64)], [UNKNOWN, vec(2)], {}, 1,
     [(t(2, elem=INT64), vec(5, 6)), (t(3, elem=INT64), vec(1, 2, 3))]),
    ("Compress", 11, [t(3, 4), UNKNOWN], [None, UNKNOWN], {"axis": 1}, 1,
     [(t(4, elem=9), vec(0, 1, 1, 0)), (t(4, elem=9), vec(0, 0, 0, 0)), (t(2, elem=9), vec(1, 1))]),
    ("Compress", 11, [t(3, 4), UNKNOWN], [None, UNKNOWN], {}, 1,
     [(t(3, elem=9), vec(1, 0, 1)), (t(12, elem=9), vec(*[1] * 12))]),
    ("NonZero", 13, [UNKNOWN], [UNKNOWN], {}, 1,
     [(t(4, elem=INT64), vec(0, 3, 0, 5)), (t(4, elem=INT64), vec(0, 0, 0, 0)), (t(2, elem=INT64), vec(1, 1))]),
    ("Pad", 13, [t(2, 5), UNKNOWN], [None, UNKNOWN], {}, 1,
     [(t(4, elem=INT64), vec(0, 1, 0, 1)), (t(4, elem=INT64), vec(1, -2, 1, -3))]),
    ("Pad", 18, [t(2, 5), t(2, elem=INT64), t(), UNKNOWN], [None, vec(1, 2), None, UNKNOWN], {}, 1,
     [(t(1, elem=INT64), vec(0)), (t(1, elem=INT64), vec(-1))]),
    ("Pad", 18, [t(2, 5), t(4, elem=INT64), UNKNOWN], [None, vec(1, 2, 1, 2), UNKNOWN], {}, 1,
     [(t(), Data((), (1.0,))), (t(), Data((), (0.0,)))]),
    ("CenterCropPad", 18, [t(6, 8, 3), UNKNOWN], [None, UNKNOWN], {"axes": [0, 1]}, 1,
     [(t(2, elem=INT64), vec(4, 4)), (t(2, elem=INT64), vec(10, 2))]),
    ("CenterCropPad", 18, [t(6, 8, 3), UNKNOWN], [None, UNKNOWN], {}, 1,
     [(t(3, elem=INT64), vec(4, 4, 3))]),
    ("CumSum", 14, [t(2, 3), UNKNOWN], [None, UNKNOWN], {}, 1,
     [(t(elem=INT64), Data((), (0,))), (t(elem=INT64), Data((), (-1,)))]),
    ("MaxUnpool", 11, [t(1, 3, 2, 2), t(1, 3, 2, 2, elem=INT64), UNKNOWN], [None, None, UNKNOWN],
     {"kernel_shape": [2, 2], "strides": [2, 2]}, 1,
     [(t(4, elem=INT64), vec(1, 3, 4, 4)), (t(4, elem=INT64), vec(1, 3, 5, 5))]),
    ("DFT", 20, [t(1, 10, 8, 1), t(elem=INT64), UNKNOWN], [None, Data((), (6,)), UNKNOWN], {"onesided": 1}, 1,
     [(t(elem=INT64), Data((), (a,))) for a in (0, 1, 2, -2, -4)]),
    ("DFT", 20, [t(1, 10, 8, 1), t(), UNKNOWN], [None, None, UNKNOWN], {"onesided": 1}, 1,
     [(t(elem=INT64), Data((), (a,))) for a in (0, 1, 2)]),
    ("DFT", 20, [t(1, 10, 8, 2), UNKNOWN, t(elem=INT64)], [None, UNKNOWN, Data((), (1,))], {}, 1,
     [(t(elem=INT64), Data((), (n,))) for n in (10, 16, 3)]),
    ("DFT", 17, [t(1, 10, 1), UNKNOWN], [None, UNKNOWN], {"onesided": 1}, 1,
     [(t(elem=INT64), Data((), (n,))) for n in (10, 17, 1)]),
    ("STFT", 17, [t(1, 128, 1), UNKNOWN, t(16), t(elem=INT64)], [None, UNKNOWN, None, Data((), (16,))], {}, 1,
     [(t(elem=INT64), Data((), (n,))) for n in (8, 3, 200)]),
    ("STFT", 17, [t(1, 128, 1), t(elem=INT64), t(16), UNKNOWN], [None, Data((), (8,)), None, UNKNOWN], {}, 1,
     [(t(elem=INT64), Data((), (16,)))]),
    ("STFT", 17, [t(1, 128, 1), t(elem=INT64), UNKNOWN, t(elem=INT64)], [None, Data((), (8,)), UNKNOWN,
                                                                         Data((), (32,))], {"onesided": 0}, 1,
     [(t(32), None)]),
    ("Attention", 24, [t(1, 4, 3, 8), t(1, 2, 5, 8), t(1, 2, 5, 6), t(3, 9), UNKNOWN, t(1, 2, 4, 6)],
     [None, None, None, None, UNKNOWN, None], {}, 4, [(t(1, 2, 4, 8), None)]),
    ("Attention", 24, [t(1, 4, 3, 8), t(1, 2, 5, 8), t(1, 2, 5, 6), UNKNOWN], [None, None, None, UNKNOWN], {}, 4,
     [(t(3, 5), None), (t(1, 1, 3, 5, elem=9), None)]),
    ("LinearAttention", 27, [t(1, 2, 32), t(1, 2, 16), t(1, 2, 12), UNKNOWN], [None, None, None, UNKNOWN],
     {"q_num_heads": 4, "kv_num_heads": 2}, 2, [(t(1, 2, 8, 6), None), (t(1, 2, 8, 6, elem=10), None)]),
    ("CausalConvWithState", 27, [t(1, 6, 5), t(6, 1, 4), UNKNOWN], [None, None, UNKNOWN], {}, 2, [(t(6), None)]),
    ("CausalConvWithState", 27, [t(1, 6, 5), t(6, 1, 4), t(6), UNKNOWN], [None, None, None, UNKNOWN], {}, 2,
     [(t(1, 6, 3), None)]),
]


def _one_type(concretes) -> bool:
    """Whether every concrete value has one element type and rank (so "data unknown" can be posed)."""
    return len({(c[0].elem, len(c[0].shape)) for c in concretes}) == 1


#: Each case with the input's type unknown, and (where the values share a type) only its data unknown.
_RUNS = [(case, how) for case in CASES for how in ("type unknown", "data unknown")
         if how == "type unknown" or _one_type(case[6])]


@pytest.mark.parametrize("case,how", _RUNS, ids=[f"{c[0]}-{c[1]}-{how}" for c, how in _RUNS])
def test_unknown_input_answer_holds_for_every_value(case, how):
    op, version, inputs, data, attributes, outputs, concretes = case
    position = inputs.index(UNKNOWN)
    if how == "type unknown":
        unknown_type = None
    else:
        unknown_type = concretes[0][0]._replace(shape=(None,) * len(concretes[0][0].shape))
    general = _answers(op, version, _with(inputs, position, unknown_type), _with(data, position, None),
                       attributes, outputs)
    for concrete_type, concrete_data in concretes:
        specific = _answers(op, version, _with(inputs, position, concrete_type),
                            _with(data, position, concrete_data), attributes, outputs)
        for g, s in zip(general, specific):
            assert _holds_for(g, s), f"{op}-{version}: {g} with the input unknown contradicts {s}"


def _with(values: list, position: int, value: object) -> list:
    return [value if i == position else v for i, v in enumerate(values)]
