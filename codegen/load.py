"""Read an opdefs tree into declarations, collecting every error on the way.

Layout of a tree::

    types.yaml                      named type sets (optional)
    <domain>/domain.yaml            one per domain
    <domain>/<family>/<Op>.yaml     one operator per file
    schema/                         JSON Schemas (not read as opdefs)
    rules/                          the tree's own inference rules (Python, see opdefs/README.md)
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opspec.codegen.diagnostics import Diagnostics
from opspec.codegen.model import DomainDecl, OpDecl, TypeSetDecl
from opspec.codegen.names import domain_folder_problem, folder_problem
from opspec.codegen.op_reader import read_op
from opspec.codegen.shown_paths import LAYER_FILE, Namer
from opspec.codegen.source import Location, Map, Seq, SourceError, load_yaml
from opspec.codegen.tree_walk import escape, files_under
from opspec.codegen.validate import schema_errors

DOMAIN_FILE = "domain.yaml"
TYPES_FILE = "types.yaml"
#: Folders of a tree that are not domains: JSON Schemas, the tree's own rule modules, kernel tables.
SKIPPED_FOLDERS = {"schema", "rules", "kernels"}


def _skipped(folder: Path) -> bool:
    """Folders that are never domains: ``schema``, hidden ones, caches such as ``__pycache__``,
    and op sets layered over the tree (they hold a ``layer.yaml``)."""
    return (folder.name in SKIPPED_FOLDERS or folder.name == TYPES_FILE or folder.name.startswith((".", "__"))
            or os.path.lexists(folder / LAYER_FILE))


def layered_trees(root: Path) -> list[Path]:
    """The op sets layered over the tree at ``root``: its folders that hold a ``layer.yaml``.

    Such a tree (onnxruntime's op set over the standard one) is compiled on its own into a
    registry package of the same name inside the output folder; it sees the type sets of
    the tree it layers over, and its domains marked ``extends`` add versions to that
    tree's domains.
    """
    return sorted(folder for folder in root.iterdir()
                  if folder.is_dir() and not folder.name.startswith((".", "__")) and (folder / LAYER_FILE).is_file())


@dataclass
class Tree:
    """Everything read from one opdefs tree."""

    root: Path
    domains: dict[str, DomainDecl] = field(default_factory=dict)
    type_sets: dict[str, TypeSetDecl] = field(default_factory=dict)
    ops: list[OpDecl] = field(default_factory=list)
    #: The parsed document of each op file, by the path its declaration shows.
    documents: dict[str, Map] = field(default_factory=dict)


@dataclass(frozen=True)
class OpFile:
    """An op file found in a tree, not yet read: where it is, how errors name it, its domain and family."""

    path: str
    shown: str
    domain: DomainDecl
    family: str


def load_tree(root: Path, diagnostics: Diagnostics, inherited_types: Path | None = None) -> Tree:
    """Read ``root``; problems go to ``diagnostics`` and the bad parts are skipped.

    ``inherited_types`` is a ``types.yaml`` whose sets the tree may name as its own (the
    built-in one, for a user's tree); a layered tree inherits those of the tree it layers over.
    """
    tree, files = plan_tree(root, diagnostics, inherited_types)
    for found in files:
        read = read_op_file(found, diagnostics)
        if read is not None:
            tree.ops.append(read[0])
            tree.documents[found.shown] = read[1]
    return tree


def read_op_file(found: OpFile, diagnostics: Diagnostics) -> tuple[OpDecl, Map] | None:
    """The declaration of one op file and its document (None, with errors, when it is unusable).

    Each op file is read on its own, so the files of a tree may be read in any order or at once.
    """
    document = _read_document(Path(found.path), found.shown, "op", diagnostics)
    if document is None:
        return None
    return read_op(document, found.domain, found.family, found.shown, diagnostics), document


def _read_document(path: Path, shown: str, kind: str, diagnostics: Diagnostics) -> Map | None:
    """A file's top-level mapping, checked against the ``kind`` schema (None, with errors, if it fails)."""
    try:
        document = load_yaml(path, shown)
    except SourceError as error:
        diagnostics.add(error)
        return None
    if not isinstance(document, Map):
        where = getattr(document, "location", Location(shown, 1, 1))
        found = "a list" if isinstance(document, Seq) else f"a {type(document).__name__} scalar"
        diagnostics.error(where, f"expected a mapping at the top of the file, found {found}")
        return None
    problems = list(schema_errors(document, kind))
    for location, message in problems:
        diagnostics.error(location, message)
    return None if problems else document


def plan_tree(root: Path, diagnostics: Diagnostics, inherited_types: Path | None = None) -> tuple[Tree, list[OpFile]]:
    """Read ``root``'s type sets and domains, and find its op files (read by :func:`read_op_file`)."""
    tree = Tree(root)
    files: list[OpFile] = []
    shown = Namer(root)

    def read(path: Path, kind: str) -> Any:
        return _read_document(path, shown(path), kind, diagnostics)

    layered = os.path.lexists(root / LAYER_FILE)
    boundary = (root.parent if layered else root).resolve()

    def inside(path: Path) -> bool:
        """False, with a located error, when ``path`` is a link that leaves the tree."""
        if (outside := escape(path, boundary)) is None:
            return True
        diagnostics.error(Location(shown(path), 1, 1), outside.message)
        return False

    if layered:
        read(root / LAYER_FILE, "layer")  # only checked: it marks the folder, its text is for people
    for types_path in ((root.parent / TYPES_FILE) if layered else inherited_types, root / TYPES_FILE):
        # the inherited built-in sets lie outside the tree by design; the tree's own files may not
        if types_path is not None and os.path.lexists(types_path) \
                and (types_path == inherited_types or inside(types_path)) \
                and (document := read(types_path, "types")) is not None:
            _read_type_sets(document, tree, diagnostics)
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not _skipped(p) and inside(p)):
        domain_path = folder / DOMAIN_FILE
        if not os.path.lexists(domain_path):
            diagnostics.error(Location(shown(folder), 1, 1), f"domain folder has no {DOMAIN_FILE}")
            continue
        if problem := domain_folder_problem(folder.name):
            diagnostics.error(Location(shown(folder), 1, 1), problem)
            continue
        document = read(domain_path, "domain") if inside(domain_path) else None
        if document is None:
            continue
        domain = read_domain(document, folder.name, shown(domain_path))
        if domain.opset_min > domain.opset_max:
            diagnostics.error(document["opset"].location,
                              f"opset range is inverted: min {domain.opset_min} is above max {domain.opset_max}")
            continue
        if domain.name in tree.domains:
            first = tree.domains[domain.name]
            diagnostics.error(domain.location, f"domain {domain.name!r} is already defined in {first.path}")
            continue
        tree.domains[domain.name] = domain
        op_files, escapes = files_under(folder, ".yaml", boundary)
        for outside in escapes:
            diagnostics.error(Location(shown(outside.path), 1, 1), outside.message)
        skipped, folder_text = str(domain_path), str(folder)
        for path in op_files:
            if path == skipped:
                continue
            family = os.path.dirname(path)[len(folder_text) + 1:].replace(os.sep, "/") or "."  # found under folder
            if problem := folder_problem(family if family != "." else ""):
                diagnostics.error(Location(shown(path), 1, 1), problem)
                continue
            files.append(OpFile(path, shown(path), domain, family if family != "." else ""))
    return tree, files


def _read_type_sets(document: Map, tree: Tree, diagnostics: Diagnostics) -> None:
    """Add the sets of a ``types.yaml``; one that an inherited file already names must list the
    same items (a copy of the built-in file is harmless; a different meaning is not)."""
    sets = document["type_sets"]
    for name, items in sets.items():
        declared = TypeSetDecl(name, tuple(zip(items, items.item_locations)), sets.key_at(name))
        inherited = tree.type_sets.get(name)
        if inherited is not None and [i for i, _ in inherited.items] != [i for i, _ in declared.items]:
            diagnostics.error(declared.location, f"type set {name!r} is already defined at {inherited.location} "
                                                 "with other types; name the built-in set as it is, or choose "
                                                 "another name")
            continue
        tree.type_sets[name] = declared


def read_domain(document: Map, folder: str, path: str) -> DomainDecl:
    opset = document["opset"]
    name = document["domain"]
    return DomainDecl(
        name=name,
        node_domain=document.get("node_domain", name),
        aliases=tuple(document.get("aliases", ())),
        opset_min=opset["min"],
        opset_max=opset["max"],
        path=path,
        location=document.value_at("domain"),
        folder=folder,
        summary=document.get("summary", ""),
        doc=document.get("doc", ""),
        extends=document.get("extends", False),
    )
