"""``opspec scan``: many models at once (see :mod:`opspec.batch`)."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from opspec.cli_common import ExitCode, UserError


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``scan`` subcommand."""
    from opspec.cli_runtime import add_runtime_option

    scan = commands.add_parser("scan", help="check and infer every model under some paths, on every core or on Ray",
                               description="Check and infer every .onnx model under the paths (files, folders, "
                                           "globs), one JSON line per model. Exit status 1 when a model has "
                                           "problems or could not be analysed.")
    scan.add_argument("paths", nargs="+", metavar="PATH", help="a model file, a folder (searched for .onnx files) "
                                                                "or a glob")
    scan.add_argument("--report", metavar="FILE",
                      help="append one JSON line per model to FILE; models whose content is in it already are "
                           "skipped")
    scan.add_argument("--html", metavar="FILE", help="also write the whole report as one self-contained HTML page")
    scan.add_argument("-j", "--jobs", type=int, default=None, metavar="N",
                      help="worker processes (default: one per core)")
    scan.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                      help="time one model may take (default 300)")
    scan.add_argument("--memory", type=int, default=None, metavar="MIB",
                      help="memory one worker may map, in MiB (default: the machine's shared among the workers)")
    scan.add_argument("--external-data", action="store_true",
                      help="read small tensors stored in external data files (not read otherwise)")
    scan.add_argument("--no-cost", dest="cost", action="store_false",
                      help="skip the cost estimate (MACs, FLOPs, parameters, activation bytes) of each model")
    scan.add_argument("--ray", metavar="ADDRESS",
                      help="run on a Ray cluster (auto, ray://HOST:PORT, or local to start one here); "
                           "needs pip install 'opspec[ray]'")
    add_runtime_option(scan)
    scan.set_defaults(run=_scan)


def _scan(args: argparse.Namespace) -> int:
    from opspec.batch.api import scan
    from opspec.batch.on_ray import RayUnavailable
    from opspec.batch.summary import table
    from opspec.cli_gate import Progress

    if args.jobs is not None and args.jobs < 1:
        raise UserError(f"--jobs must be at least 1, got {args.jobs}")
    if args.timeout <= 0:
        raise UserError(f"--timeout must be positive, got {args.timeout:g}")
    if args.memory is not None and args.memory < 64:
        raise UserError(f"--memory is in MiB and at least 64, got {args.memory}")
    counts = {"done": 0}

    def progress() -> str:
        return f"scanning: {counts['done']:,} models done"

    def count(record: dict[str, Any]) -> None:
        counts["done"] += 1

    try:
        with Progress(progress):
            result = scan(args.paths, args.report, jobs=args.jobs, runtime=args.runtime,
                          read_external=args.external_data, timeout=args.timeout,
                          memory=args.memory << 20 if args.memory is not None else None, ray=args.ray,
                          html=args.html, cost=args.cost, on_record=count)
    except (ValueError, RayUnavailable) as error:
        raise UserError(str(error)) from None
    except KeyboardInterrupt:
        if args.report:
            print(f"opspec: interrupted; {counts['done']:,} models written to {args.report}", file=sys.stderr)
        raise
    except OSError as error:
        raise UserError(f"cannot write {error.filename or args.report}: {error.strerror or error}") from None
    print(table(result.summary))
    statuses = result.summary.statuses
    return ExitCode.FAILED if statuses.get("problems") or statuses.get("failed") else ExitCode.OK


__all__ = ["register"]
