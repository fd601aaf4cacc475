"""The Python module of one op: its schemas as literals, values shared by several versions
named once at module level, and the schema names it must import."""
from __future__ import annotations

from collections import Counter
from typing import Any

from opspec.codegen.compiler import CompiledOp
from opspec.codegen.pyliteral import LiteralWriter

SCHEMA_NAMES = ("Attribute", "AttrType", "DifferentiationCategory", "FormalParameter", "FormalParameterOption",
                "FunctionBody", "NodeDeterminism", "OpSchema", "RuleRef", "SupportType", "TypeConstraintParam",
                "ValueConstraint")
_HOIST_MIN_LENGTH = 60


def module_parts(op: CompiledOp) -> tuple[str, list[tuple[str, str]], list[str]]:
    """The module's body (the schemas), its named constants ``(name, source)`` in definition
    order, and the names of SCHEMA_NAMES it uses."""
    writer = LiteralWriter()
    definitions = _define(_constants(op), writer)
    body = writer.write(op.schemas)
    module_text = body + "".join(text for _, text in definitions)
    return body, definitions, _used_names(module_text)


def _constants(op: CompiledOp) -> list[tuple[Any, str]]:
    """Values worth naming once at module level, in definition order.

    The op's doc, long texts and type sets used more than once, then parameter,
    attribute and type-constraint records shared by several versions (so versions that
    did not change them share one object).
    """
    counts: Counter[Any] = Counter()
    records: Counter[Any] = Counter()
    for schema in op.schemas:
        params = schema.inputs + schema.outputs
        counts.update(p.types for p in params)
        counts.update(p.description for p in params)
        counts.update(a.description for a in schema.attributes.values())
        counts.update(t.description for t in schema.type_constraints)
        records.update(params + tuple(schema.attributes.values()) + schema.type_constraints)
    repeated = [value for value, count in counts.items() if count > 1]
    texts = [v for v in repeated if isinstance(v, str) and len(v) >= _HOIST_MIN_LENGTH and v != op.decl.doc]
    sets = [v for v in repeated if isinstance(v, frozenset) and len(v) > 1]
    shared = [value for value, count in records.items() if count > 1]
    named: list[tuple[Any, str]] = [(op.decl.doc, "DOC")] if op.decl.doc else []
    named += [(text, f"_TEXT_{index}") for index, text in enumerate(texts)]
    named += [(types, f"_TYPES_{index}") for index, types in enumerate(sets)]
    prefixes = {"FormalParameter": "_PARAM", "Attribute": "_ATTR", "TypeConstraintParam": "_TYPE_PARAM"}
    numbering: Counter[str] = Counter()
    for value in shared:
        prefix = prefixes[type(value).__name__]
        named.append((value, f"{prefix}_{numbering[prefix]}"))
        numbering[prefix] += 1
    return named


def _define(constants: list[tuple[Any, str]], writer: LiteralWriter) -> list[tuple[str, str]]:
    """Source for each constant, using only the constants defined before it (``writer`` then
    writes each of them by its name)."""
    lines = []
    for value, name in constants:
        lines.append((name, writer.write(value)))
        writer.name(value, name)
    return lines


def _used_names(text: str) -> list[str]:
    """The names of SCHEMA_NAMES that ``text`` uses as whole words, in their order."""
    return [name for name in SCHEMA_NAMES if _has_word(text, name)]


def _has_word(text: str, word: str) -> bool:
    """Whether ``word`` occurs in ``text`` as a whole word (as ``\\bword\\b`` would find it; a
    substring search is much faster than a regular expression that starts with ``\\b``)."""
    start = text.find(word)
    while start >= 0:
        end = start + len(word)
        if not (start and _word_character(text[start - 1])) and not (end < len(text) and _word_character(text[end])):
            return True
        start = text.find(word, start + 1)
    return False


def _word_character(character: str) -> bool:
    return character.isalnum() or character == "_"
