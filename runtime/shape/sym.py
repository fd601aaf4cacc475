"""``Sym``: an immutable symbolic dimension, i.e. an integer expression over named symbols.

Internally an expression is a canonical polynomial: a sorted tuple of ``(monomial, coefficient)``
terms with non-zero ``int`` coefficients, where a monomial is a sorted tuple of *atoms*.  An atom
is either a symbol name (``str``) or a ``_Func`` node: floor division by a positive constant,
``min`` or ``max``.  Every operation normalises its result, and anything that reduces to a
constant comes back as a plain ``int``: a ``Sym`` is never constant.  Results are interned (see
:mod:`.intern`): equal expressions are one object, so ``==`` and ``hash`` are identity's, in C.

``str(sym)`` is the text written into an ONNX ``dim_param``; ``parse_dim`` (in :mod:`.parse`) reads it back
(exactly, for expressions over identifier names; an opaque name such as ``batch size`` is
parenthesised inside a compound expression and then reads back as one opaque name).

Normal form is exact for polynomials.  Floor atoms are reduced (``floor(k*q + r, k)`` splits into
``q + floor(r, k)``, common factors cancel, nested floors merge, and ``ceil(s/k)`` is stored as
``floor((s+k-1)/k)``), and ``min``/``max`` are flattened and drop arguments that differ from
another by a constant; a few equal-valued forms still differ, e.g. ``N-N//2`` and ``ceil(N/2)``.
"""
from __future__ import annotations

import re
from collections import deque
from itertools import repeat
from math import gcd
from typing import Any, Dict, FrozenSet, Iterable, List, Mapping, Optional, Tuple, Union, cast, final, overload

from .errors import ShapeError
from .intern import InternTable

__all__ = ["Sym", "plain_symbols"]

_is_identifier = re.compile(r"[^\W\d]\w*").fullmatch
_set = object.__setattr__
_new = object.__new__

# ``_Func`` operators; the numbers fix their relative order in canonical sorting.
_FLOOR, _MIN, _MAX = 0, 1, 2

Terms = Tuple[Tuple[tuple, int], ...]
Value = Union[int, "Sym"]

# Every symbol and expression is interned: one live object per value, so ``Sym``s hash and
# compare by identity. Plain symbols by name, compound expressions by their terms.
_NAMES: InternTable["Sym"] = InternTable()
_EXPRESSIONS: InternTable["Sym"] = InternTable()
_name_refs = _NAMES.refs.get
_expression_refs = _EXPRESSIONS.refs.get


# --------------------------------------------------------------------------- canonical ordering

def _atom_key(a: Any) -> tuple:
    return (0, a) if type(a) is str else a.key


def _mono_key(m: tuple) -> tuple:
    return tuple([(0, a) if type(a) is str else a.key for a in m])


def _poly_key(p: Terms) -> tuple:
    return tuple([(_mono_key(m), c) for m, c in p])


def _term_order(term: tuple) -> tuple:
    # Positive terms first, higher degree first, constant last: "N*M+N+1", "3-N", "N-M".
    m, c = term
    return (c < 0, -len(m), _mono_key(m))


class _Func:
    """A non-polynomial atom: ``floor(args[0] / k)``, ``min(*args)`` or ``max(*args)``."""

    __slots__ = ("op", "args", "k", "key", "_hash")
    key: tuple

    def __init__(self, op: int, args: Tuple[Terms, ...], k: int = 0) -> None:
        self.op = op
        self.args = args
        self.k = k
        if op == _FLOOR:
            self.key = (1, op, _poly_key(args[0]), k)
        else:
            self.key = (1, op, tuple([_poly_key(a) for a in args]))
        self._hash = hash(self.key)

    def __eq__(self, other: object) -> bool:
        return self is other or (
            type(other) is _Func and self._hash == other._hash and self.key == other.key
        )

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple:
        return (_Func, (self.op, self.args, self.k))


# --------------------------------------------------------------------------- polynomial helpers

