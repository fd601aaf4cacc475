"""The ``opspec`` command line."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, Sequence

from opspec.cli_common import ExitCode, UserError, plural


#: What the last command made that is large and needed until its end (see :func:`run`); emptied as a
#: command starts.
_KEPT: list[object] = []


def _generate(args: argparse.Namespace) -> int:
    from opspec.codegen.diagnostics import CompileError
    from opspec.codegen.generate import DEFAULT_OPDEFS, DEFAULT_OUT, SOURCE_CHECKOUT, OutputError, generate

    opdefs = Path(args.opdefs) if args.opdefs else DEFAULT_OPDEFS
    if not args.out and opdefs.resolve() != DEFAULT_OPDEFS:
        raise UserError("--out is required with --opdefs: the default output is opspec's own built-in registry")
    if not args.out and not SOURCE_CHECKOUT:
        raise UserError("without --out, generate rewrites (or checks) the built-in registry of a source checkout, "
                        "and this opspec is an installed package: pass --out DIR")
    out = Path(args.out) if args.out else DEFAULT_OUT
    from opspec.codegen.shown_paths import readable

    def warn(warning: Any) -> None:
        print(readable(warning, opdefs), file=sys.stderr)

    try:
        result = generate(opdefs, out, check=args.check, force=args.force, warn=warn)
        _KEPT.append(result)
    except OutputError as error:
        for problem in error.problems:
            print(f"{problem}", file=sys.stderr)
        print(f"opspec: nothing written to {out}", file=sys.stderr)
        return ExitCode.FAILED
    except OSError as error:
        where = error.filename or out
        raise UserError(f"cannot write the output to {where}: {error.strerror or error}") from None
    except CompileError as error:
        _print_errors(error.diagnostics, opdefs, args)
        return ExitCode.FAILED
    def counts(domains: tuple) -> str:
        return (f"{plural(len(domains), 'domain')}, {plural(sum(len(d.ops) for d in domains), 'op')}, "
                f"{plural(sum(d.schema_count for d in domains), 'schema')}")

    summary = "; ".join([counts(result.domains), *(f"{name}: {counts(domains)}"
                                                    for name, domains in result.layers.items())])
    summary += f" in {result.seconds:.2f}s"
    if args.check:
        if result.stale:
            for path in result.stale:
                print(f"stale: {out / path}", file=sys.stderr)
            print(f"opspec: {out} is out of date ({plural(len(result.stale), 'file')}); run `make generate`",
                  file=sys.stderr)
            return ExitCode.FAILED
        print(f"{out} is up to date: {summary}")
        return ExitCode.OK
    for layer, domains in (("", result.domains), *result.layers.items()):
        for domain in domains:
            name = f"{layer}: {domain.decl.name}" if layer else domain.decl.name
            print(f"  {name:<36} opsets {domain.decl.opset_min}-{domain.decl.opset_max}  "
                  f"{len(domain.ops):>5,} ops  {domain.schema_count:>6,} schemas")
    changed = len(result.written) + len(result.removed)
    print(f"generated {summary} -> {out} ({plural(changed, 'file')} changed)")
    return ExitCode.OK


def _print_errors(diagnostics: Sequence[Any], opdefs: Path, args: argparse.Namespace) -> None:
    """A failed compilation's errors, capped per file and in all, then their count; each path as it
    opens from the current folder."""
    from opspec.codegen.error_cap import cap
    from opspec.codegen.shown_paths import readable

    capped = cap([readable(diagnostic, opdefs) for diagnostic in diagnostics], args.max_errors_per_file,
                 args.max_errors)
    if args.format == "json":
        import json

        errors = [{"path": d.location.path, "line": d.location.line, "column": d.location.column,
                   "severity": d.severity, "message": d.message} for d in capped.shown]
        print(json.dumps({"opdefs": str(opdefs), "error_count": capped.count, "omitted": capped.omitted,
                          "errors": errors}, indent=1))
        return
    for diagnostic in capped.shown:
        print(diagnostic, file=sys.stderr)
    if rest := capped.rest_line():
        print(rest, file=sys.stderr)
    print(f"opspec: {plural(capped.count, 'error')} in {opdefs}", file=sys.stderr)


def _show(args: argparse.Namespace) -> int:
    from opspec.cli_lookup import find_schema
    from opspec.codegen.history import signature  # not codegen.render: printing needs no jinja2
    from opspec.runtime.registry import SchemaError

    try:
        found = find_schema(args.op, args.version, args.domain)
    except SchemaError as error:
        raise UserError(str(error)) from None
    schema, registry = found.schema, found.registry
    versions = [s.since_version for s in registry.schemas_of(schema.name, schema.domain)]
    print(f"{schema.name} version {schema.since_version} (domain {registry.domain(schema.domain).name!r}"
          f"{', onnxruntime' if found.onnxruntime else ''}; versions {', '.join(map(str, versions))})"
          f"{'  DEPRECATED' if schema.deprecated else ''}")
    if schema.summary:
        print(f"  {schema.summary}")
    print()
    print(signature(schema))
    if schema.type_constraints:
        print()
        for constraint in schema.type_constraints:
            print(f"  {constraint.type_param_str}: {', '.join(constraint.allowed_type_strs)}")
    if schema.inference:
        args_text = ", ".join(f"{k}={v}" for k, v in schema.inference.args.items())
        print(f"\ninference: {schema.inference.name}{f'({args_text})' if args_text else ''}")
    print(f"\ninputs {schema.min_input}..{_bound(schema.max_input)}, "
          f"outputs {schema.min_output}..{_bound(schema.max_output)}")
    return ExitCode.OK


def _bound(count: int) -> str:
    from opspec.runtime.schema import UNBOUNDED

    return "∞" if count == UNBOUNDED else str(count)


def _import(args: argparse.Namespace) -> int:
    from opspec.codegen.import_batch import UnknownDomain, import_ops
    from opspec.runtime.onnx_features import OnnxUnavailable

    try:
        report = import_ops(args.ops.split(","), args.domain, Path(args.out), args.family, args.force)
    except OnnxUnavailable as error:
        raise UserError(f"`opspec import` reads onnx.defs: {error}") from None
    except OSError as error:
        raise UserError(f"cannot write to {error.filename or args.out}: {error.strerror or error}") from None
    except UnknownDomain as error:
        raise UserError(str(error)) from None
    if report.domain_file is not None:
        print(f"wrote {report.domain_file}")
    for path in report.drafted:
        print(f"drafted {path}")
    for path in report.skipped:
        print(f"kept {path} (it exists; --force drafts it again, keeping its descriptions and bindings)")
    for name, reason in report.failed:
        print(f"opspec: {name}: {reason}", file=sys.stderr)
    for note in report.notes:
        print(f"opspec: note: {note}", file=sys.stderr)
    if report.without_rule:
        print(f"opspec: warning: no known inference rule for {', '.join(report.without_rule)}: drafted with "
              "`inference: null`; name a rule or write one (docs/rules.md lists them)", file=sys.stderr)
    print(f"{len(report.drafted):,} drafted, {len(report.skipped):,} kept, {len(report.failed):,} failed; "
          "write descriptions in place of the TODO markers")
    return ExitCode.FAILED if report.failed else ExitCode.OK


def _parser() -> argparse.ArgumentParser:
    from opspec import __version__

    parser = argparse.ArgumentParser(prog="opspec", description="Operator schemas compiled from YAML.",
                                     epilog="exit status: 0 fine, 1 problems found in the input, "
                                            "2 unreadable input or usage error, 3 internal error")
    parser.add_argument("--version", action="version", version=f"opspec {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    generate = commands.add_parser("generate", help="compile opdefs into a registry package and docs")
    generate.add_argument("--opdefs", metavar="DIR", help="opdefs tree (default: the built-in one)")
    generate.add_argument("--out", metavar="DIR",
                          help="output package folder (default: generated/, only for the built-in opdefs)")
    generate.add_argument("--check", action="store_true", help="only check that the output is up to date")
    generate.add_argument("--force", action="store_true",
                          help="replace files in the output folder that generation did not write")
    from opspec.codegen.error_cap import IN_ALL, PER_FILE

    generate.add_argument("--max-errors", type=int, default=IN_ALL, metavar="N",
                          help=f"show at most N errors in all, then count the rest (default {IN_ALL}; 0: all)")
    generate.add_argument("--max-errors-per-file", type=int, default=PER_FILE, metavar="N",
                          help=f"show at most N errors of each file (default {PER_FILE}; 0: all)")
    generate.add_argument("--format", choices=("text", "json"), default="text",
                          help="how errors are printed: lines on stderr, or one JSON object on stdout "
                               "whose error_count counts every error")
    generate.set_defaults(run=_generate)

    show = commands.add_parser("show", help="print an operator's schema (the standard set's, else onnxruntime's)")
    show.add_argument("op")
    show.add_argument("--version", type=int, default=None, help="opset version (default: newest)")
    show.add_argument("--domain", default="", help="domain (default: ai.onnx), such as com.microsoft")
    show.set_defaults(run=_show)

    draft = commands.add_parser("import", help="draft opdefs YAML for ops registered in onnx.defs")
    draft.add_argument("--ops", required=True, help="comma-separated op names")
    draft.add_argument("--domain", default="", help="onnx domain of the ops (default: ai.onnx)")
    draft.add_argument("--out", required=True, metavar="DIR", help="the domain folder to write into")
    draft.add_argument("--family", default=None,
                       help="family subfolder for new files (default: the onnx source folder, e.g. math)")
    draft.add_argument("--force", action="store_true",
                       help="draft existing files again, keeping their descriptions, bindings and notes")
    draft.set_defaults(run=_import)

    from opspec import cli_convert, cli_cost, cli_infer, cli_scaffold, cli_scan

    cli_infer.register(commands)
    cli_cost.register(commands)
    cli_scaffold.register(commands)
    cli_convert.register(commands)
    cli_scan.register(commands)
    for command in commands.choices.values():
        if command.prog.split()[-1] in _USES_REGISTRY:
            command.add_argument("--registry", metavar="DIR", action="append", default=[],
                                 help="also use the op set generated into DIR (opspec generate --out DIR); "
                                      "may be repeated (the standard and onnxruntime's sets need none)")
    return parser


#: Commands that look operators up, and so accept --registry for a user's own op sets.
_USES_REGISTRY = {"show", "infer", "check", "cost"}


def _add_registries(folders: list[str]) -> None:
    import opspec

    for folder in folders:
        if not os.path.isdir(folder):
            raise UserError(f"--registry {folder}: no such folder")
        if _is_built_in(folder):
            continue  # its ops are known without the option
        try:
            opspec.register(folder)
        except (ImportError, AttributeError, opspec.SchemaError) as error:
            raise UserError(f"--registry {folder}: not a generated registry package ({error})") from None


def _is_built_in(folder: str) -> bool:
    """Whether ``folder`` is one of the registry packages every command uses already (the standard
    set's, onnxruntime's)."""
    import importlib

    from opspec.runtime.defs import ONNXRUNTIME_PACKAGE, REGISTRY_PACKAGE

    packages = [REGISTRY_PACKAGE, importlib.import_module(ONNXRUNTIME_PACKAGE)]
    return any(os.path.samefile(folder, path) for package in packages for path in package.__path__
               if os.path.isdir(path))


def main(argv: Sequence[str] | None = None) -> int:
    _KEPT.clear()
    args = _parser().parse_args(argv)
    try:
        _add_registries(getattr(args, "registry", []))
        return args.run(args)
    except UserError as error:
        print(f"opspec: {error}", file=sys.stderr)
        return ExitCode.USAGE
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED
    except BrokenPipeError:  # the reader went away (``opspec infer m.onnx | head``)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return ExitCode.OK
    except Exception as error:  # noqa: BLE001 - the last line of defence against tracebacks
        if os.environ.get("OPSPEC_DEBUG"):
            raise
        print(f"opspec: internal error: {type(error).__name__}: {error} (set OPSPEC_DEBUG=1 for details)",
              file=sys.stderr)
        return ExitCode.INTERNAL


def run() -> None:
    """The ``opspec`` command: :func:`main`, then the process exits with its status, once its output
    is flushed, without the interpreter's own clean-up: that frees every object still alive one by
    one (and the result of a large ``generate``, kept until then, is half a million of them) although
    the end of the process releases its memory at once. What a command writes is complete and closed
    before it returns; nothing of the package registers work for the exit."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:  # the reader went away: as in main, not a failure
            pass
        except (OSError, ValueError):  # the output could not be written whole
            code = code or ExitCode.FAILED
    os._exit(code)
