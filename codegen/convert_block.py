"""Checks of a version's ``convert`` block against the two versions it relates."""
from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opspec.codegen.diagnostics import Diagnostics
from opspec.codegen.model import VersionDecl
from opspec.runtime.schema import OpSchema


def frozen(value: Any) -> Any:
    """The block as the registry holds it: read-only mappings, tuples and scalars."""
    if isinstance(value, dict):
        return MappingProxyType({key: frozen(item) for key, item in value.items()})
    return value


def check_convert(versions: list[VersionDecl], schemas: list[OpSchema], diagnostics: Diagnostics) -> None:
    """Every name a ``convert`` block uses must exist where the block says it does."""
    for position, (version, schema) in enumerate(zip(versions, schemas)):
        block, where = version.convert, version.convert_location or version.location
        if not block:
            continue
        if position == 0:
            diagnostics.error(where, "the first version has no previous version to convert from")
            continue
        previous = schemas[position - 1]
        before = {formal.name for formal in previous.inputs}
        for input_name, source in block.get("inputs_from", {}).items():
            attribute = source[0] if isinstance(source, tuple) else source
            if input_name in before or all(formal.name != input_name for formal in schema.inputs):
                diagnostics.error(where, f"inputs_from: {input_name!r} is not an input new in version "
                                         f"{schema.since_version}")
            if attribute not in previous.attributes or attribute in schema.attributes:
                diagnostics.error(where, f"inputs_from: {attribute!r} is not an attribute of version "
                                         f"{previous.since_version} that version {schema.since_version} drops")
        for name in block.get("new_values", {}):
            if name not in schema.attributes and all(formal.name != name for formal in schema.inputs):
                diagnostics.error(where, f"new_values: version {schema.since_version} has no attribute or "
                                         f"input {name!r}")
