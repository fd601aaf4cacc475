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


#: The JSON kind of each Python type a document holds (``int`` apart from ``float``: an integer
#: is also a number, a float is not an integer here).
_KINDS: dict[type, str] = {dict: "object", list: "array", str: "string", bool: "boolean", int: "int",
                           float: "float", type(None): "null"}
#: The kinds each JSON Schema ``type`` admits.
_TYPES: dict[str, frozenset[str]] = {
    "object": frozenset({"object"}), "array": frozenset({"array"}), "string": frozenset({"string"}),
    "boolean": frozenset({"boolean"}), "null": frozenset({"null"}), "integer": frozenset({"int"}),
    "number": frozenset({"int", "float"}),
}


def _kind(value: Any) -> str:
    """The JSON kind of ``value`` (subclasses such as a located mapping count as their base;
    anything else is ``"other"``, which no ``type`` admits)."""
    found = _KINDS.get(type(value))
    if found is not None:
        return found
    for python_type, kind in _KINDS.items():
        if isinstance(value, python_type) and python_type is not bool:
            _KINDS[type(value)] = kind
            return kind
    return "other"


def _always(value: Any) -> bool:
    return True


def compile_check(schema: dict[str, Any]) -> Check:
    """A predicate that is True only for documents ``schema`` accepts."""
    return _Compiler(schema).build(schema)


