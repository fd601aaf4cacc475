"""``InternTable``: the one live object for each key, held weakly, so equal values can be one object.

A symbol or expression made twice is the same object, so it hashes and compares by identity
(in C, at no cost). Objects no one else holds are dropped; their entries are swept out once
the table has doubled since the last sweep, so its size stays within twice what is alive.
Lookups take no lock; adding takes one, so two threads making the same value get one object.
"""
from __future__ import annotations

import threading
import weakref
from typing import Any, Dict, Generic, Hashable, List, Optional, Sequence, TypeVar

__all__ = ["InternTable"]

Value = TypeVar("Value")

#: Entries a table holds before its first sweep.
_FIRST_SWEEP = 4096


class InternTable(Generic[Value]):
    """Key -> the one live value made for it (values must accept weak references)."""

    __slots__ = ("refs", "_lock", "_sweep_at")

    def __init__(self) -> None:
        #: Key -> weak reference to its value; read it directly (``refs.get(key)``, then call the
        #: reference) where a method call per lookup would cost too much.
        self.refs: Dict[Hashable, "weakref.ref[Any]"] = {}
        self._lock = threading.Lock()
        self._sweep_at = _FIRST_SWEEP

    def get(self, key: Hashable) -> Optional[Value]:
        """The live value of ``key``, or None."""
        ref = self.refs.get(key)
        return None if ref is None else ref()

    def add(self, key: Hashable, value: Value) -> Value:
        """``value`` as the value of ``key``, unless another live one got there first: that one."""
        with self._lock:
            value = self._add_locked(key, value)
            if len(self.refs) > self._sweep_at:
                self._sweep()
        return value

    def add_many(self, keys: Sequence[Hashable], values: List[Value]) -> List[Value]:
        """``add`` for many keys not in the table (distinct), in C-level loops; each key's value."""
        refs = self.refs
        with self._lock:
            current = list(filter(None, map(refs.get, keys)))  # (a reference is true, dead or alive)
            if not current or all([ref() is None for ref in current]):  # the common case: none live
                refs.update(zip(keys, map(weakref.ref, values)))
            else:  # another thread made some meanwhile
                values = [self._add_locked(key, value) for key, value in zip(keys, values)]
            if len(refs) > self._sweep_at:
                self._sweep()
        return values

    def _add_locked(self, key: Hashable, value: Value) -> Value:
        ref = self.refs.get(key)
        found = None if ref is None else ref()
        if found is not None:
            return found
        self.refs[key] = weakref.ref(value)
        return value

    def _sweep(self) -> None:
        """Drop entries whose value is gone (under the lock: a dead reference never revives)."""
        refs = self.refs
        for key in [key for key, ref in refs.items() if ref() is None]:
            del refs[key]
        self._sweep_at = max(_FIRST_SWEEP, 2 * len(refs))

    def __len__(self) -> int:
        return len(self.refs)
