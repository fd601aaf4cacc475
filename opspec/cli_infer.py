"""``opspec infer`` and ``opspec check``: type/shape inference and validation of a model."""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Iterable

from opspec.cli_common import ExitCode, UserError, plural
from opspec.cli_gate import Progress, add_gate_options, gate_status
from opspec.cli_models import check_output, load, report_stream, shown_name, source_path, write
from opspec.cli_runtime import add_runtime_option, runtime_problem_json, runtime_target, verdict_line
from opspec.cli_report import declared_types, origin_counts, problem_json, value_rows, write_json
from opspec.infer_report import infer_report, render_json, render_text

#: Models with more values than this get a summary in place of the table (unless ``--values``).
TABLE_LIMIT = 1000


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``infer`` and ``check`` subcommands."""
    infer = commands.add_parser("infer", help="infer the type and shape of every value in a model")
    infer.add_argument("model", help="an ONNX model file (-: read from standard input)")
    infer.add_argument("-o", "--output", metavar="OUT",
                       help="write the inferred model here, replacing OUT (whole or not at all; -: standard "
                            "output, the report then going to standard error)")
    infer.add_argument("--strict", action="store_true", help="stop at the first node error")
    infer.add_argument("--check-type", action="store_true", help="also check inputs and attributes against schemas")
    infer.add_argument("--no-data-prop", action="store_true", help="do not propagate shape values through nodes")
    infer.add_argument("--values", action="store_true",
                       help=f"list every value even when the model has more than {TABLE_LIMIT:,} "
                            "(text output; JSON always lists them)")
    infer.set_defaults(run=_infer)

    check = commands.add_parser("check", help="validate the graph and every node against its schema")
    check.add_argument("model", help="an ONNX model file (-: read from standard input)")
    add_runtime_option(check)
    check.set_defaults(run=_check)
    for command in (infer, check):
        command.add_argument("--format", choices=("text", "json"), default="text",
                             help="text for people (default) or json for scripts")
        add_gate_options(command, runtime=command is check)


def _infer(args: argparse.Namespace) -> int:
    from opspec.runtime.inference.api import InferenceError, InferenceOptions, infer_in_place

    if args.output:
        check_output(args.output)
    model = load(args.model)
    name, out = shown_name(args.model), report_stream(args.output)
    quiet_text = args.quiet and args.format == "text"
    declared = {} if quiet_text else declared_types(model)  # read before inference refines them
    try:
        with Progress(f"inferring {name}, {plural(len(model.graph.node), 'node')}",
                      enabled=args.format == "text" and not args.quiet):
            # The model was read here: inferred in place, its new value_info left serialized
            # (written with the model, if asked, and never built as messages).
            options = InferenceOptions(args.check_type, args.strict, not args.no_data_prop, merge_new=False)
            result = infer_in_place(model, source_path(args.model), options)
    except InferenceError as error:
        if args.format == "json":
            write_json({"ok": False, "errors": [{"message": str(error)}]}, out)
        else:
            print(f"opspec: {error}", file=sys.stderr)
        return ExitCode.FAILED
    without_rule = ops_without_rule(model.opset_import, result.op_types)
    value_count = result.value_count
    listed = args.format == "json" or (not args.quiet and (args.values or value_count <= TABLE_LIMIT))
    counts = None if listed or quiet_text else origin_counts(result, model.graph, declared)
    if not listed:
        result.release_values()  # before the model is written: what a summary needs is counted

    def rows() -> Any:
        return value_rows(result.iter_values(), declared)

    status = gate_status(len(result.errors), len(result.unknown_reasons), len(without_rule), args.fail_on_unknown)
    copied: list[tuple[str, str]] = []
    if args.output:
        copied = write(result.save, result.model, args.model, args.output)
    report = infer_report(name, status, result, value_count, rows, counts, without_rule, args.output, copied)
    if args.format == "json":
        render_json(report, out)
    else:
        render_text(report, out, args.quiet)
    return status


def ops_without_rule(opset_import: Any, op_types: Iterable[tuple[str, str]]) -> list[tuple[str, str, int]]:
    """``(domain, op type, schema version)`` of the ops among ``op_types`` (each a node's
    ``(domain, op_type)``) whose schema under ``opset_import`` has no rule (in the installed op set)."""
    from opspec.runtime.inference.resolve import normalize_opsets
    from opspec.runtime.op_set import installed_op_set
    from opspec.runtime.registry import SchemaError

    registry = installed_op_set().registry
    opsets = normalize_opsets(opset_import, registry)
    found: set[tuple[str, str, int]] = set()
    for node_domain, op_type in set(op_types):
        try:
            domain = registry.canonical_domain(node_domain)
            schema = registry.get_schema(op_type, opsets.get(domain), domain)
        except SchemaError:
            continue
        if schema.inference is None:
            found.add((registry.domain(schema.domain).name, schema.name, schema.since_version))
    return sorted(found)


def _check(args: argparse.Namespace) -> int:
    from opspec.runtime.checker.whole import check_model, note_line

    target = runtime_target(args)
    model = load(args.model)
    with Progress(f"checking {shown_name(args.model)}", enabled=args.format == "text" and not args.quiet):
        checked = check_model(model, source_path(args.model), target)
    structure, nodes, problems = checked.structure, checked.nodes, checked.problems
    without_rule = ops_without_rule(model.opset_import, checked.op_types)
    unbound = checked.verdict.unbound if checked.verdict is not None else ()
    unknown = args.fail_on_unknown and bool(without_rule or unbound)
    if args.format == "json":
        counts = {"problems": len(problems), "ops_without_rule": len(without_rule)}
        document: dict[str, Any] = {"ok": not problems and not unknown, "nodes": checked.node_count,
                    "problems": [runtime_problem_json(problem) if hasattr(problem, "missing") else problem_json(problem)
                                 for problem in problems],
                    "notes": [problem_json(note) for note in checked.notes],
                    "ops_without_rule": [{"domain": domain, "op_type": op_type, "version": version}
                                         for domain, op_type, version in without_rule],
                    "counts": counts}
        if target is not None:
            document.update(runtime=str(target), will_run=checked.will_run,
                            unbound_nodes=[{"where": node.where, "index": node.index, "op_type": node.op,
                                            "domain": node.domain, "version": node.version,
                                            "type_parameters": list(node.params)} for node in unbound])
            counts["unbound_nodes"] = len(unbound)
        if checked.placement is not None:
            document.update(checked.placement.json())
        write_json(document, sys.stdout)
        return ExitCode.FAILED if problems or unknown else ExitCode.OK
    for problem in problems:
        print(problem)
    if not args.quiet or unknown:
        for domain, op_type, version in without_rule:
            print(f"unknown: {op_type} version {version} (domain '{domain}') has no inference rule; "
                  "its outputs are not inferred")
        for node in unbound:
            print(f"unknown: {node}")
    if not args.quiet:
        for note in checked.notes:
            print(note_line(note))
    if target is not None and (problems or unknown or not args.quiet):
        print(verdict_line(checked))
    if checked.placement is not None and not args.quiet:
        print("\n".join(checked.placement.lines()))
    unknowns = ", ".join(_unknown_counts(without_rule, unbound))
    if problems:
        in_nodes = f"{plural(len({problem.index for problem in nodes}), 'node')} (of {checked.node_count})"
        also = f"; {unknowns}" if unknowns else ""
        if structure:
            print(f"opspec: {plural(len(problems), 'problem')}: {len(structure)} in the model's fields and the "
                  f"graph's structure, {len(nodes)} in {in_nodes}{_runtime_count(checked)}{also}", file=sys.stderr)
        else:
            print(f"opspec: {plural(len(problems), 'problem')} in {in_nodes}{_runtime_count(checked)}{also}",
                  file=sys.stderr)
        return ExitCode.FAILED
    if unknown:
        print(f"opspec: no problem, but {unknowns} (--fail-on-unknown)", file=sys.stderr)
        return ExitCode.FAILED
    if not args.quiet:
        print(f"ok: {plural(checked.node_count, 'node')} conform to their schemas")
    return ExitCode.OK


def _unknown_counts(without_rule: list[tuple[str, str, int]], unbound: tuple[Any, ...]) -> list[str]:
    """``1 op without a rule`` and ``2 nodes whose kernel could not be told``, each when there are any."""
    parts = []
    if without_rule:
        parts.append(f"{plural(len(without_rule), 'op')} without a rule")
    if unbound:
        parts.append(f"{plural(len(unbound), 'node')} whose kernel could not be told")
    return parts


def _runtime_count(checked: Any) -> str:
    found = len(checked.verdict.problems) if checked.verdict is not None else 0
    return f" ({found} of them for {checked.verdict.target})" if found else ""


__all__ = ["ops_without_rule", "register"]
