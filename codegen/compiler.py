"""The compiler's front half: an opdefs tree in, resolved schemas out (or every error)."""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Callable, NamedTuple, Sequence

from opspec.codegen.diagnostics import CompileError, Diagnostic, Diagnostics
from opspec.codegen.error_cap import cap
from opspec.codegen.history import change_class
from opspec.codegen.load import OpFile, Tree, plan_tree, read_op_file
from opspec.codegen.model import DomainDecl, OpDecl
from opspec.codegen.placeholders import domain_placeholder_warnings, placeholder_warnings
from opspec.codegen.source import Location
from opspec.codegen.resolve import resolve_op
from opspec.codegen.parallel import forked_map
from opspec.codegen.type_sets import TypeSets
from opspec.codegen.version_extras import read_op_extras
from opspec.codegen.shown_paths import Namer
from opspec.codegen.rule_specs import (RULES_FOLDER, BuiltinRules, DeclaredRule, read_builtin_rules, read_catalogue,
                                      remember_builtin_rules, rule_modules, unread_builtin_rules)
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
    #: The rules folder as errors name it.
    folder: str = ""


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
    return compile_trees([root])[0].domains_or_raise(warn)


@dataclass(frozen=True)
class Outcome:
    """One compiled tree: its domains and warnings, or every error it has (sorted)."""

    domains: tuple[CompiledDomain, ...]
    errors: tuple[Diagnostic, ...] = ()
    warnings: tuple[Diagnostic, ...] = ()

    def domains_or_raise(self, warn: Callable[[Diagnostic], None] = print_warning) -> tuple[CompiledDomain, ...]:
        """The domains, after sending the warnings to ``warn``; :class:`CompileError` if there are errors."""
        if self.errors:
            raise CompileError(list(self.errors))
        for warning in self.warnings:
            warn(warning)
        return self.domains


@dataclass(frozen=True)
class _Plan:
    """A tree read up to its op files: what every op file needs to be read and resolved on its own."""

    root: Path
    tree: Tree
    files: tuple[OpFile, ...]
    catalogue: RuleCatalogue
    type_sets: TypeSets
    diagnostics: Diagnostics


class _FileResult(NamedTuple):
    """One op file read and resolved, with the errors of each step (kept apart: a duplicate op's
    resolution errors are dropped)."""

    op: CompiledOp | None
    read_errors: list[Diagnostic]
    resolve_errors: list[Diagnostic]
    #: The op's warnings (see :func:`placeholder_warnings`), found where it was resolved.
    warnings: tuple[Diagnostic, ...] = ()


def compile_trees(roots: Sequence[Path], meanwhile: Callable[[], None] | None = None) -> list[Outcome]:
    """Compile several trees at once (an op set and those layered over it): their op files are
    read and resolved in one pass spread over the cores, each independently of the others; the
    outcome of each tree is the one :func:`compile_tree` gives it alone. The built-in rule modules'
    declarations are read by the other processes while this one finds the trees' files; ``meanwhile``
    is other work of this process, done while the others start on the op files."""
    walks: list[tuple[Path, Diagnostics, Tree, list[OpFile] | None]] = []
    for found in forked_map(_builtin_rules_of, unread_builtin_rules(), min_items=1, runs=1,
                            meanwhile=lambda: walks.extend(_walk(root) for root in roots)):
        remember_builtin_rules(found)
    plans = [_plan(*walk) for walk in walks]
    jobs = [(plan, found) for plan in plans for found in plan.files]
    results = iter(forked_map(_compile_file, jobs, runs=16, meanwhile=meanwhile))
    return [_outcome(plan, [next(results) for _ in plan.files]) for plan in plans]


def _builtin_rules_of(path: Path) -> BuiltinRules:
    return read_builtin_rules([path])


def _walk(root: Path) -> tuple[Path, Diagnostics, Tree, list[OpFile] | None]:
    """A tree's type sets, domains and op files (see :func:`plan_tree`; None: no tree is there), with
    the problems found."""
    diagnostics = Diagnostics()
    if not root.is_dir():
        diagnostics.error(Location(Namer(root)(root), 1, 1), "opdefs folder not found")
        return root, diagnostics, Tree(root), None
    tree, files = plan_tree(root, diagnostics, inherited_types(root))
    return root, diagnostics, tree, files


