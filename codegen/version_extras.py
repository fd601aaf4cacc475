"""Read the version keys that go beyond a signature: support level, determinism, function
bodies, allowed exceptions to the usual checks, and the order of type parameters.

The JSON Schema has already checked their shape when the file was loaded; this reads
them into the :class:`VersionDecl` of each version, with locations, from the documents the
loader kept.
"""
from __future__ import annotations

from opspec.codegen.diagnostics import Diagnostics
from opspec.codegen.load import Tree
from opspec.codegen.model import FunctionDecl, OpDecl, VersionDecl
from opspec.codegen.source import Map

KEYS = ("support_level", "determinism", "function", "allow", "type_order")

#: Checks a version may switch off by naming them in ``allow``.
ALLOWABLE = {
    "required-after-optional": "a required input or output may follow an optional one",
    "unused-type-parameter": "a type parameter may be declared without any input or output using it",
}


def read_version_extras(tree: Tree, diagnostics: Diagnostics) -> None:
    """Fill the extra fields of every version of every op in ``tree``."""
    for op in tree.ops:
        document = tree.documents.get(op.path)
        if document is not None:
            read_op_extras(op, document, diagnostics)


def read_op_extras(op: OpDecl, document: Map, diagnostics: Diagnostics) -> None:
    """Fill the extra fields of the versions of ``op``, read from its file's ``document``."""
    versions = document.get("versions")
    if not isinstance(versions, Map):
        return
    by_since = {version.since: version for version in op.versions}
    for key, body in versions.items():
        version = by_since.get(int(key))
        if version is not None and isinstance(body, Map):
            _read_version(version, body, diagnostics)


def _read_version(version: VersionDecl, body: Map, diagnostics: Diagnostics) -> None:
    version.support_level = body.get("support_level")
    version.determinism = body.get("determinism")
    if "function" in body:
        version.function_set = True
        version.function = _read_function(body["function"], body)
    allowed = body.get("allow") or []
    for name, location in zip(allowed, getattr(allowed, "item_locations", [])):
        version.allow[name] = location
    if "type_order" in body:
        version.type_order = tuple(body["type_order"])
        version.type_order_location = body.value_at("type_order")


def _read_function(value: object, body: Map) -> FunctionDecl | None:
    if not isinstance(value, Map):
        return None
    bodies = tuple(
        (int(key), text, value.value_at(key)) for key, text in value.items() if str(key) != "context_dependent"
    )
    context = tuple(value.get("context_dependent", ()))
    return FunctionDecl(tuple(sorted(bodies)), tuple(sorted(context)), body.value_at("function"))
