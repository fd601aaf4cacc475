"""Schema lookup over generated registry packages, loaded lazily, one operator at a time.

A registry package (what ``opspec generate`` writes) is a Python package whose
``__init__`` holds only an index: its domains and, per operator, the module that builds
its schemas and their since-versions. Nothing is built until asked for; each answer is
cached, so a repeated lookup is one dictionary access.
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Mapping

from opspec.runtime.onnx_compat import onnx_bases
from opspec.runtime.schema import OpSchema


# onnx's class joins the bases at run time (when onnx is loaded first), out of a type checker's sight
class SchemaError(LookupError, *onnx_bases("onnx.defs", "SchemaError")):  # type: ignore[misc]
    """No schema matches a lookup (unknown domain, operator or version).

    A subclass of ``onnx.defs.SchemaError`` too when onnx was imported before opspec.
    """


class DomainInfo:
    """A domain's spellings and opset range, as the index records them."""

    __slots__ = ("name", "node_domain", "aliases", "opset_min", "opset_max", "package")

    def __init__(self, name: str, node_domain: str, aliases: tuple[str, ...], opset_min: int, opset_max: int,
                 package: str):
        self.name, self.node_domain, self.aliases = name, node_domain, aliases
        self.opset_min, self.opset_max, self.package = opset_min, opset_max, package

    def __repr__(self) -> str:
        return f"DomainInfo({self.name!r}, opset {self.opset_min}..{self.opset_max})"


