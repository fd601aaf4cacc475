"""Draft opdefs YAML from an existing op set registered in ``onnx.defs``.

Only facts are imported: names, versions, types, options, differentiability, attribute
types and defaults. Descriptions are left as ``TODO`` for a person to write; nothing of
onnx's own documentation is copied. The draft uses the delta version model and the named
type sets of the target tree. ``onnx`` is imported only when this runs.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

import yaml

from opspec.codegen.history import format_value, param_spec
from opspec.runtime.types import normalize_type_string

TODO = "TODO"
RuleChooser = Callable[[str, int], "str | dict[str, Any] | None"]


@dataclass(frozen=True)
class _Param:
    name: str
    spec: str


@dataclass(frozen=True)
class _Version:
    since: int
    inputs: tuple[_Param, ...]
    outputs: tuple[_Param, ...]
    attributes: dict[str, str]
    types: dict[str, tuple[str, ...]]
    deprecated: bool


def _scalar(text: str) -> str:
    """``text`` as a YAML scalar: plain when it reads back unchanged, else quoted."""
    try:
        if yaml.safe_load(f"k: {text}") == {"k": text}:
            return text
    except yaml.YAMLError:
        pass
    return json.dumps(text)


def _attribute_spec(attribute: Any) -> str:
    from onnx import helper

    kind = attribute.type.name.lower()
    if attribute.required:
        return f"{kind} required"
    default = attribute.default_value
    if default is not None and default.type != 0:
        return f"{kind} = {format_value(helper.get_attribute_value(default), bare_words=True)}"
    return kind


def _version(schema: Any) -> _Version:
    return _Version(
        since=schema.since_version,
        inputs=tuple(_Param(p.name, param_spec(p)) for p in schema.inputs),
        outputs=tuple(_Param(p.name, param_spec(p)) for p in schema.outputs),
        attributes={name: _attribute_spec(a) for name, a in sorted(schema.attributes.items())},
        types={t.type_param_str: tuple(t.allowed_type_strs) for t in schema.type_constraints},
        deprecated=bool(schema.deprecated),
    )


class TypeSetMatcher:
    """Expresses a list of types with the named sets of a tree, largest sets first."""

    def __init__(self, named: dict[str, tuple[str, ...]]):
        self._named = sorted(named.items(), key=lambda item: (-len(item[1]), item[0]))

    def express(self, types: Iterable[str]) -> list[str]:
        remaining = {normalize_type_string(t) for t in types}
        chosen = []
        for name, members in self._named:
            if members and set(members) <= remaining:
                chosen.append(name)
                remaining -= set(members)
        order = [normalize_type_string(t) for t in types]
        return chosen + [t for t in order if t in remaining]


def draft_op(schemas: list[Any], matcher: TypeSetMatcher, rules: RuleChooser | None = None) -> str:
    """YAML text for one operator, given all its onnx schemas."""
    versions = [_version(s) for s in sorted(schemas, key=lambda s: s.since_version)]
    name = schemas[0].name
    lines = [
        "# yaml-language-server: $schema=../../schema/op.schema.json",
        f"op: {name}",
        f"summary: {TODO}",
        f"doc: {TODO}",
        "versions:",
    ]
    previous: _Version | None = None
    previous_rule: Any = None
    names: dict[str, None] = {}
    for version in versions:
        body: list[str] = []
        if previous is None or (version.inputs, version.outputs) != (previous.inputs, previous.outputs):
            for section, params in (("inputs", version.inputs), ("outputs", version.outputs)):
                body.append(f"  {section}:" + (" {}" if not params else ""))
                body.extend(f"    {p.name}: {_scalar(p.spec)}" for p in params)
        attributes = _delta(previous.attributes if previous else {}, version.attributes)
        if attributes:
            body.append("  attributes:")
            body.extend(f"    {key}: {'null' if spec is None else _scalar(spec)}" for key, spec in attributes.items())
        types = _delta(previous.types if previous else {}, version.types)
        if types:
            body.append("  types:")
            for key, allowed in types.items():
                if allowed is None:
                    body.append(f"    {key}: null")
                else:
                    items = matcher.express(allowed)
                    body.append(f"    {key}: " + (items[0] if len(items) == 1 else "[" + ", ".join(items) + "]"))
        rule = rules(name, version.since) if rules else None
        if rule != previous_rule:
            body.append(f"  inference: {_rule_text(rule)}")
            previous_rule = rule
        if previous is not None and version.deprecated != previous.deprecated:
            body.append(f"  deprecated: {'true' if version.deprecated else 'false'}")
        elif previous is None and version.deprecated:
            body.append("  deprecated: true")
        if previous is not None and not body:
            body.append(f"  notes: {TODO}")
        lines.append(f"  {version.since}:")
        lines.extend("  " + line for line in body)
        names.update(dict.fromkeys(p.name for p in version.inputs + version.outputs))
        names.update(dict.fromkeys(version.attributes))
        names.update(dict.fromkeys(version.types))
        previous = version
    lines.append("docs:")
    lines.extend(f"  {key}: {TODO}" for key in names)
    return "\n".join(lines) + "\n"


def _rule_text(rule: Any) -> str:
    if rule is None:
        return "null"
    if isinstance(rule, str):
        return rule
    return "{" + ", ".join(f"{key}: {value}" for key, value in rule.items()) + "}"


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
                items.update(dict.fromkeys(expand(item) if item in declared else (normalize_type_string(item),)))
            expanded[name] = tuple(items)
        return expanded[name]

    for name in declared:
        expand(name)
    return expanded


def import_ops(op_names: Iterable[str], domain: str, target: Path, family_of: Callable[[str], str],
               rules: RuleChooser | None = None) -> list[Path]:
    """Write a draft file per op under ``target/<family>/``; return the paths written."""
    import onnx.defs

    matcher = TypeSetMatcher(load_type_sets(target.parent / "types.yaml"))
    wanted = set(op_names)
    by_name: dict[str, list[Any]] = {}
    for schema in onnx.defs.get_all_schemas_with_history():
        if schema.name in wanted and schema.domain == domain:
            by_name.setdefault(schema.name, []).append(schema)
    missing = wanted - set(by_name)
    if missing:
        raise KeyError(f"not in onnx.defs for domain {domain!r}: {', '.join(sorted(missing))}")
    written = []
    for name, schemas in sorted(by_name.items()):
        path = target / family_of(name) / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(draft_op(schemas, matcher, rules), encoding="utf-8")
        written.append(path)
    return written
