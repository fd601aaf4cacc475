"""``opspec convert``: a model moved to another opset of the standard domain."""
from __future__ import annotations

import argparse
import sys

from opspec.cli_common import ExitCode, UserError, plural
from opspec.cli_report import write_json


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``convert`` subcommand."""
    convert = commands.add_parser("convert", help="convert a model to another opset, up or down")
    convert.add_argument("model", help="an ONNX model file (-: read from standard input)")
    convert.add_argument("-o", "--output", metavar="OUT", required=True,
                         help="write the converted model here, replacing OUT (whole or not at all; -: standard "
                              "output, the report then going to standard error)")
    convert.add_argument("--opset", type=int, metavar="N",
                         help="the target opset of ai.onnx (default: the model's own, with --domain-opset)")
    convert.add_argument("--domain-opset", action="append", default=[], metavar="DOMAIN=N",
                         help="the target opset of another domain, such as ai.onnx.ml=3 (repeatable)")
    # Outputs are replaced as every command replaces them; the flag once needed for it is still accepted.
    convert.add_argument("--force", action="store_true", help=argparse.SUPPRESS)
    convert.add_argument("--format", choices=("text", "json"), default="text",
                         help="text for people (default) or json for scripts")
    convert.set_defaults(run=_convert)


def _convert(args: argparse.Namespace) -> int:
    from opspec.cli_models import check_output, load, report_stream, shown_output, write
    from opspec.runtime.convert.api import ConversionError, convert, standard_opset
    from opspec.runtime.ir import save_model

    check_output(args.output)
    domains = _domain_opsets(args.domain_opset)
    if args.opset is None and not domains:
        raise UserError("give the target opset with --opset N, or another domain's with --domain-opset DOMAIN=N")
    model = load(args.model)
    out = report_stream(args.output)
    try:
        result = convert(model, args.opset if args.opset is not None else standard_opset(model), domains)
    except ConversionError as error:
        raise UserError(str(error)) from None
    copied: list[tuple[str, str]] = []
    if result.ok:
        converted = result.model
        copied = write(lambda target: save_model(converted, target), converted, args.model, args.output)
    if args.format == "json":
        write_json({"ok": result.ok, "source_opset": result.source_opset, "target_opset": result.target_opset,
                    "domains": {domain: {"source_opset": old, "target_opset": new}
                                for domain, (old, new) in result.domains.items()},
                    "output": args.output if result.ok else None,
                    "refused": [{"graph": r.graph, "index": r.index, "node": r.name, "op_type": r.op_type,
                                 "reason": r.reason} for r in result.refusals],
                    "external_data_copied": [{"from": data, "to": destination} for data, destination in copied]},
                   out)
    if not result.ok:
        if args.format == "text":
            for refusal in result.refusals:
                print(refusal, file=out)
            print(f"opspec: cannot convert from opset {result.source_opset} to {result.target_opset}: "
                  f"{plural(len(result.refusals), 'node')} refused; nothing written", file=sys.stderr)
        return ExitCode.FAILED
    if args.format == "text":
        for data, destination in copied:
            print(f"copied external data {data} to {destination}", file=out)
        others = "".join(f", {domain} {old} to {new}" for domain, (old, new) in result.domains.items())
        print(f"converted from opset {result.source_opset} to {result.target_opset}{others}: "
              f"{shown_output(args.output)}", file=out)
    return ExitCode.OK


def _domain_opsets(given: list[str]) -> dict[str, int]:
    """``DOMAIN=N`` arguments as a mapping."""
    found: dict[str, int] = {}
    for text in given:
        domain, _, number = text.partition("=")
        if not domain or not number.strip().isdigit():
            raise UserError(f"--domain-opset {text!r}: expected DOMAIN=N, such as ai.onnx.ml=3")
        found[domain.strip()] = int(number)
    return found


__all__ = ["register"]
