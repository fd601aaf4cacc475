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
from opspec.codegen.model import (
    AttrDecl,
    DomainDecl,
    ExampleDecl,
    OpDecl,
    ParamDecl,
    RuleDecl,
    TypeParamDecl,
    TypeSetDecl,
    VersionDecl,
)
from opspec.codegen.notation import (
    DIFFERENTIATION,
    ATTR_TYPES,
    AttrSpec,
    NotationError,
    ParamSpec,
    parse_attribute,
    parse_param,
)
from opspec.codegen.names import domain_folder_problem, folder_problem
from opspec.codegen.source import Location, Map, Seq, SourceError, load_yaml
from opspec.codegen.tree_walk import escape, files_under
from opspec.codegen.validate import schema_errors
from opspec.runtime.schema import FormalParameterOption, ValueConstraint

DOMAIN_FILE = "domain.yaml"
TYPES_FILE = "types.yaml"
#: Marks a folder inside a tree as an op set of its own (see :func:`layered_trees`).
LAYER_FILE = "layer.yaml"
#: Folders of a tree that are not domains: JSON Schemas, the tree's own rule modules.
SKIPPED_FOLDERS = {"schema", "rules"}


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

    path: Path
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
    document = _read_document(found.path, found.shown, "op", diagnostics)
    if document is None:
        return None
    return _read_op(document, found.domain, found.family, found.shown, diagnostics), document


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
    base = root.parent
    files: list[OpFile] = []

    def shown(path: Path) -> str:
        return path.relative_to(base).as_posix() if path.is_relative_to(base) else str(path)

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
        for path in op_files:
            if path == domain_path:
                continue
            family = path.parent.relative_to(folder).as_posix()
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


def _read_op(document: Map, domain: DomainDecl, family: str, path: str, diagnostics: Diagnostics) -> OpDecl:
    op = OpDecl(
        name=document["op"],
        domain=domain.name,
        family=family,
        path=path,
        location=document.value_at("op"),
        summary=document.get("summary", ""),
        doc=document.get("doc", ""),
    )
    docs = document.get("docs", Map())
    op.docs = dict(docs)
    op.doc_locations = {name: docs.key_at(name) for name in docs}
    versions = document["versions"]
    for key, body in versions.items():
        op.versions.append(_read_version(int(key), body, versions.key_at(key), diagnostics))
    return op


def _read_version(since: int, body: Map, location: Location, diagnostics: Diagnostics) -> VersionDecl:
    version = VersionDecl(since=since, location=location, notes=body.get("notes", ""))
    if "inputs" in body:
        version.inputs = _read_params(body["inputs"], diagnostics)
    if "outputs" in body:
        version.outputs = _read_params(body["outputs"], diagnostics)
    attributes = body.get("attributes", Map())
    for name, value in attributes.items():
        version.attribute_locations[name] = attributes.key_at(name)
        if value is None:
            version.attributes[name] = None
            continue
        declared = _read_attribute(name, value, attributes, diagnostics)
        if declared is not None:
            version.attributes[name] = declared
    types = body.get("types", Map())
    for name, value in types.items():
        version.type_locations[name] = types.key_at(name)
        version.types[name] = _read_type_param(name, value, types.key_at(name), types.value_at(name))
    if "inference" in body:
        version.inference_set = True
        version.inference = _read_rule(body["inference"], body.value_at("inference"))
    if "convert" in body:
        version.convert = _plain_value(body["convert"])
        version.convert_location = body.value_at("convert")
    if "deprecated" in body:
        version.deprecated = body["deprecated"]
    examples = body.get("examples", ())
    version.examples = tuple(
        ExampleDecl(dict(example.get("inputs", {})), dict(example.get("attributes", {})), examples.item_at(index),
                    example.get("outputs"))
        for index, example in enumerate(examples)
    )
    return version


def _read_params(params: Map, diagnostics: Diagnostics) -> tuple[ParamDecl, ...]:
    declared = []
    for name, value in params.items():
        where = params.value_at(name)
        if isinstance(value, str):
            try:
                spec = parse_param(value)
            except NotationError as error:
                diagnostics.error(params.inside_value(name, error.offset), f"input/output {name!r}: {error}")
                continue
            declared.append(ParamDecl(str(name), spec, params.key_at(name), where))
            continue
        option = FormalParameterOption[value.get("option", "single").capitalize()]
        spec = ParamSpec(
            type_str=value["type"].replace(" ", ""),
            option=option,
            min_arity=value.get("min_arity", 1),
            is_homogeneous=value.get("homogeneous", True),
            differentiation=DIFFERENTIATION[value.get("differentiability", "unknown")],
        )
        if not spec.is_homogeneous and option is not FormalParameterOption.Variadic:
            diagnostics.error(value.key_at("homogeneous"), "only a variadic can be heterogeneous")
        declared.append(ParamDecl(str(name), spec, params.key_at(name), value.value_at("type"), value.get("doc")))
    return tuple(declared)


_BOUND_KEYS = ("minimum", "maximum", "exclusive_minimum", "exclusive_maximum", "ignore_case", "min_length",
               "max_length", "axis_of", "axis_extra", "length_of", "length_scale", "length_offset", "length_as")


def _read_attribute(name: str, value: Any, attributes: Map, diagnostics: Diagnostics) -> AttrDecl | None:
    where = attributes.value_at(name)
    if isinstance(value, str):
        try:
            spec = parse_attribute(value)
        except NotationError as error:
            diagnostics.error(attributes.inside_value(name, error.offset), f"attribute {name!r}: {error}")
            return None
        return AttrDecl(str(name), spec, where)
    bounds = {key: value[key] for key in _BOUND_KEYS if key in value}
    if "allowed" in value:
        bounds["allowed"] = tuple(value["allowed"])
    if value.get("required") and "default" in value:
        diagnostics.error(value.key_at("default"), f"attribute {name!r} cannot be both required and defaulted")
    spec = AttrSpec(
        type=ATTR_TYPES[value["type"]],
        required=bool(value.get("required", False)),
        default=value.get("default"),
        constraint=ValueConstraint(**bounds) if bounds else None,
    )
    return AttrDecl(str(name), spec, where, value.get("doc"))


def _read_type_param(name: str, value: Any, key_at: Location, value_at: Location) -> TypeParamDecl | None:
    if value is None:
        return None
    doc = None
    if isinstance(value, Map):
        doc, value, value_at = value.get("doc"), value["types"], value.value_at("types")
    if isinstance(value, Seq):
        items = tuple(zip((item.replace(" ", "") for item in value), value.item_locations))
    else:
        items = ((value.replace(" ", ""), value_at),)
    return TypeParamDecl(str(name), items, key_at, doc)


def _read_rule(value: Any, where: Location) -> RuleDecl | None:
    if value is None:
        return None
    if isinstance(value, str):
        return RuleDecl(value, {}, where)
    args = {key: item for key, item in value.items() if key != "rule"}
    return RuleDecl(
        value["rule"], args, value.value_at("rule"), {key: value.value_at(key) for key in args}
    )


def _plain_value(value: Any) -> Any:
    """A located YAML value as plain dicts, tuples and scalars."""
    if isinstance(value, dict):
        return {str(key): _plain_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return tuple(_plain_value(item) for item in value)
    return value
