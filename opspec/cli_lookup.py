"""How ``opspec show`` finds an operator: the standard set (with any ``--registry`` op sets)
first, then onnxruntime's layered over it, as inference uses both; and, when neither has it,
what the user may have meant."""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Iterable

from opspec.runtime.registry import Registry, SchemaError
from opspec.runtime.schema import OpSchema

#: Suggestions offered at most for a misspelt name.
_SUGGESTIONS = 3


@dataclass(frozen=True)
class Found:
    """A schema and the registry that holds it (its version history is that registry's)."""

    schema: OpSchema
    registry: Registry
    #: Whether only onnxruntime's op set has it (not the standard one).
    onnxruntime: bool


def find_schema(op: str, version: int | None, domain: str) -> Found:
    """``op`` at ``version`` (None: its newest) in ``domain``; :class:`SchemaError` with a
    did-you-mean when neither op set has it."""
    from opspec.runtime.defs import INFERENCE, REGISTRY

    try:
        return Found(REGISTRY.get_schema(op, version, domain), REGISTRY, False)
    except SchemaError:
        pass
    try:
        return Found(INFERENCE.get_schema(op, version, domain), INFERENCE, True)
    except SchemaError as error:
        raise SchemaError(_explained(INFERENCE, op, domain, str(error))) from None


def _explained(registry: Registry, op: str, domain: str, message: str) -> str:
    """``message`` (why ``registry`` has no ``op`` in ``domain``) with what may have been meant."""
    try:
        registry.canonical_domain(domain)
    except SchemaError:
        spellings = sorted({spelling for info in registry.domains()
                            for spelling in (info.name, info.node_domain, *info.aliases) if spelling})
        meant = close_matches(domain, spellings)
        known = ", ".join(repr(info.name) for info in registry.domains())
        hint = f"; did you mean {_either(meant)}?" if meant else ""
        return f"unknown domain {domain!r}{hint} (known: {known})"
    names = registry.op_names(domain)
    if op in names:
        return message  # a version it does not have: the message says which it has
    meant = close_matches(op, names)
    if meant and meant[0].lower() == op.lower():
        return f"{message}; did you mean {meant[0]!r}?"
    home = [info.name for info in registry.domains() if op.lower() in map(str.lower, registry.op_names(info.name))]
    if home:
        exact = next(name for name in registry.op_names(home[0]) if name.lower() == op.lower())
        where = " or ".join(f"--domain {name}" for name in home)
        return f"{message}; {exact} is in domain {_either(home)} ({where})"
    return f"{message}; did you mean {_either(meant)}?" if meant else message


def close_matches(word: str, candidates: Iterable[str]) -> list[str]:
    """The candidates closest to ``word``, ignoring case (one differing only in case first)."""
    by_lower: dict[str, str] = {}
    for candidate in candidates:
        by_lower.setdefault(candidate.lower(), candidate)
    close = difflib.get_close_matches(word.lower(), list(by_lower), n=_SUGGESTIONS, cutoff=0.6)
    return [by_lower[match] for match in close]


def _either(names: list[str]) -> str:
    quoted = [repr(name) for name in names]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


__all__ = ["Found", "close_matches", "find_schema"]
