"""``opspec convert``: a model moved to another opset of the standard domain."""
from __future__ import annotations

import argparse
import os
import sys

from opspec.cli_common import EXIT_FAILED, EXIT_OK, UserError, plural
from opspec.cli_report import write_json


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``convert`` subcommand."""
    convert = commands.add_parser("convert", help="convert a model to another opset, up or down")
    convert.add_argument("model", help="an ONNX model file")
    convert.add_argument("-o", "--output", metavar="OUT", required=True, help="where to write the converted model")
    convert.add_argument("--opset", type=int, required=True, metavar="N", help="the target opset of ai.onnx")
    convert.add_argument("--force", action="store_true", help="replace OUT when it exists")
    convert.add_argument("--format", choices=("text", "json"), default="text",
                         help="text for people (default) or json for scripts")
    convert.set_defaults(run=_convert)


def _convert(args: argparse.Namespace) -> int:
    from opspec.cli_infer import _check_output, _load
    from opspec.runtime.convert.api import ConversionError, convert
    from opspec.runtime.ir import save_model

    _check_output(args.output)
    if os.path.exists(args.output) and not args.force:
        raise UserError(f"{args.output} exists; pass --force to replace it")
    if os.path.exists(args.output) and os.path.samefile(args.output, args.model):
        raise UserError(f"{args.output} is the input model; write the result elsewhere")
    model = _load(args.model)
    try:
        result = convert(model, args.opset)
    except ConversionError as error:
        raise UserError(str(error)) from None
    if args.format == "json":
        write_json({"ok": result.ok, "source_opset": result.source_opset, "target_opset": result.target_opset,
                    "output": args.output if result.ok else None,
                    "refused": [{"graph": r.graph, "index": r.index, "node": r.name, "op_type": r.op_type,
                                 "reason": r.reason} for r in result.refusals]}, sys.stdout)
    if not result.ok:
        if args.format == "text":
            for refusal in result.refusals:
                print(refusal)
            print(f"opspec: cannot convert from opset {result.source_opset} to {result.target_opset}: "
                  f"{plural(len(result.refusals), 'node')} refused; nothing written", file=sys.stderr)
        return EXIT_FAILED
    save_model(result.model, args.output)
    if args.format == "text":
        print(f"converted from opset {result.source_opset} to {result.target_opset}: {args.output}")
    return EXIT_OK


__all__ = ["register"]
