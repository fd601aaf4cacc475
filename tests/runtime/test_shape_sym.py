"""Tests for opspec.runtime.shape.sym: the Sym expression type, its rendering and parsing."""
import copy
import pickle
import random

import pytest

from opspec.runtime.shape import ShapeError, Sym, parse_dim

N, M, K = Sym("N"), Sym("M"), Sym("K")


def sym(value: object) -> Sym:
    """``value``, which the algebra must have kept symbolic (not reduced to a number)."""
    assert type(value) is Sym, value
    return value


# ----------------------------------------------------------------------------- construction

def test_plain_symbols_are_interned_and_hashable():
    assert Sym("N") is N
    assert str(N) == "N" and repr(N) == "Sym('N')"
    assert N.name == "N" and N.is_symbol
    assert {N: 1}[Sym("N")] == 1
    assert N != M and N != "N" and N != 0


@pytest.mark.parametrize("bad", ["", 3, None])
def test_symbol_name_must_be_a_non_empty_string(bad):
    with pytest.raises((ValueError, TypeError)):
        Sym(bad)


def test_sym_is_immutable():
    with pytest.raises(AttributeError):
        N._terms = ()
    with pytest.raises(AttributeError):
        del N._terms
    with pytest.raises(AttributeError):
        N.extra = 1