def _as_terms(x: Any) -> Optional[Terms]:
    """Terms of an ``int`` or ``Sym`` operand; ``None`` for anything else."""
    t = type(x)
    if t is Sym:
        return x._terms
    if t is not int:
        if not isinstance(x, int):
            return None
        x = int(x)
    return (((), x),) if x else ()


def _sorted_terms(d: Dict[tuple, int]) -> Terms:
    if len(d) == 1:
        return tuple(d.items()) if next(iter(d.values())) else ()
    items = [(m, c) for m, c in d.items() if c]
    if len(items) > 1:
        items.sort(key=_term_order)
    return tuple(items)


def _make(terms: Terms) -> "Sym":
    """The compound expression of canonical ``terms`` (never a plain symbol: ``Sym(name)``
    makes those); ``_text`` is filled in on first use of ``str``."""
    ref = _expression_refs(terms)
    if ref is not None:
        s = ref()
        if s is not None:
            return s
    s = _new(Sym)
    _set(s, "_terms", terms)
    _set(s, "name", None)
    return _EXPRESSIONS.add(terms, s)


def _add_const(terms: Terms, k: int) -> Value:
    """``terms + k`` without re-sorting: the constant sits last among terms of its sign."""
    const = k
    pos = []
    neg = []
    for m, c in terms:
        if not m:
            const += c
        elif c > 0:
            pos.append((m, c))
        else:
            neg.append((m, c))
    if const > 0:
        pos.append(((), const))
    elif const < 0:
        neg.append(((), const))
    pos.extend(neg)
    return _finish(tuple(pos))


def _finish(terms: Terms) -> Value:
    """The value of canonical terms: an ``int`` when constant, the interned plain symbol, or a new ``Sym``."""
    if len(terms) == 1:
        m, c = terms[0]
        if not m:
            return c
        if c == 1 and len(m) == 1 and type(m[0]) is str:
            return Sym(m[0])
    elif not terms:
        return 0
    return _make(terms)


def _value(d: Dict[tuple, int]) -> Value:
    """The canonical value of a polynomial dict (see ``_finish``)."""
    return _finish(_sorted_terms(d))


def _add(p: Iterable, q: Iterable, sign: int = 1) -> Dict[tuple, int]:
    d = dict(p)
    for m, c in q:
        d[m] = d.get(m, 0) + sign * c
    return d


def _mono_mul(m1: tuple, m2: tuple) -> tuple:
    if not m1:
        return m2
    if not m2:
        return m1
    return tuple(sorted(m1 + m2, key=_atom_key))


def _mul(p: Terms, q: Terms) -> Dict[tuple, int]:
    d: Dict[tuple, int] = {}
    for m1, c1 in p:
        for m2, c2 in q:
            m = _mono_mul(m1, m2)
            d[m] = d.get(m, 0) + c1 * c2
    return d


def _mono_div(m: tuple, d: tuple) -> Optional[tuple]:
    """``m / d`` for monomials, or ``None`` when ``d`` is not a factor of ``m``."""
    if not d:
        return m
    rest = list(m)
    for a in d:
        try:
            rest.remove(a)
        except ValueError:
            return None
    return tuple(rest)


