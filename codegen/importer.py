"""Draft opdefs YAML from an op set registered in ``onnx.defs``.

Only facts are imported: names, versions, types, options, differentiability, attribute
types and defaults, support level, determinism and function bodies. Descriptions are
left as ``TODO`` for a person to write; nothing of onnx's own documentation is copied.
When a file is redrafted, what a person wrote in it (summary, doc, descriptions,
inference bindings, cost blocks, notes) is kept. ``onnx`` is imported only when this runs.
"""
from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import yaml

from opspec.codegen.history import format_value, param_spec
from opspec.codegen.type_sets import wrapped_set
from opspec.runtime.types import normalize_type_string

TODO = "TODO"
RuleChooser = Callable[[str, int], "str | dict[str, Any] | None"]
#: The modeline of a draft in the built-in tree's layout (``<tree>/<domain>/<family>/<Op>.yaml``).
OP_MODELINE = "# yaml-language-server: $schema=../../schema/op.schema.json"
#: Written beside ``inference: null`` when no rule is known for a version.
NO_RULE_NOTE = "  # no rule known: outputs stay untyped until one is named or written"
_UNSET = object()


@dataclass(frozen=True)
class _Version:
    since: int
    inputs: tuple[tuple[str, str], ...]
    outputs: tuple[tuple[str, str], ...]
    attributes: dict[str, str]
    types: dict[str, tuple[str, ...]]
    deprecated: bool
    support_level: str
    determinism: str
    function: tuple[tuple[int, str], ...]
    context_dependent: tuple[int, ...]
    allow: tuple[str, ...]


@dataclass(frozen=True)
class Kept:
    """What a person wrote in an existing file: kept when the file is drafted again."""

    summary: str = TODO
    doc: str = TODO
    docs: dict[str, str] = field(default_factory=dict)
    inference: dict[int, Any] = field(default_factory=dict)
    notes: dict[int, str] = field(default_factory=dict)
    cost: dict[int, Any] = field(default_factory=dict)

    @classmethod
    def read(cls, path: Path) -> "Kept":
        document = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        versions = document.get("versions") or {}
        return cls(
            summary=document.get("summary", TODO),
            doc=document.get("doc", TODO),
            docs=dict(document.get("docs") or {}),
            inference={int(k): v["inference"] for k, v in versions.items() if isinstance(v, dict) and "inference" in v},
            notes={int(k): v["notes"] for k, v in versions.items() if isinstance(v, dict) and "notes" in v},
            cost={int(k): v["cost"] for k, v in versions.items() if isinstance(v, dict) and "cost" in v},
        )


def _scalar(text: str) -> str:
    """``text`` as a YAML scalar: plain when it reads back unchanged, else quoted."""
    try:
        if yaml.safe_load(f"k: {text}") == {"k": text}:
            return text
    except yaml.YAMLError:
        pass
    return json.dumps(text)


def _attribute_spec(attribute: Any) -> str:
    from onnx import AttributeProto, helper

    kind = attribute.type.name.lower()
    if attribute.required:
        return f"{kind} required"
    default = attribute.default_value
    if default is not None and default.type != AttributeProto.UNDEFINED:
        return f"{kind} = {format_value(helper.get_attribute_value(default), bare_words=True)}"
    return kind


def body_text(function: Any) -> str:
    """The nodes of an onnx ``FunctionProto`` in ONNX text syntax, one statement per line."""
    import onnx.printer

    text = onnx.printer.to_text(function)
    inner = text[text.index("{") + 1: text.rindex("}")]
    return textwrap.dedent(inner.strip("\n")).rstrip() + "\n"


def _functions(schema: Any) -> tuple[tuple[int, str], ...]:
    from onnx import FunctionProto

    return tuple((opset, body_text(FunctionProto.FromString(schema.get_function_with_opset_version(opset))))
                 for opset in schema.function_opset_versions)


def _allow(schema: Any) -> tuple[str, ...]:
    allow = []
    for params in (schema.inputs, schema.outputs):
        options = [p.option.name for p in params]
        if any(o == "Single" and "Optional" in options[:i] for i, o in enumerate(options)):
            allow.append("required-after-optional")
            break
    used = {p.type_str for p in schema.inputs + schema.outputs}
    if any(t.type_param_str not in used for t in schema.type_constraints):
        allow.append("unused-type-parameter")
    return tuple(allow)


