"""The grammar of names in opdefs: what may name an op, a parameter, a domain or a folder.

Names end up in file paths, Python modules and generated text, so they are held to a
strict ASCII grammar: ops, inputs, outputs, attributes, type parameters, type sets and
rule arguments are identifiers; domains are dotted names such as ``ai.onnx.ml`` or
``com.example`` (``node_domain`` and ``aliases`` may also be the empty string); family
folders are one or more ``/``-separated identifiers. No ``..``, no spaces, no control,
bidi or zero-width characters.
"""
from __future__ import annotations

import re
from typing import Any, Iterator

from opspec.codegen.source import Location, Map, Seq

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Inputs and outputs may end in ``...`` (a variadic's name in older ONNX versions: ``outputs...``).
PARAMETER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.\.\.)?")
DOMAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_][A-Za-z0-9_-]*)*")
FOLDER = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
#: The longest name accepted.
MAX_NAME_LENGTH = 128

_IDENTIFIER_TEXT = "an identifier (ASCII letters, digits and '_', not starting with a digit)"
_DOMAIN_TEXT = "a domain name (dot-separated ASCII words, such as 'ai.onnx.ml' or 'com.example')"


def _bad(name: Any, pattern: re.Pattern[str]) -> bool:
    return type(name) is not str or len(name) > MAX_NAME_LENGTH or pattern.fullmatch(name) is None


def _problem(kind: str, name: Any, expected: str) -> str:
    shown = repr(name) if len(repr(name)) <= 60 else repr(name)[:57] + "..."
    return f"invalid {kind} name {shown}: expected {expected}"


def is_identifier(name: Any) -> bool:
    return not _bad(name, IDENTIFIER)


def is_domain(name: Any, allow_empty: bool = False) -> bool:
    return (allow_empty and name == "") or not _bad(name, DOMAIN)


def folder_problem(relative: str) -> str | None:
    """Why a family folder path (``a/b``, relative to its domain folder) is not acceptable, if it is not."""
    parts = relative.split("/") if relative else []
    if any(part in (".", "..") or _bad(part, FOLDER) for part in parts):
        return _problem("family folder", relative, "'/'-separated ASCII words (letters, digits, '_', '-', '.')")
    return None


def domain_folder_problem(name: str) -> str | None:
    return None if is_domain(name) else _problem("domain folder", name, _DOMAIN_TEXT)


def _keys(node: Any, kind: str, pattern: re.Pattern[str] = IDENTIFIER) -> Iterator[tuple[Location, str]]:
    if isinstance(node, Map):
        for key in node:
            if _bad(key, pattern):
                yield node.key_at(key), _problem(kind, key, _IDENTIFIER_TEXT)


def name_errors(document: Any, kind: str) -> Iterator[tuple[Location, str]]:
    """Every name in a schema-valid opdefs ``document`` of ``kind`` that breaks the grammar."""
    if not isinstance(document, Map):
        return
    if kind == "types":
        yield from _keys(document.get("type_sets"), "type set")
    elif kind == "domain":
        yield from _domain_names(document)
    elif kind == "op":
        yield from _op_names(document)


def _domain_names(document: Map) -> Iterator[tuple[Location, str]]:
    name = document.get("domain")
    if not is_domain(name):
        yield document.value_at("domain"), _problem("domain", name, _DOMAIN_TEXT)
    if "node_domain" in document and not is_domain(document["node_domain"], allow_empty=True):
        yield document.value_at("node_domain"), _problem("domain", document["node_domain"], _DOMAIN_TEXT)
    aliases = document.get("aliases")
    if isinstance(aliases, Seq):
        for index, alias in enumerate(aliases):
            if not is_domain(alias, allow_empty=True):
                yield aliases.item_at(index), _problem("domain", alias, _DOMAIN_TEXT)


def _op_names(document: Map) -> Iterator[tuple[Location, str]]:
    if not is_identifier(document.get("op")):
        yield document.value_at("op"), _problem("op", document.get("op"), _IDENTIFIER_TEXT)
    yield from _keys(document.get("docs"), "documented", PARAMETER)
    versions = document.get("versions")
    if not isinstance(versions, Map):
        return
    for body in versions.values():
        if not isinstance(body, Map):
            continue
        for section, kind, pattern in (("inputs", "input", PARAMETER), ("outputs", "output", PARAMETER),
                                       ("attributes", "attribute", IDENTIFIER),
                                       ("types", "type parameter", IDENTIFIER)):
            yield from _keys(body.get(section), kind, pattern)
        rule = body.get("inference")
        if isinstance(rule, Map):
            yield from _keys(rule, "rule argument")
