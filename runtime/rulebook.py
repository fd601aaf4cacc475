"""The rule registry: which function implements each rule name.

Built-in rules are the functions declared with :func:`~opspec.runtime.contract.rule` in
the modules of :mod:`opspec.runtime.rules`, found on first use; a registered op set adds
the rule modules that ``opspec generate`` copied into its package. The engine asks this
registry, never the rule modules themselves.
"""
from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType
from typing import Callable, Iterator

from opspec.runtime.constraints import enforcing
from opspec.runtime.contract.declare import SPEC_ATTRIBUTE, RuleSpec


class RuleConflict(LookupError):
    """Two implementations declare one rule name."""


def declared_rules(module: ModuleType) -> Iterator[tuple[RuleSpec, Callable]]:
    """The rules a module declares, in definition order."""
    for value in vars(module).values():
        spec = getattr(value, SPEC_ATTRIBUTE, None)
        if isinstance(spec, RuleSpec) and getattr(value, "__module__", None) == module.__name__:
            yield spec, value


class RuleBook:
    """Rule implementations by name, with the module that declared each."""

    def __init__(self) -> None:
        self._rules: dict[str, tuple[RuleSpec, Callable, str]] = {}
        self._builtins_loaded = False

    def add_module(self, module: ModuleType) -> list[str]:
        """Add every rule ``module`` declares; :class:`RuleConflict` when a name is taken."""
        self._load_builtins()
        found = list(declared_rules(module))
        for spec, _ in found:
            known = self._rules.get(spec.name)
            if known is not None and known[2] != module.__name__:
                raise RuleConflict(f"rule {spec.name!r} of {module.__name__} is already declared by {known[2]}")
        for spec, function in found:
            self._rules[spec.name] = (spec, enforcing(function), module.__name__)
        return [spec.name for spec, _ in found]

    def lookup(self, name: str) -> Callable | None:
        """The implementation of rule ``name``, behind the check of the node's attribute
        constraints; None when no module declares it."""
        self._load_builtins()
        entry = self._rules.get(name)
        return entry[1] if entry is not None else None

    def spec(self, name: str) -> RuleSpec | None:
        """The declaration of rule ``name``, or None."""
        self._load_builtins()
        entry = self._rules.get(name)
        return entry[0] if entry is not None else None

    def specs(self) -> dict[str, RuleSpec]:
        """Every known rule's declaration, by name."""
        self._load_builtins()
        return {name: entry[0] for name, entry in sorted(self._rules.items())}

    def _load_builtins(self) -> None:
        if self._builtins_loaded:
            return
        self._builtins_loaded = True
        package = importlib.import_module("opspec.runtime.rules")
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
            if not info.name.startswith("_"):
                self.add_module(importlib.import_module(f"{package.__name__}.{info.name}"))


#: The process-wide rule registry (built-in rules plus those of registered op sets).
RULES = RuleBook()
