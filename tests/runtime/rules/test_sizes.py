"""Element counts compared without symbolic arithmetic (``_sizes.same_size``, ``size_quotient``):
where they answer, the answer is the one the symbolic products and their division give."""
from __future__ import annotations

import random

from opspec.runtime.rules._sizes import same_size, size_quotient
from opspec.runtime.shape import Sym, div_dim, num_elements, parse_dim

N, M, S = Sym("N"), Sym("M"), Sym("S")
_DIMS = (1, 2, 3, 4, 6, 8, 0, None, N, M, S, parse_dim("2*N"), parse_dim("N*M"), parse_dim("N+1"),
         parse_dim("N//2"), parse_dim("S-1"))


def test_a_symbolic_factor_that_pairs_up_needs_no_product():
    assert same_size((N, 4, 8), (32, N))
    assert size_quotient((N, S, 96), (N, S, 3)) == 32
    assert size_quotient((N, 56, 56, 96), (N, 56)) == 5376
    assert size_quotient((N, S, 12), (S, 4)) == 3 * N
    seq = S // 10 - 1  # a sum, as strided convolutions leave sequence lengths
    assert size_quotient((N, seq, 128), (N, seq, 32)) == 4
    assert size_quotient((N, seq, 128), (N, 4)) == 32 * seq


def test_what_needs_symbolic_arithmetic_is_left_to_it():
    assert not same_size((N, M), (parse_dim("N*M"),))  # equal, but only a product shows it
    assert size_quotient((parse_dim("N*M"), 4), (N,)) is None
    assert size_quotient((N, 6), (4,)) is None  # 6*N/4 is not an exact product of these dims
    # a sum over a sum: symbolic division finds only single-term quotients
    assert size_quotient((parse_dim("N+1"), parse_dim("M+1"), 2), (parse_dim("N+1"),)) is None
    assert size_quotient((parse_dim("N+1"), 2), (parse_dim("N+1"),)) == 2
    assert size_quotient((N, 0), (N,)) is None and not same_size((N, None), (N, None))


def test_answers_agree_with_symbolic_products():
    chooser = random.Random(7)
    for _ in range(4000):
        whole = tuple(chooser.choice(_DIMS) for _ in range(chooser.randint(0, 4)))
        part = tuple(chooser.choice(_DIMS) for _ in range(chooser.randint(0, 3)))
        if chooser.random() < 0.5:  # a part drawn from the whole, as reshapes mostly are
            part = tuple(chooser.sample(whole, chooser.randint(0, len(whole))))
        total, rest = num_elements(whole), num_elements(part)
        if same_size(whole, part):
            assert total is not None and rest is not None and total - rest == 0, (whole, part)
        quotient = size_quotient(whole, part)
        if quotient is not None:
            assert quotient is div_dim(total, rest) or quotient == div_dim(total, rest), (whole, part)
