"""The compiler's front half: an opdefs tree in, resolved schemas out (or every error)."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from opspec.codegen.diagnostics import CompileError, Diagnostic, Diagnostics
from opspec.codegen.load import Tree, load_tree
from opspec.codegen.model import DomainDecl, OpDecl
from opspec.codegen.placeholders import domain_placeholder_warnings, placeholder_warnings
from opspec.codegen.source import Location
from opspec.codegen.resolve import resolve_op
from opspec.codegen.type_sets import TypeSets
from opspec.codegen.version_extras import read_version_extras
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
class CompiledDomain:
    decl: DomainDecl
    ops: tuple[CompiledOp, ...]

    @property
    def schema_count(self) -> int:
        return sum(len(op.schemas) for op in self.ops)


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
    tree = load_tree(root, diagnostics)
    read_version_extras(tree, diagnostics)
    domains = _resolve(tree, diagnostics)
    if diagnostics:
        raise CompileError(diagnostics.sorted())
    warnings = []
    for domain in domains:
        warnings += domain_placeholder_warnings(domain.decl)
        for op in domain.ops:
            warnings += placeholder_warnings(op.decl, op.schemas)
    for warning in sorted(warnings):
        warn(warning)
    return domains


def _resolve(tree: Tree, diagnostics: Diagnostics) -> tuple[CompiledDomain, ...]:
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
        ops[op.name] = CompiledOp(op, tuple(resolve_op(op, domain, type_sets, diagnostics)))
    _check_aliases(tree, diagnostics)
    return tuple(
        CompiledDomain(tree.domains[name], tuple(sorted(ops.values(), key=lambda o: o.decl.name)))
        for name, ops in sorted(by_domain.items())
    )


def _check_aliases(tree: Tree, diagnostics: Diagnostics) -> None:
    owners: dict[str, str] = {}
    for domain in tree.domains.values():
        for spelling in {domain.name, domain.node_domain, *domain.aliases}:
            if spelling in owners and owners[spelling] != domain.name:
                diagnostics.error(
                    domain.location, f"domain spelling {spelling!r} is claimed by both {owners[spelling]!r} and {domain.name!r}"
                )
            owners[spelling] = domain.name