def _version(schema: Any) -> _Version:
    return _Version(
        since=schema.since_version,
        inputs=tuple((p.name, param_spec(p)) for p in schema.inputs),
        outputs=tuple((p.name, param_spec(p)) for p in schema.outputs),
        attributes={name: _attribute_spec(a) for name, a in sorted(schema.attributes.items())},
        types={t.type_param_str: tuple(t.allowed_type_strs) for t in schema.type_constraints},
        deprecated=bool(schema.deprecated),
        support_level=schema.support_level.name.lower(),
        determinism=_determinism(schema),
        function=_functions(schema) if schema.has_function else (),
        context_dependent=tuple(schema.context_dependent_function_opset_versions),
        allow=_allow(schema),
    )


def _determinism(schema: Any) -> str:
    """The op's determinism; ``unknown`` from an onnx that does not record it (before 1.20)."""
    recorded = getattr(schema, "node_determinism", None)
    return "unknown" if recorded is None else str(recorded.name).lower()


class TypeSetMatcher:
    """Expresses a list of types with the named sets of a tree, largest sets first."""

    def __init__(self, named: dict[str, tuple[str, ...]]):
        self._named = sorted(named.items(), key=lambda item: (-len(item[1]), item[0]))

    def express(self, types: Iterable[str]) -> list[str]:
        order = [normalize_type_string(t) for t in types]
        remaining = set(order)
        chosen = []
        for name, members in self._named:
            if members and set(members) <= remaining:
                chosen.append(name)
                remaining -= set(members)
        return chosen + [t for t in order if t in remaining]


def _block(key: str, value: str, indent: str) -> list[str]:
    return [f"{indent}{key}: |"] + [f"{indent}  {line}" if line else "" for line in value.rstrip("\n").split("\n")]


def _function_lines(version: _Version) -> list[str]:
    if not version.function and not version.context_dependent:
        return ["  function: null"]
    lines = ["  function:"]
    for opset, text in version.function:
        lines += _block(str(opset), text, "    ")
    if version.context_dependent:
        lines.append(f"    context_dependent: [{', '.join(map(str, version.context_dependent))}]")
    return lines


def draft_op(schemas: list[Any], matcher: TypeSetMatcher, rules: RuleChooser | None = None,
             kept: Kept | None = None, modeline: str = OP_MODELINE) -> str:
    """YAML text for one operator, given all its onnx schemas (and what a person wrote before).

    Every version states its rule or, where none is known, ``inference: null`` with a note:
    a draft never leaves a gap that reads as an oversight.
    """
    kept = kept or Kept()
    versions = [_version(s) for s in sorted(schemas, key=lambda s: s.since_version)]
    name = schemas[0].name
    lines = [modeline, f"op: {name}"]
    lines += _text("summary", kept.summary) + _text("doc", kept.doc) + ["versions:"]
    previous: _Version | None = None
    previous_rule: Any = _UNSET
    order: list[str] = []
    names: dict[str, None] = {}
    for version in versions:
        body = _signature_lines(previous, version, matcher)
        order = [n for n in order if n in version.types] + [n for n in version.types if n not in order]
        if order != list(version.types):
            body.append(f"  type_order: [{', '.join(version.types)}]")
            order = list(version.types)
        rule = _chosen_rule(kept, rules, name, version.since, previous_rule)
        if rule != previous_rule:
            body.append(f"  inference: {_rule_text(rule)}" + (NO_RULE_NOTE if rule is None else ""))
            previous_rule = rule
        if version.since in kept.cost:
            body.append(f"  cost: {_cost_text(kept.cost[version.since])}")
        body += _changed_flags(previous, version)
        if version.allow:
            body.append(f"  allow: [{', '.join(version.allow)}]")
        if version.since in kept.notes:
            body += _text("  notes", kept.notes[version.since])
        elif previous is not None and not body:
            body.append(f"  notes: {TODO}")
        lines.append(f"  {version.since}:")
        lines.extend("  " + line if line else "" for line in body)
        names.update(dict.fromkeys(n for n, _ in version.inputs + version.outputs))
        names.update(dict.fromkeys(version.attributes))
        names.update(dict.fromkeys(version.types))
        previous = version
    lines.append("docs:")
    for key in names:
        lines += _text(f"  {key}", kept.docs.get(key, TODO))
    return "\n".join(lines) + "\n"


