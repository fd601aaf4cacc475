"""The op set an engine answers from: where operators are looked up and which rules run them.

Inference, the checker, the converter, the docs' examples and the rule-test helper take an
:class:`OpSet` (``op_set=None`` meaning :func:`installed_op_set`), so that a second op set (a
tree being generated, a test's own) is handed to them rather than planted in a global.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from opspec.runtime.registry import Registry
from opspec.runtime.rulebook import RuleBook


class SchemaCache:
    """What the engine derives from one schema (its rule's arguments, its output-type binding
    plans), kept across calls. Keyed by the schema object itself (held, so that its identity stays
    its own): a schema registered later is another object and gets its own entry; the engine
    checks that a kept entry's rule is still the one the rules give."""

    __slots__ = ("_by_schema",)

    def __init__(self) -> None:
        self._by_schema: dict[int, tuple[object, Any]] = {}

    def get(self, schema: object) -> Any:
        """What was kept for ``schema``, or None."""
        found = self._by_schema.get(id(schema))
        return found[1] if found is not None and found[0] is schema else None

    def put(self, schema: object, value: Any) -> None:
        """Keep ``value`` for ``schema``."""
        self._by_schema[id(schema)] = (schema, value)


@dataclass(frozen=True)
class OpSet:
    """Schemas by domain, op and version (``registry``) and the rule implementations (``rules``).

    ``implied_domains`` are the domains whose nodes onnxruntime runs without an opset import
    (its own, not the standard ones): inference takes them at their newest version.
    """

    registry: Registry
    rules: RuleBook
    implied_domains: frozenset[str] = field(default=frozenset())
    #: Per schema, what inference derives from it (not part of the op set's value).
    schema_cache: SchemaCache = field(default_factory=SchemaCache, compare=False, repr=False)


def implied_domains(registry: Registry, standard: Registry) -> frozenset[str]:
    """The node domains ``registry`` has beyond those of ``standard``."""
    return frozenset(info.node_domain for info in registry.domains()) - frozenset(
        info.node_domain for info in standard.domains())


@cache
def installed_op_set() -> OpSet:
    """The installed op set: the standard operators, onnxruntime's and every registered package's,
    with the built-in rules and the registered ones (both grow with :func:`opspec.register`)."""
    from opspec.runtime import defs
    from opspec.runtime.rulebook import RULES

    inference = defs.INFERENCE
    return OpSet(inference, RULES, implied_domains(inference, defs.REGISTRY))


@cache
def standard_op_set() -> OpSet:
    """The standard operators and every registered package's (``opspec.defs``), without onnxruntime's."""
    from opspec.runtime import defs
    from opspec.runtime.rulebook import RULES

    return OpSet(defs.REGISTRY, RULES)


def op_set_or_installed(op_set: OpSet | None) -> OpSet:
    """``op_set``, or the installed one when None."""
    return installed_op_set() if op_set is None else op_set


__all__ = ["OpSet", "SchemaCache", "implied_domains", "installed_op_set", "op_set_or_installed", "standard_op_set"]
