"""Answers worked out once per object: a page and its neighbours ask the same questions of the
same schema objects (a version step's conversion notes, an attribute's constraint text).

Kept by identity, not equality: equal values may still read differently (``1`` and ``1.0``,
``True`` and ``1``). The objects are kept with the answer, so an id stays theirs.
"""
from __future__ import annotations

import functools
from operator import is_
from typing import Any, Callable, TypeVar, cast

Function = TypeVar("Function", bound=Callable[..., Any])


def by_identity(size: int) -> Callable[[Function], Function]:
    """Keep the answers of a function of objects for the objects it was given, at most ``size``
    of them (then it starts afresh)."""

    def wrap(function: Function) -> Function:
        kept: dict[tuple[int, ...], tuple[tuple[Any, ...], Any]] = {}

        @functools.wraps(function)
        def remembered(*args: Any) -> Any:
            key = tuple(map(id, args))
            found = kept.get(key)
            if found is not None and all(map(is_, found[0], args)):
                return found[1]
            if len(kept) >= size:
                kept.clear()
            answer = function(*args)
            kept[key] = (args, answer)
            return answer

        return cast(Function, remembered)

    return wrap


__all__ = ["by_identity"]