def test_copy_and_pickle_preserve_value():
    e = Sym.max(2 * N + 1, (M * N) // 3)
    assert copy.copy(e) is e and copy.deepcopy(e) is e
    back = pickle.loads(pickle.dumps(e))
    assert back is e and str(back) == str(e)
    assert pickle.loads(pickle.dumps(N)) is N


# ----------------------------------------------------------------------------- normalisation

def test_polynomial_normalisation():
    assert N + N == 2 * N
    assert N - N == 0 and type(N - N) is int
    assert 2 * N - N == N and (2 * N - N) is N
    assert N * 2 == 2 * N == N + N
    assert N + 1 - 1 is N
    assert (N + M) * 2 == 2 * M + 2 * N
    assert N * M == M * N
    assert (N + 1) * (N - 1) == N * N - 1
    assert -(-N) == N
    assert N * 0 == 0 and N * 1 is N and N + 0 is N
    left, right = N + M, M + N
    assert left is right and hash(left) == hash(right)


def test_rendering():
    cases = {
        "2*N": 2 * N,
        "N+1": N + 1,
        "N-1": N - 1,
        "3-N": 3 - N,
        "-N": -N,
        "N-M": N - M,
        "M*N": N * M,
        "N*N+2*N+1": (N + 1) * (N + 1),
        "N//2": N // 2,
        "ceil(N/2)": N.ceildiv(2),
        "(M*N)//2": (N * M) // 2,
        "(2*N)//3": (2 * N) // 3,
        "ceil((2*N)/3)": sym(2 * N).ceildiv(3),
        "M*(N//2)": M * (N // 2),
        "-(N//2)": -(N // 2),
        "M-N//2": M - N // 2,
        "min(M,N)": Sym.min(N, M),
        "max(3,N)": Sym.max(N, 3),
        "2*min(M,N)+1": 2 * Sym.min(N, M) + 1,
    }
    for text, value in cases.items():
        assert str(value) == text


def test_floor_division_by_constants():
    assert (2 * N) // 2 == N
    assert (2 * N + 1) // 2 == N
    assert (4 * N + 6) // 4 == N + 1
    assert (2 * N + 2) // 4 == (N + 1) // 2 == N.ceildiv(2)
    assert (2 * N + 1) // 4 == N // 2  # floor(N/2 + 1/4) == floor(N/2)
    assert (N // 2) // 3 == N // 6
    assert (N // 2 + 1) // 3 == (N + 2) // 6
    assert N // 1 is N
    assert N // -1 == -N
    with pytest.raises(ZeroDivisionError):
        N // 0


def test_ceil_division():
    assert N.ceildiv(1) is N
    assert sym(2 * N).ceildiv(2) == N
    assert sym(2 * N).ceildiv(4) == N.ceildiv(2)
    assert (N + 1).ceildiv(2) == N // 2 + 1
    assert (N + 2).ceildiv(2) == N.ceildiv(2) + 1
    assert N.ceildiv(-2) == -(N // 2)
    assert parse_dim("ceil(N/2)") == parse_dim("(N+1)//2") == N.ceildiv(2)


def test_exact_and_symbolic_division():
    assert (N * M) // M == N
    assert sym(2 * N * M).exact_div(2 * N) == M
    assert sym(2 * N + 2).exact_div(N + 1) == 2
    assert sym(N * N + N).exact_div(N + 1) == N
    assert (N + 1).exact_div(N) is None
    assert N.exact_div(2) is None
    assert sym(4 * N).exact_div(2) == 2 * N
    assert N.exact_div(0) is None
    assert 0 // N == 0
    with pytest.raises(ShapeError, match="cannot represent N//M"):
        N // M
    with pytest.raises(ShapeError):
        6 // N


def test_remainder():
    assert sym((2 * N)).remainder(2) == 0
    assert sym((2 * N + 3)).remainder(2) == 1
    assert sym((4 * N * M + 5)).remainder(4) == 1
    assert N.remainder(2) is None
    assert sym((N // 2 * 2)).remainder(2) == 0


def test_min_max():
    assert Sym.min(N, N) is N
    assert Sym.min(N, M) == Sym.min(M, N)
    assert Sym.min(N, N + 1) is N
    assert Sym.max(N, N + 1) == N + 1
    assert Sym.min(N - 2, N + 3, N) == N - 2
    assert Sym.min(Sym.min(N, M), K) == Sym.min(N, Sym.min(M, K)) == Sym.min(K, M, N)
    assert Sym.max(Sym.min(N, M), K) != Sym.min(Sym.max(N, M), K)
    assert Sym.min(3, 5) == 3 and Sym.max(3, 5) == 5
    assert Sym.min(N, 3, 5) == Sym.min(3, N)
    with pytest.raises(TypeError):
        Sym.min(N, None)  # type: ignore[arg-type]  # the error under test


def test_names_and_evaluate():
    e = sym(Sym.max(2 * N * M + 1, K // 3))
    assert e.names() == frozenset({"N", "M", "K"})
    assert e.evaluate({"N": 2, "M": 3, "K": 100}) == 33
    assert sym(N.ceildiv(2)).evaluate({"N": 5}) == 3
    with pytest.raises(KeyError):
        e.evaluate({"N": 1})


def test_arithmetic_with_unsupported_operands():
    with pytest.raises(TypeError):
        N + "x"  # type: ignore[operator]  # the error under test
    with pytest.raises(TypeError):
        N * 1.5
    assert N + True == N + 1


# ----------------------------------------------------------------------------- parsing

@pytest.mark.parametrize("name", ["N", "batch", "batch_size", "unk__3", "seq_len2", "_x", "min", "ceil", "Größe"])
def test_parse_plain_names_round_trip(name):
    s = sym(parse_dim(name))
    assert s == Sym(name) and str(s) == name and s.is_symbol


@pytest.mark.parametrize("text", [
    "batch size", "input.1_dim_0", "2N", "N+", "(N", "N)", "N/2", "N//M", "N//0", "foo(N)",
    "ceil(N+1/2)", "ceil(N/M)", "-1", "N,M", " N", "N ", "a:b", "min()",
])
def test_parse_other_text_is_an_opaque_symbol(text):
    s = parse_dim(text)
    assert type(s) is Sym and s.name == text and str(s) == text


@pytest.mark.parametrize("text, expected", [
    ("2*N", 2 * N),
    ("N+1", N + 1),
    ("N + 1", N + 1),
    ("1+N", N + 1),
    ("batch*seq", Sym("batch") * Sym("seq")),
    ("N*M-N", N * M - N),
    ("-N+3", 3 - N),
    ("N//2", N // 2),
    ("floor(N/2)", N // 2),
    ("ceil(N/2)", N.ceildiv(2)),
    ("Ceiling(N / 2)", N.ceildiv(2)),
    ("min(N,M)", Sym.min(N, M)),
    ("Max(N, 2)", Sym.max(N, 2)),
    ("2*(N+1)", 2 * N + 2),
    ("--N", N),
    ("(N*M)//M", N),
    ("3", 3),
    ("N-N", 0),
    ("4//3", 1),
])
def test_parse_expressions(text, expected):
    assert parse_dim(text) == expected


def test_parse_empty_text_is_unknown():
    assert parse_dim("") is None


def test_parse_deep_nesting_is_opaque_not_a_crash():
    text = "(" * 5000 + "N" + ")" * 5000
    assert sym(parse_dim(text)).name == text


# ----------------------------------------------------------------------------- properties

def _random_expr(rng, depth):
    """A random (Sym-or-int value, plain-int evaluator) pair."""
    if depth == 0 or rng.random() < 0.25:
        if rng.random() < 0.7:
            name = rng.choice("NMK")
            return Sym(name), lambda env, n=name: env[n]
        c = rng.randint(-3, 5)
        return c, lambda env, c=c: c
    op = rng.choice(["+", "-", "*", "//", "ceil", "min", "max", "neg"])
    a, fa = _random_expr(rng, depth - 1)
    if op == "neg":
        return -a, lambda env: -fa(env)
    if op in ("//", "ceil"):
        k = rng.randint(1, 6)
        if op == "//":
            return a // k, lambda env: fa(env) // k
        value = a.ceildiv(k) if type(a) is Sym else -(-a // k)
        return value, lambda env: -(-fa(env) // k)
    b, fb = _random_expr(rng, depth - 1)
    if op == "+":
        return a + b, lambda env: fa(env) + fb(env)
    if op == "-":
        return a - b, lambda env: fa(env) - fb(env)
    if op == "*":
        return a * b, lambda env: fa(env) * fb(env)
    if op == "min":
        return Sym.min(a, b), lambda env: min(fa(env), fb(env))
    return Sym.max(a, b), lambda env: max(fa(env), fb(env))


def _evaluate(value, env):
    return value if type(value) is int else value.evaluate(env)


def test_normalised_expressions_keep_their_value():
    rng = random.Random(1234)
    for _ in range(2000):
        value, reference = _random_expr(rng, 4)
        for _ in range(5):
            env = {n: rng.randint(-20, 40) for n in "NMK"}
            assert _evaluate(value, env) == reference(env), (value, env)


def test_rendering_round_trips_through_parse():
    rng = random.Random(99)
    for _ in range(2000):
        value, _ = _random_expr(rng, 4)
        if type(value) is Sym:
            text = str(value)
            back = parse_dim(text)
            assert back == value, (text, back)
            assert str(back) == text


def test_arithmetic_identities():
    rng = random.Random(7)
    values = [N, M, K, N + 1, 2 * M, N * M, N // 2, Sym.min(N, M), 0, 1, 3]
    for _ in range(500):
        a, b, c = (rng.choice(values) for _ in range(3))
        assert a + b == b + a
        assert a * b == b * a
        assert (a + b) + c == a + (b + c)
        assert (a * b) * c == a * (b * c)
        assert a * (b + c) == a * b + a * c
        assert (a + b) - b == a
        assert a - a == 0
        assert Sym.min(a, b) == Sym.min(b, a)
        assert Sym.max(a, Sym.max(b, c)) == Sym.max(Sym.max(a, b), c)
        left, right = a + b, b + a
        assert left is right and hash(left) == hash(right)


@pytest.mark.parametrize("text, never_negative, constant", [
    ("N", True, 0), ("2*N+3", True, 3), ("min(512,N)", True, 0), ("N//2", True, 0), ("N*M+max(N,S)", True, 0),
    ("N-1", False, -1), ("N-S", False, 0), ("-S", False, 0), ("max(N,S)-1", False, -1), ("(N-S)//2", False, 0),
])
def test_never_negative_is_read_from_the_form(text, never_negative, constant):
    value = sym(parse_dim(text))
    assert value.never_negative is never_negative and value.constant == constant


def test_equal_values_are_one_object_made_in_any_way():
    from opspec.runtime.shape import parse_dim

    made = [2 * N + 2, (N + 1) * 2, N + N + 2, parse_dim("2*N+2"), pickle.loads(pickle.dumps(2 * N + 2)),
            copy.deepcopy(2 * N + 2), Sym.max(2 * N + 2, 2 * N + 1)]
    assert all(value is made[0] for value in made)
    assert len({Sym("N"), parse_dim("N"), N}) == 1 and (N + 1) != (N + 2)


def test_interned_values_are_dropped_once_unused():
    import gc
    import weakref

    from opspec.runtime.shape import sym
    from opspec.runtime.shape.intern import InternTable

    gone = weakref.ref(Sym("unused_interned_name") * 7 + 3)
    gc.collect()
    assert gone() is None
    assert Sym("unused_interned_name") * 7 + 3 is Sym("unused_interned_name") * 7 + 3
    assert sym._NAMES.get("unused_interned_name") is None  # nothing holds it: gone again

    class Value:
        pass

    table: InternTable[Value] = InternTable()
    kept = [table.add(index, Value()) for index in range(3)]
    for index in range(3, 20_000):  # made and dropped: the table is swept as it grows
        table.add(index, Value())
    assert len(table) <= 4097 and all(table.get(index) is kept[index] for index in range(3))


def test_threads_making_the_same_symbols_get_one_object_each():
    import threading

    from opspec.runtime.shape.sym import plain_symbols

    names = [f"threaded_{index}" for index in range(2_000)]
    results: list = []

    def make() -> None:
        results.append(plain_symbols(names) + [Sym(name) + 1 for name in names])

    threads = [threading.Thread(target=make) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(all(a is b for a, b in zip(results[0], other)) for other in results[1:])
