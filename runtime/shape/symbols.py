"""``SymbolTable``: the dim_param names a graph already uses, and fresh names that avoid them."""
from __future__ import annotations

from typing import Callable, Iterable, Union

from .parse import is_name, parse_dim
from .sym import Sym

__all__ = ["SymbolTable"]


class SymbolTable:
    """Hands out symbol names (``unk__0``, ``unk__1``, ...) that clash with no name in use.

    Names are reserved from the constructor's iterable and by ``add``; for expression text such
    as ``"2*N"`` the symbols inside it (``N``) are reserved too. The iterable is read when a
    name is first asked about, so a model that never needs a fresh name never pays for it.
    ``taken``, when given, finds the names of the fresh form (its argument is the prefix) that
    the rest of a model uses: they are reserved before the first fresh name is handed out.
    """

    __slots__ = ("_used", "_prefix", "_next", "issued", "names_issued", "_unread", "_taken")

    def __init__(self, names: Iterable[str] = (), prefix: str = "unk__", *,
                 taken: Callable[[str], Iterable[str]] | None = None) -> None:
        self._used: set = set()
        self._prefix = prefix
        self._next = 0
        #: How many fresh names this table has handed out (a cheap "did anything new appear").
        self.issued = 0
        #: The fresh names handed out, in order (``names_issued[k:]`` came after ``issued`` was ``k``).
        self.names_issued: list[str] = []
        self._unread: Iterable[str] | None = names
        self._taken = taken

    def _read(self) -> set:
        """The names in use, the constructor's included."""
        unread, self._unread = self._unread, None
        if unread is not None:
            for name in unread:
                self.add(name)
        return self._used

    def _avoided(self) -> set:
        """The names a fresh name must not be: those in use and those ``taken`` finds."""
        used = self._read()
        taken, self._taken = self._taken, None
        if taken is not None:
            for name in taken(self._prefix):
                self.add(name)
        return used

    def add(self, name: Union[str, Sym]) -> None:
        """Reserve a dim_param text (or every name in a ``Sym``)."""
        if type(name) is Sym:
            self._used.add(str(name))
            self._used.update(name.names())
            return
        self._used.add(name)
        if is_name(name):  # a plain name holds no other names: no need to parse it
            return
        parsed = parse_dim(name)
        if type(parsed) is Sym and parsed.name != name:
            self._used.update(parsed.names())

    def __contains__(self, name: object) -> bool:
        return name in self._read()

    def __len__(self) -> int:
        return len(self._read())

    def fresh_name(self) -> str:
        """A new name, reserved so it is never handed out or accepted again."""
        used, prefix, i = self._avoided(), self._prefix, self._next
        name = f"{prefix}{i}"
        while name in used:
            i += 1
            name = f"{prefix}{i}"
        used.add(name)
        self._next = i + 1
        self.issued += 1
        self.names_issued.append(name)
        return name

    def fresh_names(self, count: int) -> list[str]:
        """``count`` new names, the ones ``count`` calls of :meth:`fresh_name` give, made
        together (a shape may have 10^5 dims to name)."""
        if count <= 1:
            return [self.fresh_name()] if count == 1 else []
        used, prefix, i = self._avoided(), self._prefix, self._next
        names: list[str] = []
        while len(names) < count:
            wanted = count - len(names)
            candidates = list(map(prefix.__add__, map(str, range(i, i + wanted))))
            i += wanted
            names += candidates if used.isdisjoint(candidates) else [name for name in candidates if name not in used]
        used.update(names)
        self._next = i
        self.issued += count
        self.names_issued += names
        return names

    def fresh(self) -> Sym:
        """A new plain symbol (see ``fresh_name``)."""
        return Sym(self.fresh_name())
