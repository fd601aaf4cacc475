"""The compiler's front half: an opdefs tree in, resolved schemas out (or every error)."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Callable

from opspec.codegen.diagnostics import CompileError, Diagnostic, Diagnostics
from opspec.codegen.error_cap import cap
from opspec.codegen.history import change_class
from opspec.codegen.load import Tree, load_tree
from opspec.codegen.model import DomainDecl, OpDecl
from opspec.codegen.placeholders import domain_placeholder_warnings, placeholder_warnings
from opspec.codegen.source import Location
from opspec.codegen.resolve import resolve_op
from opspec.codegen.type_sets import TypeSets
from opspec.codegen.version_extras import read_version_extras
from opspec.codegen.rule_specs import RULES_FOLDER, DeclaredRule, read_catalogue, rule_modules
from opspec.codegen.vocabulary import inherited_types
from opspec.runtime.schema import OpSchema


@dataclass(frozen=True)
class CompiledOp:
    """One operator: where it came from and its resolved versions, oldest first."""

    decl: OpDecl
    schemas: tuple[OpSchema, ...]

    @property
    def versions(self) -> tuple[int, ...]:
        return tuple(schema.since_version for schema in self.schemas)

    @property
    def latest(self) -> OpSchema:
        return self.schemas[-1]


@dataclass(frozen=True)
class RuleCatalogue:
    """The rules a tree may reference: built-in and its own, and its own rule modules' text."""

    rules: dict[str, DeclaredRule]
    modules: tuple[tuple[str, str], ...] = ()  # (file name, source) of the tree's rule modules


@dataclass(frozen=True)
class CompiledDomain:
    decl: DomainDecl
    ops: tuple[CompiledOp, ...]
    catalogue: RuleCatalogue = RuleCatalogue({})
    #: The tree's named type sets, expanded: ``((name, type strings), ...)``.
    type_sets: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def schema_count(self) -> int:
        return sum(len(op.schemas) for op in self.ops)

    @cached_property
    def ops_by_name(self) -> dict[str, CompiledOp]:
        """The domain's ops by name (built once, on first use)."""
        return {op.decl.name: op for op in self.ops}


def print_warning(diagnostic: Diagnostic) -> None:
    """The default way warnings reach a person: one located line on stderr."""
    print(diagnostic, file=sys.stderr)


def compile_tree(root: Path, warn: Callable[[Diagnostic], None] = print_warning) -> tuple[CompiledDomain, ...]:
    """Load, validate and resolve ``root``; raise :class:`CompileError` listing every problem.

    Warnings (text still to be written) go to ``warn`` once the tree has no errors.
    """
    diagnostics = Diagnostics()
    if not root.is_dir():
        raise CompileError([Diagnostic(Location(str(root), 1, 1), "opdefs folder not found")])
    tree = load_tree(root, diagnostics, inherited_types(root))
    read_version_extras(tree, diagnostics)
    catalogue = _catalogue(root, diagnostics)
    domains = _resolve(tree, catalogue, diagnostics)
    if diagnostics:
        raise CompileError(diagnostics.sorted())
    warnings = []
    for domain in domains:
        warnings += domain_placeholder_warnings(domain.decl)
        for op in domain.ops:
            warnings += placeholder_warnings(op.decl, op.schemas)
    capped = cap(sorted(warnings))  # as errors are: a tree with 10^5 gaps is not 10^5 lines
    for warning in capped.shown:
        warn(warning)
    if capped.omitted:
        warn(Diagnostic(Location(str(root), 1, 1), f"{capped.omitted} more warning{'s' if capped.omitted != 1 else ''} "
                        "not shown (text still to be written)", "warning"))
    return domains


def _catalogue(root: Path, diagnostics: Diagnostics) -> RuleCatalogue:
    folder = root / RULES_FOLDER
    base = root.parent
    rules = read_catalogue(folder, diagnostics, lambda path: path.relative_to(base).as_posix())
    modules = []
    for path in rule_modules(folder):
        try:
            modules.append((path.name, path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            pass  # already reported by the catalogue reader
    return RuleCatalogue(rules, tuple(modules))


def _resolve(tree: Tree, catalogue: RuleCatalogue, diagnostics: Diagnostics) -> tuple[CompiledDomain, ...]:
    type_sets = TypeSets(tree.type_sets, diagnostics)
    by_domain: dict[str, dict[str, CompiledOp]] = {name: {} for name in tree.domains}
    for op in tree.ops:
        stem = Path(op.path).stem
        if stem != op.name:
            diagnostics.error(op.location, f"op {op.name!r} must live in a file named {op.name}.yaml, not {stem}.yaml")
        ops = by_domain[op.domain]
        if op.name in ops:
            diagnostics.error(op.location, f"op {op.name!r} is already defined in {ops[op.name].decl.path}")
            continue
        domain = tree.domains[op.domain]
        ops[op.name] = CompiledOp(op, _with_change_classes(resolve_op(op, domain, type_sets, diagnostics,
                                                                      catalogue.rules)))
    _check_aliases(tree, diagnostics)
    named = tuple((name, type_sets.expand(name, decl.location)) for name, decl in sorted(tree.type_sets.items()))
    return tuple(
        CompiledDomain(tree.domains[name], tuple(sorted(ops.values(), key=lambda o: o.decl.name)), catalogue,
                       named)
        for name, ops in sorted(by_domain.items())
    )


def _with_change_classes(schemas: list[OpSchema]) -> tuple[OpSchema, ...]:
    """Each version marked with how it relates to the one before (see codegen.change_class)."""
    marked, previous = [], None
    for schema in schemas:
        marked.append(schema._replace(change_class=change_class(previous, schema)))
        previous = schema
    return tuple(marked)


def _check_aliases(tree: Tree, diagnostics: Diagnostics) -> None:
    owners: dict[str, str] = {}
    for domain in tree.domains.values():
        for spelling in {domain.name, domain.node_domain, *domain.aliases}:
            if spelling in owners and owners[spelling] != domain.name:
                diagnostics.error(
                    domain.location, f"domain spelling {spelling!r} is claimed by both {owners[spelling]!r} and {domain.name!r}"
                )
            owners[spelling] = domain.name