def _plan(root: Path, diagnostics: Diagnostics, tree: Tree, files: list[OpFile] | None) -> _Plan:
    if files is None:
        return _Plan(root, tree, (), RuleCatalogue({}), TypeSets({}, diagnostics), diagnostics)
    catalogue = _catalogue(root, diagnostics)
    type_sets = TypeSets(tree.type_sets, diagnostics)
    type_sets.expand_all()  # once, here: the op files only look the sets up
    return _Plan(root, tree, tuple(files), catalogue, type_sets, diagnostics)


def _compile_file(job: tuple[_Plan, OpFile]) -> _FileResult:
    plan, found = job
    read_errors, resolve_errors = Diagnostics(), Diagnostics()
    read = read_op_file(found, read_errors)
    if read is None:
        return _FileResult(None, read_errors.items, [])
    op, document = read
    read_op_extras(op, document, read_errors)
    schemas = _with_change_classes(resolve_op(op, found.domain, plan.type_sets.reporting_to(resolve_errors),
                                              resolve_errors, plan.catalogue.rules))
    return _FileResult(CompiledOp(op, schemas), read_errors.items, resolve_errors.items,
                       tuple(placeholder_warnings(op, schemas)))


def _outcome(plan: _Plan, results: list[_FileResult]) -> Outcome:
    diagnostics, tree = plan.diagnostics, plan.tree
    by_domain: dict[str, dict[str, CompiledOp]] = {name: {} for name in tree.domains}
    warnings: list[Diagnostic] = []
    for result in results:
        for diagnostic in result.read_errors:
            diagnostics.error(diagnostic.location, diagnostic.message)
        if result.op is None:
            continue
        op = result.op.decl
        stem = _stem(op.path)
        if stem != op.name:
            diagnostics.error(op.location, f"op {op.name!r} must live in a file named {op.name}.yaml, not {stem}.yaml")
        ops = by_domain[op.domain]
        if op.name in ops:
            diagnostics.error(op.location, f"op {op.name!r} is already defined in {ops[op.name].decl.path}")
            continue
        for diagnostic in result.resolve_errors:
            diagnostics.error(diagnostic.location, diagnostic.message)
        ops[op.name] = result.op
        warnings += result.warnings
    _check_aliases(tree, diagnostics)
    type_sets = plan.type_sets
    named = tuple((name, type_sets.expand(name, decl.location)) for name, decl in sorted(tree.type_sets.items()))
    domains = tuple(
        CompiledDomain(tree.domains[name], tuple(sorted(ops.values(), key=lambda o: o.decl.name)), plan.catalogue,
                       named)
        for name, ops in sorted(by_domain.items())
    )
    if diagnostics:
        return Outcome((), tuple(diagnostics.sorted()))
    return Outcome(domains, warnings=_warnings(plan.root, domains, warnings))


def _stem(path: str) -> str:
    """The file name of ``path`` without its last suffix (as ``Path(path).stem`` gives it)."""
    name = os.path.basename(path)
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name


def _warnings(root: Path, domains: tuple[CompiledDomain, ...], op_warnings: list[Diagnostic]) -> tuple[Diagnostic, ...]:
    """The tree's warnings (the domains', and ``op_warnings``, those of its ops), capped as errors are: a
    tree with 10^5 gaps is not 10^5 lines."""
    warnings = [warning for domain in domains for warning in domain_placeholder_warnings(domain.decl)]
    capped = cap(sorted(warnings + op_warnings))
    if not capped.omitted:
        return capped.shown
    return capped.shown + (Diagnostic(Location(Namer(root)(root), 1, 1), f"{capped.omitted} more warning"
                                      f"{'s' if capped.omitted != 1 else ''} not shown (text still to be written)",
                                      "warning"),)


def _catalogue(root: Path, diagnostics: Diagnostics) -> RuleCatalogue:
    folder = root / RULES_FOLDER
    shown = Namer(root)
    rules = read_catalogue(folder, diagnostics, shown)
    modules = []
    for path in rule_modules(folder):
        try:
            modules.append((path.name, path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            pass  # already reported by the catalogue reader
    return RuleCatalogue(rules, tuple(modules), shown(folder))


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
