"""``opspec infer`` and ``opspec check``: type/shape inference and validation of a model."""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from opspec.cli_common import EXIT_FAILED, EXIT_OK, UserError, plural
from opspec.cli_report import declared_types, print_table, problem_json, value_json, value_rows, write_json


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``infer`` and ``check`` subcommands."""
    infer = commands.add_parser("infer", help="infer the type and shape of every value in a model")
    infer.add_argument("model", help="an ONNX model file")
    infer.add_argument("-o", "--output", metavar="OUT", help="write the inferred model here")
    infer.add_argument("--strict", action="store_true", help="stop at the first node error")
    infer.add_argument("--check-type", action="store_true", help="also check inputs and attributes against schemas")
    infer.add_argument("--no-data-prop", action="store_true", help="do not propagate shape values through nodes")
    infer.set_defaults(run=_infer)

    check = commands.add_parser("check", help="validate the graph and every node against its schema")
    check.add_argument("model", help="an ONNX model file")
    check.set_defaults(run=_check)
    for command in (infer, check):
        command.add_argument("--format", choices=("text", "json"), default="text",
                             help="text for people (default) or json for scripts")


def _load(path: str) -> Any:
    from opspec.runtime.ir import ModelLoadError, load_model

    try:
        return load_model(path).model
    except ModelLoadError as error:
        raise UserError(str(error)) from None


def _run(model: Any, path: str, **options: Any) -> tuple[Any, list[str]]:
    """Infer ``model`` (loaded from ``path``, ours to change) reading external data beside it;
    the result and the external data that was refused."""
    from opspec.runtime.inference.api import infer_in_place

    result = infer_in_place(model, path, **options)
    return result, result.external_refusals


def _check_output(path: str) -> None:
    """Refuse an output path that cannot be written, before any work is done."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UserError(f"cannot write {path}: it is a directory")
    if not os.path.isdir(folder):
        raise UserError(f"cannot write {path}: no such folder {folder}")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise UserError(f"cannot write {path}: permission denied")


def _infer(args: argparse.Namespace) -> int:
    from opspec.runtime.inference.api import InferenceError

    if args.output:
        _check_output(args.output)
    model = _load(args.model)
    declared = declared_types(model)
    without_rule = ops_without_rule(model)
    try:
        result, refusals = _run(model, args.model, check_type=args.check_type, strict_mode=args.strict,
                      data_prop=not args.no_data_prop)
    except InferenceError as error:
        if args.format == "json":
            write_json({"ok": False, "errors": [{"message": str(error)}]}, sys.stdout)
        else:
            print(f"opspec: {error}", file=sys.stderr)
        return EXIT_FAILED
    rows = value_rows(result.values, declared)
    if args.output:
        from opspec.runtime.ir import save_model

        try:
            save_model(result.model, args.output)
        except OSError as error:
            raise UserError(f"cannot write {args.output}: {error.strerror or error}") from None
    if args.format == "json":
        write_json({
            "ok": not result.errors, "nodes": result.node_count,
            "values": [value_json(row) for row in rows],
            "errors": [problem_json(error) for error in result.errors],
            "unknown_ops": [{"domain": domain or "ai.onnx", "op_type": op_type, "reason": reason}
                            for (domain, op_type), reason in sorted(result.unknown_reasons.items())],
            "ops_without_rule": [{"domain": domain, "op_type": op_type, "version": version}
                                 for domain, op_type, version in without_rule],
            "external_data_refused": refusals,
            "implied_opsets": [{"domain": domain, "version": version}
                               for domain, version in sorted(result.implied_opsets.items())],
            "output": args.output,
        }, sys.stdout)
        return EXIT_FAILED if result.errors else EXIT_OK
    print_table(rows, sys.stdout)
    if result.errors:
        print(f"\n{plural(len(result.errors), 'error')}:")
        for problem in result.errors:
            print(f"  {problem}")
    if result.unknown_reasons:
        print(f"\n{plural(len(result.unknown_reasons), 'unknown op')} (outputs left untyped):")
        for (domain, op_type), reason in sorted(result.unknown_reasons.items()):
            print(f"  {op_type} (domain '{domain or 'ai.onnx'}'): {reason}")
    if without_rule:
        print(f"\n{plural(len(without_rule), 'op')} with a schema but no inference rule (outputs left untyped):")
        for domain, op_type, version in without_rule:
            print(f"  {op_type} version {version} (domain '{domain}')")
    if result.implied_opsets:
        print(f"\n{plural(len(result.implied_opsets), 'domain')} used without an opset import "
              "(inferred at its newest version, as onnxruntime runs it):")
        for domain, version in sorted(result.implied_opsets.items()):
            print(f"  {domain} version {version}")
    if refusals:
        print(f"\n{plural(len(refusals), 'tensor')} with external data not read:")
        for refusal in refusals:
            print(f"  {refusal}")
    if args.output:
        print(f"\nwrote {args.output}")
    print(f"\n{result.node_count} nodes, {len(rows)} values; {plural(len(result.errors), 'error')}, "
          f"{plural(len(result.unknown_reasons), 'unknown op')}")
    return EXIT_FAILED if result.errors else EXIT_OK


def ops_without_rule(model: Any) -> list[tuple[str, str, int]]:
    """``(domain, op type, schema version)`` of the main graph's ops whose schema has no rule."""
    from opspec.runtime.defs import INFERENCE
    from opspec.runtime.inference.engine import normalize_opsets
    from opspec.runtime.registry import SchemaError

    opsets = normalize_opsets(model.opset_import)
    found: set[tuple[str, str, int]] = set()
    for node in model.graph.node:
        try:
            domain = INFERENCE.canonical_domain(node.domain)
            schema = INFERENCE.get_schema(node.op_type, opsets.get(domain), domain)
        except SchemaError:
            continue
        if schema.inference is None:
            found.add((INFERENCE.domain(schema.domain).name, schema.name, schema.since_version))
    return sorted(found)


def _check(args: argparse.Namespace) -> int:
    from opspec.runtime.inference.graph_checks import GraphProblem, check_graphs

    model = _load(args.model)
    structure = check_graphs(model)
    result, refusals = _run(model, args.model, check_type=True, strict_mode=False, data_prop=True)
    structure += [GraphProblem(f"graph '{model.graph.name}'", refusal) for refusal in refusals]
    nodes = sorted([*result.errors, *(_no_schema(node) for node in result.unknown_nodes)],
                   key=lambda error: error.index)
    problems = [*structure, *nodes]
    if args.format == "json":
        write_json({"ok": not problems, "nodes": result.node_count,
                    "problems": [problem_json(problem) for problem in problems]}, sys.stdout)
        return EXIT_FAILED if problems else EXIT_OK
    for problem in problems:
        print(problem)
    if problems:
        in_nodes = f"{plural(len({problem.index for problem in nodes}), 'node')} (of {result.node_count})"
        if structure:
            print(f"opspec: {plural(len(problems), 'problem')}: {len(structure)} in the graph's structure, "
                  f"{len(nodes)} in {in_nodes}", file=sys.stderr)
        else:
            print(f"opspec: {plural(len(problems), 'problem')} in {in_nodes}", file=sys.stderr)
        return EXIT_FAILED
    print(f"ok: {plural(result.node_count, 'node')} conform to their schemas")
    return EXIT_OK


def _no_schema(node: Any) -> Any:
    from opspec.runtime.inference.engine import NodeError

    return NodeError(node.index, node.name, node.op_type, node.domain, f"cannot be checked: {node.message}")


__all__ = ["ops_without_rule", "register"]
