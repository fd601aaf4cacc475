"""Content of the docs pages beyond one operator: the inference status page, the type
sets page, and the change-class badges every version carries."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from opspec.codegen.compiler import CompiledDomain
from opspec.runtime.schema import OpSchema

#: Node-suite outcomes, best first (tests/conformance/harness.py defines them).
SUITE_ORDER = ("EXACT", "PARTIAL", "MISSING", "WRONG", "ERROR")


def badge(change_class: str) -> str:
    """A version's change class as an inline badge (empty for a first version)."""
    return f"<kbd>{change_class}</kbd>" if change_class else ""


def version_anchor(version: int) -> str:
    """The id of a version's entry in its op page's history."""
    return f"version-{version}"


@dataclass(frozen=True)
class StatusRow:
    """One operator version on the status page."""

    op: str
    schema: OpSchema
    suite: str  # node-suite counts for the op ("" when unknown), shown on its newest version


def status_rows(domain: CompiledDomain, suite: dict[str, str] | None) -> list[StatusRow]:
    """Every version of every op in ``domain``, newest first within an op."""
    counts = suite_counts(domain, suite) if suite else {}
    rows = []
    for op in domain.ops:
        for index, schema in enumerate(reversed(op.schemas)):
            rows.append(StatusRow(op.decl.name, schema, counts.get(op.decl.name, "") if index == 0 else ""))
    return rows


def suite_counts(domain: CompiledDomain, suite: dict[str, str]) -> dict[str, str]:
    """Per op, its node-suite outcomes as text (``12 EXACT, 2 PARTIAL``).

    Cases are matched to operators by name, as the suite names them: ``test_<op>`` or
    ``test_<op in snake case>``, followed by ``_``, a digit or nothing; the longest match wins.
    Only the default ONNX domain has a node suite.
    """
    if domain.decl.node_domain not in ("", "ai.onnx"):
        return {}
    prefixes: dict[str, str] = {}
    for op in domain.ops:
        name = op.decl.name
        prefixes[f"test_{name.lower()}"] = name
        prefixes[f"test_{re.sub(r'(?<=[a-z0-9])(?=[A-Z])', '_', name).lower()}"] = name
    by_op: dict[str, Counter[str]] = {}
    for case, outcome in suite.items():
        matches = [prefix for prefix in prefixes
                   if case.startswith(prefix) and case[len(prefix):len(prefix) + 1] in ("", "_", *"0123456789")]
        if matches:
            by_op.setdefault(prefixes[max(matches, key=len)], Counter())[outcome] += 1
    return {op: ", ".join(f"{counts[o]} {o}" for o in SUITE_ORDER if counts[o]) for op, counts in by_op.items()}


__all__ = ["SUITE_ORDER", "StatusRow", "badge", "status_rows", "suite_counts", "version_anchor"]
