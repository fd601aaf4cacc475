"""``opspec import``: draft a file per op of an onnx domain into an opdefs domain folder.

A batch never stops at one bad op: each op is drafted, skipped (its file exists and
``force`` is off) or failed (with the reason), and the report lists all of them. A new
domain folder gets a ``domain.yaml``; an op's family is the folder it already lives in,
else the one named, else the folder of the onnx source that defines it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from opspec.runtime.atomic_file import write_atomically
from opspec.codegen.importer import Kept, RuleChooser, TypeSetMatcher, draft_op, load_type_sets

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


def onnx_family(schema: Any) -> str:
    """The family of an op from where onnx defines it: ``.../defs/math/defs.cc`` is ``math``."""
    parts = Path(schema.file or "").parts
    if "defs" in parts and parts.index("defs") + 2 < len(parts):
        folder = parts[parts.index("defs") + 1]
        return FAMILY_NAMES.get(folder, folder)
    return DEFAULT_FAMILY


def _domain_yaml(domain: str) -> str:
    import onnx.defs

    low, high = onnx.defs.C.schema_version_map().get(domain, (1, 1))
    name = domain or "ai.onnx"
    lines = ["# yaml-language-server: $schema=../schema/domain.schema.json", f"domain: {name}"]
    if domain != name:
        lines += [f'node_domain: "{domain}"', f'aliases: ["{name}"]']
    lines += [f"opset: {{min: {low}, max: {high}}}", "summary: TODO"]
    return "\n".join(lines) + "\n"


def import_ops(op_names: Iterable[str], domain: str, target: Path, family: str | None = None,
               force: bool = False, rules: RuleChooser | None = None) -> ImportReport:
    """Draft ``op_names`` of onnx ``domain`` into the domain folder ``target``."""
    import onnx.defs

    domain = ONNX_DOMAINS.get(domain, domain)
    if domain not in onnx.defs.C.schema_version_map():
        raise UnknownDomain(f"onnx.defs has no domain {domain!r}")
    report = ImportReport()
    by_name: dict[str, list[Any]] = {}
    for schema in onnx.defs.get_all_schemas_with_history():
        if schema.domain == domain:
            by_name.setdefault(schema.name, []).append(schema)
    matcher = TypeSetMatcher(load_type_sets(target.parent / "types.yaml"))
    target.mkdir(parents=True, exist_ok=True)
    if not (target / "domain.yaml").exists():
        report.domain_file = target / "domain.yaml"
        write_atomically(report.domain_file, _domain_yaml(domain).encode("utf-8"))
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
            text = draft_op(schemas, matcher, rules, kept)
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(path, text.encode("utf-8"))
        except Exception as error:  # noqa: BLE001 - one bad op must not stop the batch
            report.failed.append((name, f"{type(error).__name__}: {error}"))
            continue
        report.drafted.append(path)
    return report
