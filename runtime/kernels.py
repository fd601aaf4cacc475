"""onnxruntime's kernels, per execution provider, as data (no onnxruntime needed).

``kernels("Add", 14)`` lists the CPU kernels that serve ``Add`` in opset 14 of the default
domain, each with the types its type parameters accept. The tables are generated from
``opdefs/onnxruntime/kernels/`` into ``opspec.generated.onnxruntime.kernels``.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

#: The module the tables are generated into.
TABLES_MODULE = "opspec.generated.onnxruntime.kernels"
#: The domain names the tables use for the default domain.
DEFAULT_DOMAIN = "ai.onnx"


@dataclass(frozen=True)
class Kernel:
    """One registered kernel: the op versions it serves and, per type parameter, the types it accepts
    (a parameter it does not name is not checked by the runtime)."""

    provider: str
    domain: str
    op: str
    since: int
    until: int | None
    types: tuple[tuple[str, frozenset[str]], ...]

    def serves(self, since_version: int) -> bool:
        """Whether the kernel serves the op version whose schema starts at ``since_version``: as
        onnxruntime matches them, a kernel whose range has no end serves only its first version."""
        if self.since == since_version:
            return True
        return self.until is not None and self.since < since_version <= self.until

    def accepted(self, param: str) -> frozenset[str] | None:
        """The types accepted for ``param`` (None: the kernel does not constrain it)."""
        for name, allowed in self.types:
            if name == param:
                return allowed
        return None

    def accepts(self, bound: Mapping[str, str]) -> bool:
        """Whether every type in ``bound`` (type parameter to type string) is accepted."""
        return all((allowed := self.accepted(param)) is None or found in allowed for param, found in bound.items())


@dataclass(frozen=True)
class Refusal:
    """A kernel registered for a node that still refuses it: for the op versions in range, a node whose
    types bind each named type parameter to one of ``types``, whose attributes (the schema's
    default when unset; None when neither) take one of ``attributes``' values, and which gives an
    attribute of ``unless`` a value outside its list, is refused, for the reason ``why``."""

    domain: str
    op: str
    since: int
    until: int | None
    types: tuple[tuple[str, frozenset[str]], ...]
    attributes: tuple[tuple[str, tuple[Any, ...]], ...]
    why: str
    unless: tuple[tuple[str, tuple[Any, ...]], ...] = ()

    def applies(self, bound: Mapping[str, str], attribute_value: Any) -> bool:
        """Whether the node with types ``bound`` and ``attribute_value(name)`` (the node's value, else the
        schema's default, else None) is refused; a type the node does not make known never matches."""
        return all(bound.get(param) in allowed for param, allowed in self.types) and \
            all(attribute_value(name) in values for name, values in self.attributes) and \
            (not self.unless or any(attribute_value(name) not in values for name, values in self.unless))


@dataclass(frozen=True)
class Call:
    """One op a built body calls: per type parameter of that op, where its values' types come from
    (type parameters of the calling node, or types); ``when``: the node's attribute values it needs."""

    op: str
    sources: tuple[tuple[str, tuple[str, ...]], ...]
    when: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    #: The called op's domain (empty: the calling node's).
    domain: str = ""


def _in_range(since: int, until: int | None, since_version: int) -> bool:
    return since <= since_version and (until is None or since_version <= until)


def _domain_name(domain: str) -> str:
    return DEFAULT_DOMAIN if domain in ("", "ai.onnx") else domain


@lru_cache(maxsize=None)
def _tables() -> Any:
    return importlib.import_module(TABLES_MODULE)


def providers() -> tuple[str, ...]:
    """The providers with a table (``cpu``, ...)."""
    return tuple(_tables().KERNELS)


def source(provider: str) -> str:
    """Where ``provider``'s table was read from."""
    return str(_tables().SOURCES[_provider(provider)])


def limits(provider: str = "cpu") -> tuple[int | None, dict[str, int]]:
    """The newest IR version (None: not stated) and, per domain, the newest opset ``provider``'s
    runtime loads."""
    ir_version, opsets = _tables().LIMITS[_provider(provider)]
    return ir_version, dict(opsets)


@lru_cache(maxsize=None)
def taken_types(provider: str = "cpu") -> frozenset[str]:
    """Every type some kernel of ``provider`` takes (a tensor type outside it, such as complex64 on
    onnxruntime's CPU provider, is one the runtime cannot hold at all)."""
    tables = _tables()
    used = {index for *_, types in tables.KERNELS[_provider(provider)] for _, index in types}
    return frozenset(found for index in used for found in tables.TYPE_LISTS[index])


def known_versions(op: str, domain: str = "", provider: str = "cpu") -> tuple[int, ...] | None:
    """The schema versions of ``op`` the runtime knows (empty: it does not know the op; None: the
    table does not say which schemas the runtime knows)."""
    known = _tables().SCHEMAS[_provider(provider)]
    if not known:
        return None
    return tuple(known.get((_domain_name(domain), op), ()))


def _provider(provider: str) -> str:
    if provider not in _tables().KERNELS:
        raise KeyError(f"no kernel table for provider {provider!r} (tables: {', '.join(providers())})")
    return provider


@lru_cache(maxsize=None)
def _by_op(provider: str) -> dict[tuple[str, str], tuple[Kernel, ...]]:
    tables = _tables()
    lists = [frozenset(allowed) for allowed in tables.TYPE_LISTS]
    found: dict[tuple[str, str], list[Kernel]] = {}
    for domain, op, since, until, types in tables.KERNELS[_provider(provider)]:
        kernel = Kernel(provider, domain, op, since, until, tuple((name, lists[index]) for name, index in types))
        found.setdefault((domain, op), []).append(kernel)
    return {key: tuple(items) for key, items in found.items()}


def all_kernels(op: str, domain: str = "", provider: str = "cpu") -> tuple[Kernel, ...]:
    """Every kernel ``provider`` registers for ``op`` of ``domain``, at any version."""
    return _by_op(provider).get((_domain_name(domain), op), ())


def kernels_for_since(op: str, since_version: int, domain: str = "", provider: str = "cpu") -> tuple[Kernel, ...]:
    """The kernels that serve the version of ``op`` whose schema starts at ``since_version``."""
    return tuple(kernel for kernel in all_kernels(op, domain, provider) if kernel.serves(since_version))


@lru_cache(maxsize=None)
def _refusals(provider: str) -> tuple[Refusal, ...]:
    return tuple(Refusal(domain, op, since, until, tuple((name, frozenset(types)) for name, types in kinds), attributes, why,
                         unless)
                 for domain, op, since, until, kinds, attributes, why, unless in _tables().REFUSALS.get(provider, ()))


def refusals(op: str, since_version: int, domain: str = "", provider: str = "cpu") -> tuple[Refusal, ...]:
    """The refusals of ``provider``'s kernels for the version of ``op`` starting at ``since_version``."""
    name = _domain_name(domain)
    return tuple(refusal for refusal in _refusals(_provider(provider))
                 if (refusal.domain, refusal.op) == (name, op) and _in_range(refusal.since, refusal.until, since_version))


def built_body_calls(op: str, since_version: int, domain: str = "", provider: str = "cpu") -> tuple[Call, ...] | None:
    """The ops the body onnx builds per node for this version of ``op`` calls, as ``provider``'s table
    states them (None: the table does not say)."""
    name = _domain_name(domain)
    for body_domain, body_op, since, until, calls in _tables().BUILT_BODIES.get(_provider(provider), ()):
        if (body_domain, body_op) == (name, op) and _in_range(since, until, since_version):
            return tuple(Call(called, sources, when, called_domain) for called, sources, when, called_domain in calls)
    return None


def kernels(op: str, version: int | None = None, domain: str = "", provider: str = "cpu") -> tuple[Kernel, ...]:
    """The kernels ``provider`` has for ``op`` in opset ``version`` of ``domain`` (None: the newest),
    resolved through onnxruntime's op set as a model importing that opset would be."""
    from opspec.runtime.defs import INFERENCE

    schema = INFERENCE.get_schema(op, version, domain)
    return kernels_for_since(op, schema.since_version, domain, provider)


__all__ = ["Call", "Kernel", "Refusal", "built_body_calls", "refusals", "all_kernels", "kernels", "kernels_for_since", "known_versions", "limits", "taken_types", "providers", "source"]