def _floordiv(p: Iterable, k: int) -> Dict[tuple, int]:
    """``floor(p / k)`` for ``k > 0`` as a polynomial dict.

    Writes ``p = k*q + r`` with every coefficient of ``r`` in ``[0, k)``, so the result is
    ``q + floor(r / k)``; the floor atom is then reduced by the common factor of ``k`` and the
    non-constant coefficients, and a floor of a floor is collapsed into one.
    """
    q: Dict[tuple, int] = {}
    r: Dict[tuple, int] = {}
    for m, c in p:
        hi, lo = divmod(c, k)
        if hi:
            q[m] = hi
        if lo:
            r[m] = lo
    const = r.pop((), 0)
    if not r:  # remainder is a constant in [0, k): it floors to nothing
        return q
    g = k
    for c in r.values():
        g = gcd(g, c)
        if g == 1:
            break
    if g > 1:  # floor((g*a + c) / (g*b)) == floor((a + c//g) / b) for integer a
        k //= g
        const //= g
        r = {m: c // g for m, c in r.items()}
    if len(r) == 1:
        ((m, c),) = r.items()
        inner = m[0]
        if c == 1 and len(m) == 1 and type(inner) is _Func and inner.op == _FLOOR:
            # floor((floor(x / j) + c) / k) == floor((x + c*j) / (j*k))
            nested = _add(inner.args[0], (((), const * inner.k),))
            return _add(q, _floordiv(nested.items(), k * inner.k).items())
    if const:
        r[()] = const
    key = (_Func(_FLOOR, (_sorted_terms(r),), k),)
    q[key] = q.get(key, 0) + 1
    return q


def _exact_div(p: Terms, q: Terms) -> Optional[Dict[tuple, int]]:
    """``p / q`` when the quotient is a polynomial this module can find, else ``None``.

    Handles any divisor with a single term, and multi-term divisors whose quotient is a
    single term (``(2*N+2) / (N+1) == 2``).
    """
    if not p:
        return {}
    if len(q) == 1:
        dm, dc = q[0]
        out: Dict[tuple, int] = {}
        for m, c in p:
            rest = _mono_div(m, dm)
            if rest is None or c % dc:
                return None
            out[rest] = c // dc
        return out
    m0, c0 = q[0]
    for m, c in p:
        rest = _mono_div(m, m0)
        if rest is None or c % c0:
            continue
        t = ((rest, c // c0),)
        if _sorted_terms(_mul(t, q)) == p:
            return dict(t)
    return None


def _const_diff(p: Terms, q: Terms) -> Optional[int]:
    """``p - q`` when it is a constant, else ``None``."""
    d = _sorted_terms(_add(p, q, -1))
    if not d:
        return 0
    if len(d) == 1 and not d[0][0]:
        return d[0][1]
    return None


def _min_max(op: int, values: Tuple[Any, ...]) -> Value:
    """Canonical ``min`` (``op == _MIN``) or ``max`` of ints and ``Sym``s."""
    polys: List[Terms] = []
    for v in values:
        p = _as_terms(v)
        if p is None:
            raise TypeError(f"expected int or Sym, got {v!r}")
        if len(p) == 1 and p[0][1] == 1 and len(p[0][0]) == 1:
            atom = p[0][0][0]
            if type(atom) is _Func and atom.op == op:  # min(min(a, b), c) == min(a, b, c)
                polys.extend(atom.args)
                continue
        polys.append(p)
    kept: list = []
    for p in polys:
        for i, q in enumerate(kept):
            d = _const_diff(p, q)
            if d is not None:  # p == q + d: one of them always wins
                if (d < 0) if op == _MIN else (d > 0):
                    kept[i] = p
                break
        else:
            kept.append(p)
    if len(kept) == 1:
        return _value(dict(kept[0]))
    kept.sort(key=_poly_key)
    return _make((((_Func(op, tuple(kept)),), 1),))


# --------------------------------------------------------------------------- rendering

def _render_name(name: str) -> str:
    return name if _is_identifier(name) else f"({name})"


def _render_operand(p: Terms) -> str:
    """A numerator for ``//`` or ``/``: bare when a single name or call, else parenthesised."""
    if len(p) == 1 and p[0][1] == 1 and len(p[0][0]) == 1:
        atom = p[0][0][0]
        if type(atom) is str:
            return _render_name(atom)
        if atom.op != _FLOOR or _is_ceil(atom):
            return _render_atom(atom, False)
    return f"({_render_terms(p)})"


def _is_ceil(atom: _Func) -> bool:
    # floor((s + k-1) / k) == ceil(s / k); the constant is the last term when present.
    m, c = atom.args[0][-1]
    return not m and c == atom.k - 1


def _render_atom(a: Any, wrap: bool) -> str:
    if type(a) is str:
        return _render_name(a)
    if a.op == _FLOOR:
        if _is_ceil(a):
            return f"ceil({_render_operand(a.args[0][:-1])}/{a.k})"
        text = f"{_render_operand(a.args[0])}//{a.k}"
        return f"({text})" if wrap else text
    name = "min" if a.op == _MIN else "max"
    return f"{name}({','.join([_render_terms(p) for p in a.args])})"


def _render_terms(terms: Terms) -> str:
    if not terms:
        return "0"
    out: List[str] = []
    for m, c in terms:
        n = -c if c < 0 else c
        if not m:
            body = str(n)
        else:
            # Parenthesise "N//2" inside products and after a leading unary minus.
            wrap = len(m) > 1 or n != 1 or (c < 0 and not out)
            body = "*".join([_render_atom(a, wrap) for a in m])
            if n != 1:
                body = f"{n}*{body}"
        out.append("-" + body if c < 0 else ("+" + body if out else body))
    return "".join(out)


# --------------------------------------------------------------------------- evaluation

def _eval_terms(p: Terms, env: Mapping[str, int]) -> int:
    total = 0
    for m, c in p:
        for a in m:
            c *= _eval_atom(a, env)
        total += c
    return total


def _eval_atom(a: Any, env: Mapping[str, int]) -> int:
    if type(a) is str:
        return env[a]
    if a.op == _FLOOR:
        return _eval_terms(a.args[0], env) // a.k
    values = [_eval_terms(p, env) for p in a.args]
    return min(values) if a.op == _MIN else max(values)


def _collect_names(p: Terms, out: set) -> None:
    for m, _ in p:
        for a in m:
            if type(a) is str:
                out.add(a)
            else:
                for arg in a.args:
                    _collect_names(arg, out)


def _renamed_terms(p: Terms, names: Mapping[str, str]) -> Value:
    total: Value = 0
    for m, c in p:
        term: Value = c
        for a in m:
            term = term * _renamed_atom(a, names)
        total = total + term
    return total


def _renamed_atom(a: Any, names: Mapping[str, str]) -> Value:
    if type(a) is str:
        return Sym(names.get(a, a))
    if a.op == _FLOOR:
        return _renamed_terms(a.args[0], names) // a.k
    values = [_renamed_terms(p, names) for p in a.args]
    return Sym.min(*values) if a.op == _MIN else Sym.max(*values)


def _never_negative(terms: Terms) -> bool:
    """Whether a polynomial is non-negative for all non-negative symbol values, by its form."""
    for m, c in terms:
        if c < 0:
            return False
        for atom in m:
            if type(atom) is str:
                continue
            if atom.op == _FLOOR and atom.k <= 0:
                return False
            if not all(_never_negative(arg) for arg in atom.args):
                return False
    return True


def _rebuild(terms: Terms) -> Value:
    return _value(dict(terms))


# --------------------------------------------------------------------------- the public type

@final  # ``type(d) is Sym`` tells a Sym from an int
class Sym:
    """An immutable, hashable symbolic dimension; equal ones are the same object.

    ``Sym("N")`` is the plain symbol ``N`` (any non-empty string is accepted verbatim as an
    opaque name; use ``parse_dim`` to read expression text).  Combine with ``+ - * //`` and
    ``int``s or other ``Sym``s; ``Sym.min``/``Sym.max``/``ceildiv`` build the other forms.
    Results that are constant are returned as ``int``.
    """

    __slots__ = ("_terms", "_text", "name", "__weakref__")
    _terms: Terms
    _text: str  # set on first ``str()``
    #: The symbol's name when this is a plain symbol, else ``None``.
    name: Optional[str]

    def __new__(cls, name: str) -> "Sym":
        ref = _name_refs(name)
        if ref is not None:
            s = ref()
            if s is not None:
                return s
        if type(name) is not str or not name:
            raise ValueError(f"a symbol name must be a non-empty string, got {name!r}")
        # Models may hold 10^5 distinct names, so a plain symbol is cheap to make: its terms
        # are built on first use (``__getattr__``).
        s = _new(Sym)
        _set_name(s, name)
        _set_text(s, name)
        return _NAMES.add(name, s)

    # -- construction from text and from other values

    @staticmethod
    def min(*dims: Value) -> Value:
        """``min`` of ints and ``Sym``s, flattened and simplified."""
        if all(type(d) is int for d in dims):
            return min(cast(Tuple[int, ...], dims))
        return _min_max(_MIN, dims)

    @staticmethod
    def max(*dims: Value) -> Value:
        """``max`` of ints and ``Sym``s, flattened and simplified."""
        if all(type(d) is int for d in dims):
            return max(cast(Tuple[int, ...], dims))
        return _min_max(_MAX, dims)

    # -- inspection

    @property
    def is_symbol(self) -> bool:
        """True for a plain (possibly opaque) named symbol, False for a compound expression."""
        return self.name is not None

    @property
    def single_term(self) -> bool:
        """True for one term: a symbol, or symbols (floors, mins, maxes) multiplied together and by a
        constant (``N``, ``2*N*M``); False for a sum (``N+1``)."""
        return self.name is not None or len(self._terms) == 1

    def names(self) -> FrozenSet[str]:
        """All symbol names the expression mentions."""
        out: set = set()
        _collect_names(self._terms, out)
        return frozenset(out)

    def evaluate(self, bindings: Mapping[str, int]) -> int:
        """The integer value with every symbol bound (``KeyError`` for a missing name)."""
        return _eval_terms(self._terms, bindings)

    def renamed(self, names: Mapping[str, str]) -> Value:
        """The expression with every symbol that ``names`` maps replaced by the symbol it maps to
        (brought to normal form again: the order of terms follows the names)."""
        if self.name is not None:
            new = names.get(self.name)
            return self if new is None else Sym(new)
        if names.keys().isdisjoint(self.names()):
            return self
        return _renamed_terms(self._terms, names)

    # -- division helpers

    def floordiv(self, divisor: Value) -> Value:
        """``floor(self / divisor)``; same as ``self // divisor``."""
        return self // divisor

    def ceildiv(self, divisor: Value) -> Value:
        """``ceil(self / divisor)``: a non-zero int, or a ``Sym`` that divides exactly."""
        if type(divisor) is Sym:
            return self // divisor
        k = int(divisor)
        if k > 0:
            return _value(_floordiv(_add(self._terms, (((), k - 1),)).items(), k))
        if k < 0:  # ceil(p / -k) == -floor(p / k)
            return -(self // -k)
        raise ZeroDivisionError(f"cannot divide {self} by 0")

    def exact_div(self, divisor: Value) -> Optional[Value]:
        """``self / divisor`` when the quotient is a known exact expression, else ``None``."""
        q = _as_terms(divisor)
        if not q:
            return None
        d = _exact_div(self._terms, q)
        return None if d is None else _value(d)

    @property
    def constant(self) -> int:
        """The constant term (``-1`` for ``N-1``, ``0`` for ``2*N``)."""
        for m, c in self._terms:
            if not m:
                return c
        return 0

    @property
    def never_negative(self) -> bool:
        """True when no non-negative values of the symbols make the expression negative: a sum,
        with positive coefficients, of products of symbols, floors of such expressions by
        positive divisors, and their mins and maxes (``N-1`` and ``N-S`` may be negative)."""
        return _never_negative(self._terms)

    def remainder(self, k: int) -> Optional[int]:
        """``self mod k`` (``k > 0``) when it does not depend on the symbols, else ``None``."""
        const = 0
        for m, c in self._terms:
            if not m:
                const = c
            elif c % k:
                return None
        return const % k

    # -- arithmetic: a constant added to or subtracted from a Sym leaves a Sym (never a constant)

    @overload
    def __add__(self, other: int) -> "Sym": ...
    @overload
    def __add__(self, other: "Sym") -> Value: ...
    def __add__(self, other: Any) -> Value:
        if type(other) is int:
            return _add_const(self._terms, other) if other else self
        q = _as_terms(other)
        if q is None:
            return NotImplemented
        return _value(_add(self._terms, q))

    __radd__ = __add__

    @overload
    def __sub__(self, other: int) -> "Sym": ...
    @overload
    def __sub__(self, other: "Sym") -> Value: ...
    def __sub__(self, other: Any) -> Value:
        if type(other) is int:
            return _add_const(self._terms, -other) if other else self
        q = _as_terms(other)
        if q is None:
            return NotImplemented
        return _value(_add(self._terms, q, -1))

    @overload
    def __rsub__(self, other: int) -> "Sym": ...
    @overload
    def __rsub__(self, other: "Sym") -> Value: ...
    def __rsub__(self, other: Any) -> Value:
        q = _as_terms(other)
        if q is None:
            return NotImplemented
        return _value(_add(q, self._terms, -1))

    def __mul__(self, other: Any) -> Value:
        if type(other) is int:
            if other > 0:  # scaling by a positive constant keeps the canonical order
                if other == 1:
                    return self
                return _make(tuple([(m, c * other) for m, c in self._terms]))
            return _value({m: c * other for m, c in self._terms})
        q = _as_terms(other)
        if q is None:
            return NotImplemented
        return _value(_mul(self._terms, q))

    __rmul__ = __mul__

    def __neg__(self) -> Value:
        return _value({m: -c for m, c in self._terms})

    def __pos__(self) -> "Sym":
        return self

    def __floordiv__(self, other: Any) -> Value:
        if type(other) is Sym:
            q = self.exact_div(other)
            if q is None:
                raise ShapeError(f"cannot represent {self}//{other} exactly")
            return q
        if _as_terms(other) is None:
            return NotImplemented
        k = int(other)
        if k > 0:
            return _value(_floordiv(self._terms, k))
        if k < 0:  # floor(p / -k) == -ceil(p / k)
            return -self.ceildiv(-k)
        raise ZeroDivisionError(f"cannot divide {self} by 0")

    def __rfloordiv__(self, other: Any) -> Value:
        if _as_terms(other) is None:
            return NotImplemented
        if other == 0:
            return 0
        raise ShapeError(f"cannot represent {other}//{self} exactly")

    # -- value semantics: equal values are one object (interned), so ``==`` and ``hash`` are
    # object identity's, inherited

    def __str__(self) -> str:
        try:
            return self._text
        except AttributeError:
            name = self.name
            text = name if name is not None else _render_terms(self._terms)
            _set(self, "_text", text)
            return text

    def __repr__(self) -> str:
        return f"Sym({str(self)!r})"

    def __getattr__(self, attribute: str) -> Any:
        # Only a plain symbol's terms are ever unset (see ``__new__``).
        name = object.__getattribute__(self, "name")
        if attribute != "_terms" or name is None:
            raise AttributeError(attribute)
        terms = (((name,), 1),)
        _set(self, "_terms", terms)
        return terms

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Sym is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("Sym is immutable")

    def __reduce__(self) -> tuple:
        # rebuilt through the constructors, so an unpickled value is the live one of its value
        return (Sym, (self.name,)) if self.name is not None else (_rebuild, (self._terms,))

    def __copy__(self) -> "Sym":
        return self

    def __deepcopy__(self, memo: dict) -> "Sym":
        return self


# Slot setters of a plain symbol's fields (faster than ``object.__setattr__``).
_set_name = Sym.__dict__["name"].__set__
_set_text = Sym.__dict__["_text"].__set__


def plain_symbols(names: List[str]) -> List[Sym]:
    """``[Sym(name) for name in names]`` for many distinct non-empty names at once, made in
    C-level loops: a model may declare 10^5 distinct names, and a Python call per name would
    cost more than reading them."""
    refs = list(map(_name_refs, names))
    known: List[Optional[Sym]] = [None] * len(names)
    if any(refs):
        known = [None if ref is None else ref() for ref in refs]
    if None not in known:
        return cast(List[Sym], known)
    new = names if not any(known) else [name for name, sym in zip(names, known) if sym is None]
    if not all(map(str.__len__, new)):
        raise ValueError("a symbol name must be a non-empty string")
    made = list(map(_new, repeat(Sym, len(new))))
    deque(map(_set_name, made, new), 0)
    deque(map(_set_text, made, new), 0)
    made = _NAMES.add_many(new, made)
    if new is names:
        return made
    fresh = iter(made)
    return [next(fresh) if sym is None else sym for sym in known]
