"""The table a scan ends with: how many models came out how, and the problems most often found."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable

from opspec.batch.records import Status

#: Problem codes listed in the table (the most frequent; the rest are counted together).
TOP_CODES = 10


@dataclass(frozen=True)
class Summary:
    """What a scan did: models analysed by outcome, models skipped, and its wall time."""

    statuses: dict[str, int]
    failures: dict[str, int]
    #: Per problem code, how many models have it.
    codes: dict[str, int]
    skipped: int
    seconds: float

    @property
    def analysed(self) -> int:
        return sum(self.statuses.values())


def summarize(records: Iterable[dict[str, Any]], skipped: int, seconds: float) -> Summary:
    """The summary of the lines a scan wrote."""
    statuses: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    codes: Counter[str] = Counter()
    for record in records:
        statuses[record["status"]] += 1
        if record["status"] == Status.FAILED.value:
            failures[record["failure"]] += 1
        codes.update(record.get("problems", {}).keys())
        codes.update(f"runtime: {code}" for code in record.get("runtime", {}).get("problems", {}))
    return Summary({status.value: statuses[status.value] for status in Status}, dict(failures.most_common()),
                   dict(codes.most_common()), skipped, seconds)


def table(summary: Summary) -> str:
    """The summary as a few aligned lines of text."""
    rows: list[tuple[str, str]] = [(status, f"{count:,}") for status, count in summary.statuses.items()]
    rows += [(f"  failed: {failure}", f"{count:,}") for failure, count in summary.failures.items()]
    if summary.skipped:
        rows.append(("skipped (in the report already)", f"{summary.skipped:,}"))
    shown = list(summary.codes.items())[:TOP_CODES]
    if shown:
        rows.append(("models with problems of each code:", ""))
        rows += [(f"  {code}", f"{count:,}") for code, count in shown]
        rest = len(summary.codes) - len(shown)
        if rest:
            rows.append((f"  ({rest} more codes)", ""))
    width = max(len(label) for label, _ in rows)
    lines = [f"{label:<{width}}  {count:>7}".rstrip() for label, count in rows]
    rate = f", {summary.analysed / summary.seconds:,.1f} models/s" if summary.seconds > 0 and summary.analysed else ""
    lines.append(f"{summary.analysed:,} models analysed in {summary.seconds:,.1f} s{rate}")
    return "\n".join(lines)


__all__ = ["Summary", "summarize", "table"]
