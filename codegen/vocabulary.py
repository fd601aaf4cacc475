"""What a user's opdefs tree shares with the built-in one.

- The built-in named type sets (``opdefs/types.yaml``): a tree names them as if they were
  its own; a set of its own may not take a built-in name with other types.
- The built-in inference rules: a tree references them by name (see
  :mod:`opspec.codegen.rule_specs`); its own rules may not take a built-in name.
- The built-in domains: a tree's domain that a built-in op set already defines (by name,
  node domain or alias) is refused when it is registered beside the built-in set, unless
  the tree says ``extends: true`` in its ``domain.yaml``; then its ops add versions to the
  built-in domain, within its opset range (checked when the tree is compiled).
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

from opspec.codegen.diagnostics import Diagnostic
from opspec.codegen.load import DOMAIN_FILE, LAYER_FILE, TYPES_FILE, read_domain
from opspec.codegen.model import DomainDecl
from opspec.codegen.source import SourceError, load_yaml


def builtin_opdefs() -> Path:
    """The built-in opdefs tree, found without importing anything from it."""
    spec = importlib.util.find_spec("opspec.opdefs")
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations)))


def is_builtin(root: Path) -> bool:
    """Whether ``root`` is the built-in tree or an op set layered over it."""
    builtin = builtin_opdefs().resolve()
    resolved = root.resolve()
    return resolved == builtin or resolved.parent == builtin and (resolved / LAYER_FILE).is_file()


def inherited_types(root: Path) -> Path | None:
    """The ``types.yaml`` whose sets the tree at ``root`` may name: the built-in one, for a
    user's tree (the built-in tree and its layers read theirs themselves)."""
    return None if is_builtin(root) else builtin_opdefs() / TYPES_FILE


def builtin_domains() -> dict[str, DomainDecl]:
    """Every domain the built-in tree and its layers define (not those that only extend one),
    by every spelling a model or a lookup may use."""
    root = builtin_opdefs()
    found: dict[str, DomainDecl] = {}
    for path in sorted([*root.glob(f"*/{DOMAIN_FILE}"), *root.glob(f"*/*/{DOMAIN_FILE}")]):
        try:
            document = load_yaml(path, path.relative_to(root.parent).as_posix())
        except SourceError:
            continue
        decl = read_domain(document, path.parent.name, path.relative_to(root.parent).as_posix())
        if not decl.extends:
            for spelling in {decl.name, decl.node_domain, *decl.aliases}:
                found.setdefault(spelling, decl)
    return found


def extension_problems(domains: tuple[DomainDecl, ...], targets: dict[str, DomainDecl],
                       base: str, claims: bool = True) -> list[Diagnostic]:
    """Problems of ``domains`` against the domains they may extend (``targets``, by spelling):
    a domain that says ``extends: true`` must match its target; with ``claims``, a domain of
    a target's spelling that does not say it is a problem too. (A user's tree is compiled
    without ``claims``: a copy of a built-in domain is a tree of its own, which registering
    beside the built-in set refuses.)"""
    problems = []
    for decl in domains:
        target = next((targets[s] for s in (decl.name, decl.node_domain, *decl.aliases) if s in targets), None)
        if target is None:
            if decl.extends:
                problems.append(Diagnostic(decl.location, f"domain {decl.name!r} extends a domain that {base} "
                                                          "does not define"))
        elif decl.extends:
            if (decl.name != target.name or decl.node_domain != target.node_domain
                    or decl.opset_min < target.opset_min or decl.opset_max > target.opset_max):
                problems.append(Diagnostic(decl.location, f"domain {decl.name!r} extends {target.path}: it must "
                                                          f"use its name {target.name!r}, its node domain and stay "
                                                          f"within opsets {target.opset_min}-{target.opset_max}"))
        elif claims:
            problems.append(Diagnostic(decl.location, f"domain {decl.name!r} is defined in {target.path}; "
                                                      "say `extends: true` to add versions to it"))
    return problems


__all__ = ["builtin_domains", "builtin_opdefs", "extension_problems", "inherited_types", "is_builtin"]
