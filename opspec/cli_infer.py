"""``opspec infer`` and ``opspec check``: type/shape inference and schema validation of a model."""
from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from opspec.cli import EXIT_FAILED, EXIT_OK, UserError


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``infer`` and ``check`` subcommands."""
    infer = commands.add_parser("infer", help="infer the type and shape of every value in a model")
    infer.add_argument("model", help="an ONNX model file")
    infer.add_argument("-o", "--output", metavar="OUT", help="write the inferred model here")
    infer.add_argument("--strict", action="store_true", help="stop at the first node error")
    infer.add_argument("--check-type", action="store_true", help="also check inputs and attributes against schemas")
    infer.add_argument("--no-data-prop", action="store_true", help="do not propagate shape values through nodes")
    infer.set_defaults(run=_infer)

    check = commands.add_parser("check", help="validate every node against its schema")
    check.add_argument("model", help="an ONNX model file")
    check.set_defaults(run=_check)


def _run(path: str, **options: Any) -> Any:
    from opspec.runtime.inference.api import infer
    from opspec.runtime.ir import ModelLoadError

    try:
        return infer(path, **options)
    except ModelLoadError as error:
        raise UserError(str(error)) from None


def _infer(args: argparse.Namespace) -> int:
    from opspec.runtime.inference.api import InferenceError

    try:
        result = _run(args.model, check_type=args.check_type, strict_mode=args.strict,
                      data_prop=not args.no_data_prop)
    except InferenceError as error:
        print(f"opspec: {error}", file=sys.stderr)
        return EXIT_FAILED
    print_table(result.values, sys.stdout)
    if args.output:
        from opspec.runtime.ir import save_model

        try:
            save_model(result.model, args.output)
        except OSError as error:
            raise UserError(f"cannot write {args.output}: {error.strerror or error}") from None
    counts = f"{result.node_count} nodes, {len(result.values)} values"
    if result.errors:
        print(f"\n{_plural(len(result.errors), 'error')}:")
        for error in result.errors:
            print(f"  {error}")
    if result.unknown_reasons:
        print(f"\n{_plural(len(result.unknown_reasons), 'unknown op')} (outputs left untyped):")
        for (domain, op_type), reason in sorted(result.unknown_reasons.items()):
            print(f"  {op_type} (domain '{domain or 'ai.onnx'}'): {reason}")
    if args.output:
        print(f"\nwrote {args.output}")
    print(f"\n{counts}; {_plural(len(result.errors), 'error')}, {_plural(len(result.unknown_reasons), 'unknown op')}")
    return EXIT_FAILED if result.errors else EXIT_OK


def _check(args: argparse.Namespace) -> int:
    result = _run(args.model, check_type=True, strict_mode=False, data_prop=True)
    problems = sorted([*result.errors, *(_no_schema(node) for node in result.unknown_nodes)],
                      key=lambda error: error.index)
    for problem in problems:
        print(problem)
    if problems:
        nodes = len({problem.index for problem in problems})
        print(f"opspec: {_plural(len(problems), 'problem')} in {_plural(nodes, 'node')} "
              f"(of {result.node_count})", file=sys.stderr)
        return EXIT_FAILED
    print(f"ok: {_plural(result.node_count, 'node')} conform to their schemas")
    return EXIT_OK


def _no_schema(node: Any) -> Any:
    from opspec.runtime.inference.engine import NodeError

    return NodeError(node.index, node.name, node.op_type, node.domain, f"cannot be checked: {node.message}")


def print_table(values: dict, out: TextIO) -> None:
    """One row per value: name, producer, element type, shape."""
    from opspec.runtime.inference.typeops import elem_name
    from opspec.runtime.contract.values import SparseTensorType, TensorType, type_string
    from opspec.runtime.shape import format_shape

    rows = []
    for name, (value, producer) in values.items():
        if type(value) is TensorType or type(value) is SparseTensorType:
            elem, shape = elem_name(value.elem), format_shape(value.shape)
        elif value is None:
            elem, shape = "?", "?"
        else:
            elem, shape = type_string(value), ""
        rows.append((_text(name), _text(producer), elem, shape))
    header = ("NAME", "PRODUCER", "TYPE", "SHAPE")
    widths = [max([len(header[i])] + [len(row[i]) for row in rows]) for i in range(3)]
    line = "{:<%d}  {:<%d}  {:<%d}  {}" % tuple(widths)
    out.write(line.format(*header).rstrip() + "\n")
    out.write("".join(line.format(*row).rstrip() + "\n" for row in rows))


def _text(value: Any) -> str:
    """A name as text (protobuf hands over names that are not valid UTF-8 as bytes)."""
    return value if type(value) is str else bytes(value).decode("utf-8", "replace")


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


__all__ = ["print_table", "register"]
