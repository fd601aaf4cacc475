"""How one version of an operator relates to the version before it.

Each change between two resolved versions gets a class, and a version step gets the
most severe class among its changes:

``compatible``
    Every model valid for the old version is valid for the new one and means the same:
    a new optional input or output at the end, more types, a new optional attribute, a
    constraint or an arity relaxed, an input that was required becoming optional.
``narrowing``
    Some models valid before are now rejected, but every model still accepted means the
    same: types removed, an attribute removed, a value constraint added or tightened.
``breaking``
    A model valid before can be rejected for a new reason or can mean something else: an
    input or output removed, reordered or newly required, an attribute turned into an
    input, a new required attribute, an attribute's type or default changed, the
    operator deprecated.
``semantic``
    The signature is the same; only the meaning changed, as the version's notes say.

Changes that models cannot observe (the inference rule, differentiability) have no class.
"""
from __future__ import annotations

from collections.abc import Sequence

COMPATIBLE, NARROWING, BREAKING, SEMANTIC = "compatible", "narrowing", "breaking", "semantic"
#: Classes by severity; a step takes the most severe class of its changes.
SEVERITY = {COMPATIBLE: 0, NARROWING: 1, BREAKING: 2}


def step_class(classes: Sequence[str | None]) -> str:
    """The class of a version step from the classes of its changes (None: unobservable)."""
    observed = [c for c in classes if c is not None]
    if not observed:
        return SEMANTIC
    return max(observed, key=SEVERITY.__getitem__)


def widening(before: frozenset | tuple, after: frozenset | tuple) -> str:
    """``compatible`` when ``after`` keeps everything ``before`` allowed, else ``narrowing``."""
    return COMPATIBLE if set(before) <= set(after) else NARROWING


__all__ = ["BREAKING", "COMPATIBLE", "NARROWING", "SEMANTIC", "SEVERITY", "step_class", "widening"]
