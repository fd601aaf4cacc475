"""The report of ``opspec infer``: built once from what inference found, then rendered as text for
people or as JSON for scripts (both say the same things)."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Iterable, TextIO

from opspec.cli_common import ExitCode, plural
from opspec.cli_gate import summary_line
from opspec.cli_models import shown_output
from opspec.cli_report import ValueRow, print_summary, print_table, problem_json, values_json, write_json


@dataclass(frozen=True)
class InferReport:
    """What ``opspec infer`` says about one model.

    ``rows`` gives the per-value rows (called once, when they are shown); ``counts`` the values
    per origin, when only they are shown (None: the rows are). ``unknown`` lists ``(domain,
    op_type, reason)``, ``without_rule`` ``(domain, op_type, version)``, ``implied``
    ``(domain, version)``, ``copied`` ``(from, to)`` of the external data copied beside ``output``.
    """

    name: str
    status: int
    node_count: int
    value_count: int
    rows: Callable[[], Iterable[ValueRow]]
    counts: Counter[str] | None
    errors: tuple[Any, ...]
    notes: tuple[Any, ...]
    unknown: tuple[tuple[str, str, str], ...]
    without_rule: tuple[tuple[str, str, int], ...]
    implied: tuple[tuple[str, int], ...]
    refusals: tuple[str, ...]
    output: str | None
    copied: tuple[tuple[str, str], ...]

    @property
    def has_problems(self) -> bool:
        """Whether anything a quiet run still prints was found."""
        return bool(self.errors or self.unknown or self.without_rule or self.refusals)


def infer_report(name: str, status: int, result: Any, value_count: int, rows: Callable[[], Iterable[ValueRow]],
                 counts: Counter[str] | None, without_rule: Iterable[tuple[str, str, int]], output: str | None,
                 copied: Iterable[tuple[str, str]]) -> InferReport:
    """The report of an inference ``result`` (an :class:`~opspec.runtime.inference.api.InferenceResult`, whose
    per-value tables may have been let go: ``value_count`` counts its values)."""
    return InferReport(
        name, status, result.node_count, value_count, rows, counts, tuple(result.errors), tuple(result.notes),
        tuple((domain, op_type, reason) for (domain, op_type), reason in sorted(result.unknown_reasons.items())),
        tuple(without_rule), tuple(sorted(result.implied_opsets.items())), tuple(result.external_refusals),
        output, tuple(copied))


def render_json(report: InferReport, out: TextIO) -> None:
    """The report as one JSON document."""
    write_json({
        "ok": report.status == ExitCode.OK, "nodes": report.node_count,
        "values": values_json(report.rows()),
        "errors": [problem_json(error) for error in report.errors],
        "notes": [problem_json(note) for note in report.notes],
        "unknown_ops": [{"domain": domain or "ai.onnx", "op_type": op_type, "reason": reason}
                        for domain, op_type, reason in report.unknown],
        "ops_without_rule": [{"domain": domain, "op_type": op_type, "version": version}
                             for domain, op_type, version in report.without_rule],
        "external_data_refused": list(report.refusals),
        "implied_opsets": [{"domain": domain, "version": version} for domain, version in report.implied],
        "output": report.output,
        "external_data_copied": [{"from": data, "to": destination} for data, destination in report.copied],
    }, out)


def render_text(report: InferReport, out: TextIO, quiet: bool) -> None:
    """The report as text: the values (or their counts), each kind of problem, and a summary line;
    ``quiet`` leaves out the values, the notes and what was written, and everything when nothing is wrong."""
    if quiet and not report.has_problems:
        return
    if not quiet:
        if report.counts is None:
            print_table(report.rows, out)
        else:
            print_summary(report.counts, out)
    _section(out, report.errors, f"{plural(len(report.errors), 'error')}:", str)
    if not quiet:
        _section(out, report.notes, f"{plural(len(report.notes), 'note')} (graphs that may not run would fail if "
                                    "they ran; not errors of the model):", str)
    _section(out, report.unknown, f"{plural(len(report.unknown), 'unknown op')} (outputs left untyped):",
             lambda item: f"{item[1]} (domain '{item[0] or 'ai.onnx'}'): {item[2]}")
    _section(out, report.without_rule, f"{plural(len(report.without_rule), 'op')} with a schema but no inference "
                                       "rule (outputs left untyped):",
             lambda item: f"{item[1]} version {item[2]} (domain '{item[0]}')")
    if not quiet:
        _section(out, report.implied, f"{plural(len(report.implied), 'domain')} used without an opset import "
                                      "(inferred at its newest version, as onnxruntime runs it):",
                 lambda item: f"{item[0]} version {item[1]}")
    _section(out, report.refusals, f"{plural(len(report.refusals), 'tensor')} with external data not read:", str)
    if report.output and not quiet:
        print("", file=out)
        for data, destination in report.copied:
            print(f"copied external data {data} to {destination}", file=out)
        print(f"wrote {shown_output(report.output)}", file=out)
    print("\n" + summary_line(report.name, report.node_count, report.value_count, len(report.errors),
                              len(report.unknown), len(report.without_rule)), file=out)


def _section(out: TextIO, items: tuple[Any, ...], heading: str, line: Callable[[Any], str]) -> None:
    """A heading and one indented line per item; nothing when there are none."""
    if not items:
        return
    print(f"\n{heading}", file=out)
    for item in items:
        print(f"  {line(item)}", file=out)


__all__ = ["InferReport", "infer_report", "render_json", "render_text"]
