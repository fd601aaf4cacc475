"""``opspec cost``: what a model costs, per op type, per node and in total."""
from __future__ import annotations

import argparse
import re
import sys
from typing import Any, Sequence, TextIO

from opspec.cli_common import ExitCode, UserError, plural
from opspec.cli_models import STANDARD_STREAM, load, shown_name
from opspec.cli_report import write_json

#: Models with more nodes than this list op types only (unless ``--nodes``).
NODE_LIMIT = 200
_BINDING = re.compile(r"\s*([^\W\d][\w.]*)\s*=\s*([0-9]+)\s*")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``cost`` subcommand."""
    cost = commands.add_parser("cost", help="count a model's MACs, FLOPs, parameters and memory, as formulas "
                                            "of its input symbols")
    cost.add_argument("model", help="an ONNX model file (-: read from standard input)")
    cost.add_argument("--set", metavar="NAME=N,...", action="append", default=[],
                      help="give input symbols values (B=1,S=128); may be repeated")
    cost.add_argument("--nodes", action="store_true",
                      help=f"list every node even when the model has more than {NODE_LIMIT} (text output)")
    cost.add_argument("--format", choices=("text", "json"), default="text",
                      help="text for people (default) or json for scripts")
    cost.set_defaults(run=_cost)


def parse_bindings(texts: list[str]) -> dict[str, int]:
    """``["B=1,S=128"]`` as ``{"B": 1, "S": 128}``; a user error for anything else."""
    bindings: dict[str, int] = {}
    for text in texts:
        for part in text.split(","):
            match = _BINDING.fullmatch(part)
            if match is None:
                raise UserError(f"--set {text}: expected NAME=N (a symbol and a non-negative integer), got {part!r}")
            bindings[match.group(1)] = int(match.group(2))
    return bindings


def _cost(args: argparse.Namespace) -> int:
    from opspec.runtime.cost import cost
    from opspec.runtime.ir import ModelLoadError

    bindings = parse_bindings(args.set)
    source: Any = load(args.model) if args.model == STANDARD_STREAM else args.model
    try:
        report = cost(source, bindings)
    except ModelLoadError as error:
        raise UserError(str(error)) from None
    if args.format == "json":
        write_json(report.to_json(), sys.stdout)
        sys.stdout.write("\n")
    else:
        print_report(report, shown_name(args.model), args.nodes, sys.stdout)
    return ExitCode.OK


def _shown(value: Any) -> str:
    if value is None:
        return "?"
    if type(value) is int:
        return f"{value:,}"
    return str(value)


def _table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]], out: TextIO, left: int = 1) -> None:
    """Columns aligned: the first ``left`` to the left (names), the others to the right (counts)."""
    widths = [max(len(row[column]) for row in [header, *rows]) for column in range(len(header))]
    for row in [header, *rows]:
        cells = [cell.ljust(width) if column < left else cell.rjust(width)
                 for column, (cell, width) in enumerate(zip(row, widths))]
        out.write("  ".join(cells).rstrip() + "\n")


def print_report(report: Any, name: str, every_node: bool, out: TextIO) -> None:
    """The report as tables that read well in a terminal."""
    out.write(f"{name}: {plural(len(report.nodes), 'node')}")
    if report.symbols:
        out.write(f"; formulas of {', '.join(report.symbols)} (give values with --set "
                  f"{','.join(f'{s}=N' for s in report.symbols)})")
    out.write("\nFLOPs = 2 x MACs + other arithmetic; transcendental functions (exp, tanh, sqrt, ...) counted apart;"
              " ? = unknown\n\n")
    header = ("op type", "nodes", "MACs", "FLOPs", "transcendental", "bytes read", "bytes written")
    rows = [(o.op_type if o.domain in ("", "ai.onnx") else f"{o.domain}:{o.op_type}",
             f"{o.nodes:,}" + (f" ({o.unknown} ?)" if o.unknown else ""), _shown(o.cost.macs),
             _shown(o.cost.total_flops), _shown(o.cost.transcendental), _shown(o.cost.bytes_read),
             _shown(o.cost.bytes_written)) for o in report.by_op_type]
    total = report.total
    unknown = max(report.unknown_nodes.values()) if report.unknown_nodes else 0
    rows.append(("total" + (" (known nodes)" if unknown else ""), f"{len(report.nodes):,}", _shown(total.macs),
                 _shown(total.total_flops), _shown(total.transcendental), _shown(total.bytes_read),
                 _shown(total.bytes_written)))
    _table(header, rows, out)
    if unknown:
        counts = ", ".join(f"{measure} {count}" for measure, count in report.unknown_nodes.items() if count)
        out.write(f"  the totals leave out nodes whose cost is unknown ({counts}); they are lower bounds\n")
    if every_node or len(report.nodes) <= NODE_LIMIT:
        out.write("\n")
        node_rows = [(n.name, n.op_type, _shown(n.cost.macs), _shown(n.cost.total_flops),
                      _shown(n.cost.transcendental), _shown(n.cost.bytes_read), _shown(n.cost.bytes_written))
                     for n in report.nodes]
        _table(("node", "op type", "MACs", "FLOPs", "transcendental", "bytes read", "bytes written"), node_rows, out, left=2)
        notes = [(n.name, n.note) for n in report.nodes if n.note]
        for node, note in notes[:20]:
            out.write(f"  {node}: {note}\n")
        if len(notes) > 20:
            out.write(f"  ... and {plural(len(notes) - 20, 'more node')} of unknown cost\n")
    else:
        out.write(f"\n{plural(len(report.nodes), 'node')}: --nodes lists each\n")
    out.write(f"\nparameters: {report.parameters:,} in initializers, {report.weight_bytes:,} bytes"
              f" ({report.external_weight_bytes:,} stored outside the model file, counted without being read)\n")
    activations = f"activations: {_shown(report.activation_bytes)} bytes in {plural(len(report.activations), 'value')}"
    if report.unknown_activations:
        activations += f", {report.unknown_activations:,} of them of unknown size (not counted)"
    out.write(activations + f"; peak alive along the node order: {_shown(report.peak_activation_bytes)} bytes\n")
    kv = report.kv_cache
    if kv.past_inputs or kv.present_outputs:
        out.write(f"key/value cache: {_shown(kv.past_bytes)} bytes read from {plural(len(kv.past_inputs), 'past input')},"
                  f" {_shown(kv.present_bytes)} bytes written to {plural(len(kv.present_outputs), 'present output')}\n")
    for note in report.notes:
        out.write(f"note: {note}\n")