def _signature_lines(previous: _Version | None, version: _Version, matcher: TypeSetMatcher) -> list[str]:
    """Inputs and outputs when they changed, then the attributes and type parameters that did."""
    lines: list[str] = []
    if previous is None or (version.inputs, version.outputs) != (previous.inputs, previous.outputs):
        for section, params in (("inputs", version.inputs), ("outputs", version.outputs)):
            lines.append(f"  {section}:" + (" {}" if not params else ""))
            lines.extend(f"    {key}: {_scalar(spec)}" for key, spec in params)
    attributes = _delta(previous.attributes if previous else {}, version.attributes)
    if attributes:
        lines.append("  attributes:")
        lines.extend(f"    {key}: {'null' if spec is None else _scalar(spec)}" for key, spec in attributes.items())
    types = _delta(previous.types if previous else {}, version.types)
    if types:
        lines.append("  types:")
        for key, allowed in types.items():
            lines.append(f"    {key}: {'null' if allowed is None else _type_list(matcher.express(allowed))}")
    return lines


def _type_list(items: list[str]) -> str:
    """Set names and type strings as YAML: one plain item, or a flow list (map types quoted, for their comma)."""
    items = [json.dumps(item) if "," in item else item for item in items]
    return items[0] if len(items) == 1 else "[" + ", ".join(items) + "]"


def _text(key: str, value: str) -> list[str]:
    if "\n" in value.rstrip("\n"):
        return _block(key.strip(), value, key[: len(key) - len(key.lstrip())])
    return [f"{key}: {_scalar(value.strip())}"]


def _changed_flags(previous: _Version | None, version: _Version) -> list[str]:
    lines = []
    before = previous or _Version(0, (), (), {}, {}, False, "common", "deterministic", (), (), ())
    if version.deprecated != before.deprecated:
        lines.append(f"  deprecated: {'true' if version.deprecated else 'false'}")
    if version.support_level != before.support_level:
        lines.append(f"  support_level: {version.support_level}")
    if version.determinism != before.determinism:
        lines.append(f"  determinism: {version.determinism}")
    if (version.function, version.context_dependent) != (before.function, before.context_dependent):
        lines += _function_lines(version)
    return lines


def _chosen_rule(kept: Kept, rules: RuleChooser | None, name: str, since: int, previous: Any) -> Any:
    if kept.inference:
        return kept.inference.get(since, previous)
    return rules(name, since) if rules else None


def _cost_text(block: Any) -> str:
    """A kept ``cost`` block on one line: a kind's name, null, or a flow mapping of quoted texts."""
    if block is None:
        return "null"
    if isinstance(block, dict):
        return "{" + ", ".join(f"{key}: {json.dumps(str(value))}" for key, value in block.items()) + "}"
    return _scalar(str(block))


def _rule_text(rule: Any) -> str:
    if rule is None:
        return "null"
    if isinstance(rule, str):
        return rule
    return "{" + ", ".join(f"{key}: {value if isinstance(value, str) and value.isidentifier() else json.dumps(value)}"
                           for key, value in rule.items()) + "}"


def _delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    changes: dict[str, Any] = {key: value for key, value in after.items() if before.get(key) != value}
    changes.update({key: None for key in before if key not in after})
    return changes


def load_type_sets(types_file: Path) -> dict[str, tuple[str, ...]]:
    """The named type sets of a tree, fully expanded."""
    if not types_file.is_file():
        return {}
    declared = yaml.safe_load(types_file.read_text(encoding="utf-8"))["type_sets"]
    expanded: dict[str, tuple[str, ...]] = {}

    def expand(name: str) -> tuple[str, ...]:
        if name not in expanded:
            items: dict[str, None] = {}
            for item in declared[name]:
                wrapped = wrapped_set(item)
                if item in declared:
                    items.update(dict.fromkeys(expand(item)))
                elif wrapped is not None and wrapped[1] in declared:
                    items.update(dict.fromkeys(f"{wrapped[0]}({t})" for t in expand(wrapped[1])))
                else:
                    items[normalize_type_string(item)] = None
            expanded[name] = tuple(items)
        return expanded[name]

    for name in declared:
        expand(name)
    return expanded
