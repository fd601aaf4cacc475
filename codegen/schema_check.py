"""A fast yes/no check of a document against a JSON Schema, compiled once into closures.

General JSON Schema validators walk the schema for every value and build an error object
for every failed branch of a ``oneOf``; on a tree of thousands of files, or a file of
10^5 attributes, that walk dominates compilation. Most files are valid, so
:func:`compile_check` turns a schema into one predicate made of plain Python closures,
and the full validator runs only on documents the predicate refuses (to say why).

The predicate is conservative: where it is unsure (a float where an integer is expected,
an ``enum`` of non-strings) it answers False, which only costs the full validator's time.
A schema using a keyword outside the supported subset raises :class:`UnsupportedSchema`,
and callers then use the full validator alone.
"""
from __future__ import annotations

import re
from typing import Any, Callable

Check = Callable[[Any], bool]

#: Keywords that only describe; they never change what is valid.
_ANNOTATIONS = frozenset({"title", "description", "$schema", "$comment", "$defs", "default", "examples"})


class UnsupportedSchema(Exception):
    """The schema uses a keyword this checker does not compile."""


def _is_number(value: Any) -> bool:
    return type(value) in (int, float)


_TYPES: dict[str, Check] = {
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
    "string": lambda value: isinstance(value, str),
    "boolean": lambda value: isinstance(value, bool),
    "null": lambda value: value is None,
    "integer": lambda value: isinstance(value, int) and not isinstance(value, bool),
    "number": lambda value: isinstance(value, (int, float)) and not isinstance(value, bool),
}


def compile_check(schema: dict[str, Any]) -> Check:
    """A predicate that is True only for documents ``schema`` accepts."""
    definitions = schema.get("$defs", {})
    compiled: dict[str, Check] = {}

    def reference(target: str) -> Check:
        prefix = "#/$defs/"
        if not target.startswith(prefix) or target[len(prefix):] not in definitions:
            raise UnsupportedSchema(f"reference {target!r}")
        name = target[len(prefix):]
        if name not in compiled:
            compiled[name] = lambda value: False  # filled below; breaks cycles while compiling
            check = build(definitions[name])
            compiled[name] = check
        return lambda value: compiled[name](value)

    def build(node: Any) -> Check:
        if node is True or node == {}:
            return lambda value: True
        if not isinstance(node, dict):
            raise UnsupportedSchema(f"schema {node!r}")
        maybe = [_keyword(key, argument, node, build, reference)
                 for key, argument in node.items() if key not in _ANNOTATIONS]
        checks = [check for check in maybe if check is not None]
        if len(checks) == 1:
            return checks[0]
        return lambda value: all(check(value) for check in checks)

    return build(schema)


def _keyword(key: str, argument: Any, node: dict[str, Any], build: Callable[[Any], Check],
             reference: Callable[[str], Check]) -> Check | None:
    if key == "type":
        names = [argument] if isinstance(argument, str) else list(argument)
        if any(name not in _TYPES for name in names):
            raise UnsupportedSchema(f"type {argument!r}")
        tests = [_TYPES[name] for name in names]
        return lambda value: any(test(value) for test in tests)
    if key == "$ref":
        return reference(argument)
    if key == "properties":
        named = {name: build(sub) for name, sub in argument.items()}
        return lambda value: not isinstance(value, dict) or all(
            named[name](item) for name, item in value.items() if name in named)
    if key == "additionalProperties":
        known = frozenset(node.get("properties", {}))
        if argument is False:
            return lambda value: not isinstance(value, dict) or all(name in known for name in value)
        other = build(argument)
        return lambda value: not isinstance(value, dict) or all(
            other(item) for name, item in value.items() if name not in known)
    if key == "required":
        needed = tuple(argument)
        return lambda value: not isinstance(value, dict) or all(name in value for name in needed)
    if key == "propertyNames":
        name_check = build(argument)
        return lambda value: not isinstance(value, dict) or all(name_check(name) for name in value)
    if key == "minProperties":
        return lambda value: not isinstance(value, dict) or len(value) >= argument
    if key == "items" and isinstance(argument, dict):
        each = build(argument)
        return lambda value: not isinstance(value, list) or all(each(item) for item in value)
    if key == "minItems":
        return lambda value: not isinstance(value, list) or len(value) >= argument
    if key == "maxItems":
        return lambda value: not isinstance(value, list) or len(value) <= argument
    if key == "minLength":
        return lambda value: not isinstance(value, str) or len(value) >= argument
    if key == "pattern":
        search = re.compile(argument).search
        return lambda value: not isinstance(value, str) or search(value) is not None
    if key == "minimum" and _is_number(argument):
        return lambda value: not _is_number(value) or value >= argument
    if key == "maximum" and _is_number(argument):
        return lambda value: not _is_number(value) or value <= argument
    if key == "enum" and all(isinstance(choice, str) for choice in argument):
        choices = frozenset(argument)
        return lambda value: isinstance(value, str) and value in choices
    if key == "oneOf":
        options = [build(option) for option in argument]
        return lambda value: sum(1 for option in options if option(value)) == 1
    if key == "anyOf":
        options = [build(option) for option in argument]
        return lambda value: any(option(value) for option in options)
    raise UnsupportedSchema(f"keyword {key!r}")
