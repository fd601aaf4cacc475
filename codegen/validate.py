"""JSON Schema validation of opdefs files, with errors pointed at file:line:col."""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

from opspec.codegen.names import name_errors
from opspec.codegen.schema_check import Check, UnsupportedSchema, compile_check
from opspec.codegen.source import Location, Map, Seq

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "opdefs" / "schema"
SCHEMA_FILES = {"op": "op.schema.json", "domain": "domain.schema.json", "types": "types.schema.json",
                "layer": "layer.schema.json", "kernels": "kernels.schema.json"}


@lru_cache(maxsize=None)
def _schema(kind: str) -> dict[str, Any]:
    """The ``kind`` schema, as JSON."""
    found: dict[str, Any] = json.loads((SCHEMA_DIR / SCHEMA_FILES[kind]).read_text(encoding="utf-8"))
    return found


@lru_cache(maxsize=None)
def _validator(kind: str) -> Any:
    """The full validator of the ``kind`` schema (imported only for a document the quick check refuses)."""
    import jsonschema

    return jsonschema.Draft202012Validator(_schema(kind))


@lru_cache(maxsize=None)
def _quick_check(kind: str) -> Check | None:
    """The compiled yes/no check of the ``kind`` schema (None: only the full validator applies)."""
    try:
        return compile_check(_schema(kind))
    except UnsupportedSchema:
        return None


def _plain(value: Any) -> Any:
    """The JSON view of a YAML value: mapping keys become strings, as editors see them."""
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _key(node: Map, name: Any) -> Any:
    """The key of ``node`` that JSON spells ``name`` (keys such as versions may be integers);
    a direct look-up first, so explaining many errors of one big mapping stays linear."""
    if name in node:
        return name
    text = str(name)
    if text.isdigit() and int(text) in node:
        return int(text)
    return next((k for k in node if str(k) == text), None)


def _walk(document: Map, path: list[Any]) -> tuple[Any, Location]:
    """Follow a JSON path into the located document: the value and its location."""
    node: Any = document
    where = document.location
    for step in path:
        if isinstance(node, Map):
            found = _key(node, step)
            key = step if found is None else found
            where, node = node.value_at(key), node.get(key)
        elif isinstance(node, Seq) and isinstance(step, int) and step < len(node):
            where, node = node.item_at(step), node[step]
        else:
            break
    return node, where


def _title(schema: dict[str, Any], root: dict[str, Any]) -> str:
    if "$ref" in schema:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema.get("title") or f"a {schema.get('type', 'value')}"


_JSON_TYPES = {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean",
               int: "an integer", float: "a number", type(None): "null"}


def _describe(value: Any) -> str:
    for python_type, name in _JSON_TYPES.items():
        if type(value) is python_type or (python_type in (dict, list) and isinstance(value, python_type)):
            return name
    return type(value).__name__


def schema_errors(document: Map, kind: str) -> Iterator[tuple[Location, str]]:
    """Yield (location, message) for every way ``document`` breaks the ``kind`` schema."""
    quick = _quick_check(kind)
    if quick is None or not quick(document):  # the check reads mapping keys as JSON does, as strings
        validator = _validator(kind)
        for error in validator.iter_errors(_plain(document)):
            yield from _explain(error, document, validator.schema)
    yield from name_errors(document, kind)


def _explain(error: Any, document: Map, root: dict[str, Any]) -> Iterator[tuple[Location, str]]:
    node, where = _walk(document, list(error.absolute_path))
    if error.validator == "additionalProperties" and isinstance(node, Map):
        allowed = sorted(error.schema.get("properties", {}))
        known = set(allowed)
        for key in node:
            if str(key) not in known:
                hint = f" (expected one of: {', '.join(allowed)})" if allowed else ""
                yield node.key_at(key), f"unknown key {key!r}{hint}"
        return
    if error.validator == "required":
        missing = [name for name in error.validator_value if name not in (node or {})]
        for name in missing:
            yield where, f"missing required key {name!r}"
        return
    if error.validator == "propertyNames" and isinstance(node, Map):
        key = _key(node, error.instance)
        location = node.key_at(key) if key is not None else where
        yield location, f"invalid key {error.instance!r}: expected a positive integer or a lowercase name"
        return
    if error.validator in ("oneOf", "anyOf"):
        relevant = [sub for sub in error.context if sub.validator not in ("type", "const", "enum")
                    or list(sub.relative_path)]
        if relevant:
            for sub in relevant:
                yield from _explain(sub, document, root)
            return
        options = " or ".join(_title(option, root) for option in error.validator_value)
        yield where, f"expected {options}, found {_describe(node)}"
        return
    if error.validator == "type":
        expected = error.schema.get("title") or f"a {error.validator_value}"
        yield where, f"expected {expected}, found {_describe(node)}"
        return
    if error.validator == "enum":
        choices = ", ".join(json.dumps(choice) for choice in error.validator_value)
        yield where, f"{json.dumps(error.instance)} is not one of {choices}"
        return
    if error.validator == "pattern" and "propertyNames" in error.schema_path:
        parent, _ = _walk(document, list(error.absolute_path))
        key = _key(parent, error.instance) if isinstance(parent, Map) else None
        location = parent.key_at(key) if key is not None else where
        yield location, f"invalid key {error.instance!r}: expected {error.schema.get('title', 'a valid key')}"
        return
    if error.validator == "pattern":
        title = error.schema.get("title", "a value")
        yield where, f"{error.instance!r} is not {title} (must match {error.validator_value})"
        return
    yield where, error.message