class Registry:
    """Operators of one or more registry packages, looked up as ``onnx.defs`` does."""

    def __init__(self) -> None:
        self._domains: dict[str, DomainInfo] = {}  # by node_domain
        self._spellings: dict[str, str] = {}  # any accepted spelling -> node_domain
        # node_domain -> op -> (the modules that build its versions, since-versions)
        self._ops: dict[str, dict[str, tuple[tuple[str, ...], tuple[int, ...]]]] = {}
        self._packages: set[str] = set()
        #: Schemas given with their package instead of imported from its modules, by module name.
        self._given: dict[str, tuple[OpSchema, ...]] = {}
        self._loaded: dict[tuple[str, str], tuple[OpSchema, ...]] = {}
        self._cache: dict[tuple[str, int | str | None, str], OpSchema] = {}

    # -- building -------------------------------------------------------------------
    def add_package(self, index: ModuleType, schemas: Mapping[str, tuple[OpSchema, ...]] | None = None) -> None:
        """Add the domains and operators of a generated registry package.

        ``schemas`` gives the schemas of the package's op modules (by the module's name in
        ``index.OPS``) instead of importing them: an op set compiled in this process and not
        written out is added so, its index alone standing for the package.

        A domain entry marked ``extends`` adds versions to a domain that an earlier package
        registered (onnxruntime's extra schemas of the standard domain): an operator's
        versions from both packages form one history, and a version defined twice is an error.
        """
        if index.__name__ in self._packages:
            return  # this package is registered already
        self._given.update((f"{index.__name__}.{module}", found) for module, found in (schemas or {}).items())
        for entry in index.DOMAINS:
            fields = {key: value for key, value in entry.items() if key != "extends"}
            info = DomainInfo(package=index.__name__, **fields)
            ops: dict[str, tuple[tuple[str, ...], tuple[int, ...]]] = {
                op: ((f"{index.__name__}.{module}",), versions)
                for op, (module, versions) in index.OPS[info.name].items()}
            if entry.get("extends"):
                self._extend(info, ops)
                continue
            node_domain = info.node_domain
            claimed = next((self._spellings[s] for s in (node_domain, info.name, *info.aliases) if s in self._spellings),
                           None)
            if claimed is not None:
                raise SchemaError(f"domain {info.name!r} is already registered (from {self._domains[claimed].package}); "
                                  "an op set adds versions to it only when its domain.yaml says `extends: true`")
            self._domains[node_domain] = info
            for spelling in {info.name, node_domain, *info.aliases}:
                self._spellings[spelling] = node_domain
            self._ops[node_domain] = ops
        self._packages.add(index.__name__)
        self._cache.clear()
        rule_modules = getattr(index, "RULE_MODULES", ())
        if rule_modules:  # the op set's own rules (imported only when it has some)
            from opspec.runtime.rulebook import RULES

            for module in rule_modules:
                RULES.add_module(importlib.import_module(f"{index.__name__}.{module}"))

    def _extend(self, info: DomainInfo, ops: dict[str, tuple[tuple[str, ...], tuple[int, ...]]]) -> None:
        node_domain = self._spellings.get(info.node_domain)
        if node_domain is None:
            raise SchemaError(f"{info.package} extends domain {info.name!r}, which is not registered")
        mine = self._ops[node_domain]
        for op, (modules, versions) in ops.items():
            if op not in mine:
                mine[op] = (modules, versions)
                continue
            old_modules, old_versions = mine[op]
            if set(old_versions) & set(versions):
                raise SchemaError(f"{info.package} defines {op!r} version(s) "
                                  f"{sorted(set(old_versions) & set(versions))} of {info.name!r} again")
            mine[op] = (old_modules + modules, tuple(sorted(old_versions + versions)))
            self._loaded.pop((node_domain, op), None)

    # -- lookups ----------------------------------------------------------------------
    def get_schema(self, op_type: str, max_inclusive_version: int | str | None = None, domain: str = "") -> OpSchema:
        """The newest version of ``op_type`` whose since-version is at most the given one.

        As in onnx, ``get_schema(op_type, domain)`` (a string second) means the newest version.
        """
        try:
            return self._cache[op_type, max_inclusive_version, domain]
        except KeyError:
            pass
        schema = self._find(op_type, max_inclusive_version, domain)
        self._cache[op_type, max_inclusive_version, domain] = schema
        return schema

    def has_schema(self, op_type: str, max_inclusive_version: int | str | None = None, domain: str = "") -> bool:
        try:
            self.get_schema(op_type, max_inclusive_version, domain)
        except SchemaError:
            return False
        return True

    def schemas_of(self, op_type: str, domain: str = "") -> tuple[OpSchema, ...]:
        """Every version of one operator, oldest first."""
        node_domain, _ = self._entry(op_type, domain)
        return self._load(node_domain, op_type)

    def get_all_schemas(self) -> list[OpSchema]:
        """The newest version of every operator."""
        return [self._load(d, op)[-1] for d, op in self._every_op()]

    def get_all_schemas_with_history(self) -> list[OpSchema]:
        """Every version of every operator."""
        return [schema for d, op in self._every_op() for schema in self._load(d, op)]

    def get_function_ops(self) -> list[OpSchema]:
        """The newest version of every operator whose newest version has a function body.

        As in onnx, a body that exists only as code (context-dependent) counts too.
        """
        newest = self.get_all_schemas()
        return [s for s in newest if getattr(s, "has_function", False)
                or getattr(s, "has_context_dependent_function", False)]

    def canonical_domain(self, domain: str) -> str:
        """The node-domain spelling for any accepted spelling of a domain."""
        try:
            return self._spellings[domain]
        except KeyError:
            known = ", ".join(repr(info.name) for info in self._domains.values())
            raise SchemaError(f"unknown domain {domain!r} (known: {known})") from None

    def domain(self, domain: str) -> DomainInfo:
        return self._domains[self.canonical_domain(domain)]

    def domains(self) -> list[DomainInfo]:
        return list(self._domains.values())

    def domain_version_range(self, domain: str = "") -> tuple[int, int]:
        info = self.domain(domain)
        return info.opset_min, info.opset_max

    def schema_version_map(self) -> dict[str, tuple[int, int]]:
        """Opset range per domain, keyed as models spell domains (onnx's ``schema_version_map``)."""
        return {node_domain: (i.opset_min, i.opset_max) for node_domain, i in self._domains.items()}

    def op_names(self, domain: str = "") -> list[str]:
        return sorted(self._ops[self.canonical_domain(domain)])

    # -- internals --------------------------------------------------------------------
    def _every_op(self):  # -> Iterator[tuple[str, str]]
        for node_domain in sorted(self._ops):
            for op in sorted(self._ops[node_domain]):
                yield node_domain, op

    def _entry(self, op_type: str, domain: str) -> tuple[str, tuple[tuple[str, ...], tuple[int, ...]]]:
        """The canonical domain and the index entry (module, since-versions) of an operator."""
        node_domain = self.canonical_domain(domain)
        entry = self._ops[node_domain].get(op_type)
        if entry is None:
            raise SchemaError(f"no operator {op_type!r} in domain {self._domains[node_domain].name!r}")
        return node_domain, entry

    def _find(self, op_type: str, version: int | str | None, domain: str) -> OpSchema:
        if isinstance(version, str):  # onnx's other form: get_schema(op_type, domain)
            return self._find(op_type, None, version)
        node_domain, entry = self._entry(op_type, domain)
        if version is None:
            return self._load(node_domain, op_type)[-1]
        versions = entry[1]
        position = 0  # how many since-versions are <= version (lists are short: no bisect import)
        while position < len(versions) and versions[position] <= version:
            position += 1
        if position == 0:
            raise SchemaError(
                f"operator {op_type!r} has no version at or before {version} (its first is {versions[0]})"
            )
        return self._load(node_domain, op_type)[position - 1]

    def _load(self, node_domain: str, op_type: str) -> tuple[OpSchema, ...]:
        key = (node_domain, op_type)
        schemas = self._loaded.get(key)
        if schemas is None:
            modules = self._ops[node_domain][op_type][0]
            schemas = self._module_schemas(modules[0])
            if len(modules) > 1:  # a history spread over packages (an extended domain)
                found = [schema for module in modules for schema in self._module_schemas(module)]
                schemas = tuple(sorted(found, key=lambda schema: schema.since_version))
            self._loaded[key] = schemas
        return schemas

    def _module_schemas(self, module: str) -> tuple[OpSchema, ...]:
        """The schemas an op module holds: given with its package, else imported."""
        given = self._given.get(module)
        return given if given is not None else importlib.import_module(module).SCHEMAS
