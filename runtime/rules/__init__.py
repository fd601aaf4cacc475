"""Inference rules: small functions over an :class:`InferenceContext`, referenced by name.

The names and parameters live in :mod:`opspec.runtime.rules.catalog`; each family
module registers its implementations with :func:`implements`. :func:`lookup` returns a
rule by name, importing the family modules on first use.
"""
from __future__ import annotations

import importlib

from opspec.runtime.rules.catalog import RULES

#: Family modules, imported once on the first lookup.
FAMILIES = ("elementwise", "reduction", "linalg", "generators", "shape_ops", "nn")

_IMPLEMENTATIONS: dict = {}
_loaded = False


def implements(name: str):
    """Register the decorated function as the implementation of catalog rule ``name``."""
    if name not in RULES:
        raise KeyError(f"rule {name!r} is not in the catalog")

    def register(function):
        if name in _IMPLEMENTATIONS:
            raise KeyError(f"rule {name!r} is implemented twice")
        _IMPLEMENTATIONS[name] = function
        return function

    return register


def _load_families() -> None:
    global _loaded
    if not _loaded:
        for family in FAMILIES:
            importlib.import_module(f"{__name__}.{family}")
        _loaded = True


def lookup(name: str):
    """The implementation of rule ``name`` (KeyError when there is none)."""
    _load_families()
    return _IMPLEMENTATIONS[name]


def implemented() -> dict:
    """Every implemented rule, by name."""
    _load_families()
    return dict(_IMPLEMENTATIONS)


def bound_args(schema_rule) -> dict:
    """A rule reference's arguments with the catalog's defaults filled in."""
    spec = RULES[schema_rule.name]
    args = {param.name: param.default for param in spec.params}
    args.update(schema_rule.args)
    return args
