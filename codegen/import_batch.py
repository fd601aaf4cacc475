"""``opspec import``: draft a file per op of an onnx domain into an opdefs domain folder.

A batch never stops at one bad op: each op is drafted, skipped (its file exists and
``force`` is off) or failed (with the reason), and the report lists all of them. A new
domain folder gets a ``domain.yaml``; an op's family is the folder it already lives in,
else the one named, else the folder of the onnx source that defines it.

Each version gets the rule the built-in op sets give the same op at that version; a
version with none gets an explicit ``inference: null``, and the report lists those ops.
Modelines name the JSON Schemas where the editor finds them (see
:mod:`opspec.codegen.schema_paths`), from a source checkout or an installed wheel.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from opspec.runtime.atomic_file import write_atomically
from opspec.codegen.importer import Kept, RuleChooser, TypeSetMatcher, draft_op, load_type_sets
from opspec.codegen.schema_paths import modeline
from opspec.codegen.vocabulary import inherited_types
from opspec.runtime.onnx_features import onnx_features

#: onnx source folders whose family name in opdefs differs.
FAMILY_NAMES = {"traditionalml": "ml", "object_detection": "detection", "controlflow": "control"}
DEFAULT_FAMILY = "misc"
ONNX_DOMAINS = {"ai.onnx": ""}


class UnknownDomain(LookupError):
    """The domain asked for is not one onnx defines."""


@dataclass
class ImportReport:
    """What a batch did, op by op."""

    drafted: list[Path] = field(default_factory=list)
    skipped: list[Path] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    domain_file: Path | None = None
    #: Drafted ops with a version that no known rule fits (written ``inference: null``).
    without_rule: list[str] = field(default_factory=list)
    #: What the installed onnx could not tell, and what the drafts say instead.
    notes: list[str] = field(default_factory=list)


def onnx_family(schema: Any) -> str:
    """The family of an op from where onnx defines it: ``.../defs/math/defs.cc`` is ``math``."""
    parts = Path(schema.file or "").parts
    if "defs" in parts and parts.index("defs") + 2 < len(parts):
        folder = parts[parts.index("defs") + 1]
        return FAMILY_NAMES.get(folder, folder)
    return DEFAULT_FAMILY


def builtin_rules(domain: str) -> RuleChooser:
    """The rule (with its arguments) that the built-in op sets, standard then onnxruntime's,
    give an op of ``domain`` at a version; None where they have none."""
    from opspec.runtime.defs import INFERENCE
    from opspec.runtime.registry import SchemaError

    def choose(name: str, since: int) -> str | dict[str, Any] | None:
        try:
            schema = INFERENCE.get_schema(name, since, domain)
        except SchemaError:
            return None
        rule = schema.inference
        if rule is None or schema.since_version != since:
            return None
        return {"rule": rule.name, **rule.args} if rule.args else rule.name

    return choose


def _recording(rules: RuleChooser, misses: set[str]) -> RuleChooser:
    """``rules``, noting in ``misses`` each op it finds no rule for."""
    def choose(name: str, since: int) -> str | dict[str, Any] | None:
        rule = rules(name, since)
        if rule is None:
            misses.add(name)
        return rule

    return choose


def _domain_yaml(domain: str, path: Path) -> str:
    import onnx.defs

    low, high = onnx.defs.C.schema_version_map().get(domain, (1, 1))
    name = domain or "ai.onnx"
    lines = [modeline("domain", path), f"domain: {name}"]
    if domain != name:
        lines += [f'node_domain: "{domain}"', f'aliases: ["{name}"]']
    lines += [f"opset: {{min: {low}, max: {high}}}", "summary: TODO"]
    return "\n".join(lines) + "\n"


def import_ops(op_names: Iterable[str], domain: str, target: Path, family: str | None = None,
               force: bool = False, rules: RuleChooser | None = None) -> ImportReport:
    """Draft ``op_names`` of onnx ``domain`` into the domain folder ``target``.

    :class:`~opspec.runtime.onnx_features.OnnxUnavailable` when onnx is missing or too old.
    """
    features = onnx_features()
    import onnx.defs

    domain = ONNX_DOMAINS.get(domain, domain)
    if domain not in onnx.defs.C.schema_version_map():
        raise UnknownDomain(f"onnx.defs has no domain {domain!r}")
    report = ImportReport()
    if not features.node_determinism:
        report.notes.append(f"onnx {features.version} does not record whether an op is deterministic (onnx 1.20 "
                            "and later do): drafts say `determinism: unknown`; say which where you know it")
    by_name: dict[str, list[Any]] = {}
    for schema in onnx.defs.get_all_schemas_with_history():
        if schema.domain == domain:
            by_name.setdefault(schema.name, []).append(schema)
    tree_types = load_type_sets(target.parent / "types.yaml")
    shared = inherited_types(target.parent)
    matcher = TypeSetMatcher({**(load_type_sets(shared) if shared else {}), **tree_types})
    misses: set[str] = set()
    chooser = _recording(rules or builtin_rules(domain), misses)
    target.mkdir(parents=True, exist_ok=True)
    if not (target / "domain.yaml").exists():
        report.domain_file = target / "domain.yaml"
        write_atomically(report.domain_file, _domain_yaml(domain, report.domain_file).encode("utf-8"))
    for name in dict.fromkeys(n.strip() for n in op_names if n.strip()):
        schemas = by_name.get(name)
        if not schemas:
            report.failed.append((name, f"onnx.defs has no op {name!r} in domain {domain or 'ai.onnx'!r}"))
            continue
        existing = next(iter(sorted(target.rglob(f"{name}.yaml"))), None)
        if existing is not None and not force:
            report.skipped.append(existing)
            continue
        path = existing or target / (family or onnx_family(schemas[0])) / f"{name}.yaml"
        try:
            kept = Kept.read(existing) if existing is not None else None
            text = draft_op(schemas, matcher, chooser, kept, modeline("op", path))
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(path, text.encode("utf-8"))
        except Exception as error:  # noqa: BLE001 - one bad op must not stop the batch
            report.failed.append((name, f"{type(error).__name__}: {error}"))
            continue
        report.drafted.append(path)
        if name in misses:
            report.without_rule.append(name)
    return report