class _Compiler:
    """Compiles the schema nodes of one document schema, each into one closure."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.definitions: dict[str, Any] = schema.get("$defs", {})
        self.compiled: dict[str, Check] = {}

    def kinds(self, node: Any, seen: frozenset[str] = frozenset()) -> frozenset[str] | None:
        """The kinds ``node`` can accept at most (None: any), following references."""
        if not isinstance(node, dict):
            return None
        if "type" in node:
            names = [node["type"]] if isinstance(node["type"], str) else list(node["type"])
            return frozenset().union(*(_TYPES.get(name, frozenset()) for name in names))
        target = node.get("$ref")
        if isinstance(target, str) and target.startswith(_PREFIX) and target[len(_PREFIX):] not in seen:
            name = target[len(_PREFIX):]
            return self.kinds(self.definitions.get(name), seen | {name})
        return None

    def reference(self, target: str) -> Check:
        if not target.startswith(_PREFIX) or target[len(_PREFIX):] not in self.definitions:
            raise UnsupportedSchema(f"reference {target!r}")
        name = target[len(_PREFIX):]
        compiled = self.compiled
        if name not in compiled:
            compiled[name] = lambda value: False  # filled below; breaks cycles while compiling
            compiled[name] = self.build(self.definitions[name])
        return lambda value: compiled[name](value)

    def build(self, node: Any) -> Check:
        if node is True or node == {}:
            return _always
        if not isinstance(node, dict):
            raise UnsupportedSchema(f"schema {node!r}")
        for key in node:
            if key not in _ANNOTATIONS and key not in _KEYWORDS:
                raise UnsupportedSchema(f"keyword {key!r}")
        allowed = self.kinds({"type": node["type"]}) if "type" in node else None
        if "type" in node and any(name not in _TYPES for name in
                                  ([node["type"]] if isinstance(node["type"], str) else node["type"])):
            raise UnsupportedSchema(f"type {node['type']!r}")
        by_kind: dict[str, Check] = {}
        for kinds, make in ((("object",), self._object), (("array",), self._array), (("string",), _string),
                            (("int", "float"), _number)):
            check = make(node)
            if check is not None:
                by_kind.update(dict.fromkeys(kinds, check))
        extras = [check for check in (self._combined(node), _enum(node)) if check is not None]
        if "$ref" in node:
            extras.append(self.reference(node["$ref"]))
        return _joined(allowed, by_kind, tuple(extras))

    def _object(self, node: dict[str, Any]) -> Check | None:
        named = {name: self.build(sub) for name, sub in node.get("properties", {}).items()}
        additional = node.get("additionalProperties", True)
        other: Check | None = None if additional is False else self.build(additional)
        names = self.build(node["propertyNames"]) if "propertyNames" in node else None
        required = tuple(node.get("required", ()))
        least = node.get("minProperties", 0)
        if not named and other is _always and names is None and not required and not least:
            return None
        named_checks = {name: check for name, check in named.items() if check is not _always}
        free = other is _always

        def check(value: Any) -> bool:
            if len(value) < least:
                return False
            for name in required:
                if name not in value:
                    return False
            for key, item in value.items():
                name = key if type(key) is str else str(key)
                if names is not None and not names(name):
                    return False
                if name in named:
                    sub = named_checks.get(name)
                    if sub is not None and not sub(item):
                        return False
                elif other is None or not (free or other(item)):
                    return False
            return True
        return check

    def _array(self, node: dict[str, Any]) -> Check | None:
        items = node.get("items", True)
        if not isinstance(items, (dict, bool)):
            raise UnsupportedSchema("items as a list")
        each = self.build(items)
        least, most = node.get("minItems", 0), node.get("maxItems")
        if each is _always and not least and most is None:
            return None

        def check(value: Any) -> bool:
            if len(value) < least or (most is not None and len(value) > most):
                return False
            return each is _always or all(each(item) for item in value)
        return check

    def _combined(self, node: dict[str, Any]) -> Check | None:
        if "anyOf" in node:
            if "oneOf" in node:
                raise UnsupportedSchema("anyOf beside oneOf")
            options = [self.build(option) for option in node["anyOf"]]
            return lambda value: any(option(value) for option in options)
        if "oneOf" not in node:
            return None
        options = [self.build(option) for option in node["oneOf"]]
        admitted = [kinds for option in node["oneOf"] if (kinds := self.kinds(option)) is not None]
        if len(admitted) == len(options) and sum(map(len, admitted)) == len(frozenset().union(*admitted)):
            # the options admit disjoint kinds: only the one for the value's kind can pass
            by_kind = {kind: option for option, kinds in zip(options, admitted) for kind in kinds}
            return lambda value: (option := by_kind.get(_kind(value))) is not None and option(value)
        return lambda value: sum(1 for option in options if option(value)) == 1


_PREFIX = "#/$defs/"
_KEYWORDS = frozenset({"type", "$ref", "properties", "additionalProperties", "required", "propertyNames",
                       "minProperties", "items", "minItems", "maxItems", "minLength", "pattern", "minimum",
                       "maximum", "enum", "oneOf", "anyOf"})


def _joined(allowed: frozenset[str] | None, by_kind: dict[str, Check], extras: tuple[Check, ...]) -> Check:
    """One closure: the value's kind is admitted, passes that kind's keywords, and every other check."""
    if allowed is None and not by_kind:
        if not extras:
            return _always
        if len(extras) == 1:
            return extras[0]
    kinds = _KINDS
    if not extras and allowed is not None and len(allowed) == 1:  # the common node: one type, its keywords
        (only,) = allowed
        own = by_kind.get(only)
        if own is None:
            return lambda value: (kinds.get(type(value)) or _kind(value)) == only
        return lambda value: (kinds.get(type(value)) or _kind(value)) == only and own(value)

    def check(value: Any) -> bool:
        kind = _kind(value)
        if allowed is not None and kind not in allowed:
            return False
        own = by_kind.get(kind)
        if own is not None and not own(value):
            return False
        for extra in extras:
            if not extra(value):
                return False
        return True
    return check


def _string(node: dict[str, Any]) -> Check | None:
    least = node.get("minLength", 0)
    search = re.compile(node["pattern"]).search if "pattern" in node else None
    if not least and search is None:
        return None
    return lambda value: len(value) >= least and (search is None or search(value) is not None)


def _number(node: dict[str, Any]) -> Check | None:
    low, high = node.get("minimum"), node.get("maximum")
    for bound in (low, high):
        if bound is not None and type(bound) not in (int, float):
            raise UnsupportedSchema(f"bound {bound!r}")
    if low is None and high is None:
        return None
    return lambda value: (low is None or value >= low) and (high is None or value <= high)


def _enum(node: dict[str, Any]) -> Check | None:
    if "enum" not in node:
        return None
    if not all(isinstance(choice, str) for choice in node["enum"]):
        raise UnsupportedSchema("enum of non-strings")
    choices = frozenset(node["enum"])
    return lambda value: type(value) is str and value in choices
