"""``opspec init``, ``opspec new-op`` and ``opspec schema-path``: starting an op set of one's own."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Callable

from opspec.cli_common import ExitCode, UserError


def register(commands: argparse._SubParsersAction) -> None:
    """Add the scaffolding subcommands."""
    init = commands.add_parser("init", help="start a new op-set tree that generates and passes its tests")
    init.add_argument("folder", metavar="DIR", help="a new or empty folder")
    init.add_argument("--domain", required=True, help="the domain of the op set, such as com.example")
    init.set_defaults(run=_init)

    new_op = commands.add_parser("new-op", help="add an operator (YAML stub and test) to a tree made by init")
    new_op.add_argument("op", metavar="NAME", help="the operator's name, such as MyOp")
    new_op.add_argument("--tree", default=".", metavar="DIR", help="the tree's folder (default: the current one)")
    new_op.add_argument("--domain", default=None, help="the domain (default: the tree's only one)")
    new_op.add_argument("--family", default="ops", help="the family subfolder (default: ops)")
    new_op.set_defaults(run=_new_op)

    schema_path = commands.add_parser("schema-path", help="print where the JSON Schemas of the opdefs format are")
    schema_path.add_argument("kind", nargs="?", choices=("op", "domain", "types", "layer"),
                             help="print the file of this kind of opdefs file instead of the folder")
    schema_path.set_defaults(run=_schema_path)


def _written(make: Callable[[], list[Path]], where: str) -> None:
    """Run a scaffolding step and list the files it wrote; its refusals are one-line user errors."""
    from opspec.codegen.scaffold import ScaffoldError

    try:
        written = make()
    except ScaffoldError as error:
        raise UserError(str(error)) from None
    except OSError as error:
        raise UserError(f"cannot write {error.filename or where}: {error.strerror or error}") from None
    for path in written:
        print(f"wrote {path}")


def _init(args: argparse.Namespace) -> int:
    from opspec.codegen.render import module_name
    from opspec.codegen.scaffold import init_tree

    folder = Path(args.folder)
    _written(lambda: init_tree(folder, args.domain), args.folder)
    print(f"next: opspec generate --opdefs {folder / 'opdefs'} --out {folder / 'build' / module_name(args.domain)}, "
          f"then python -m pytest {folder / 'tests'} (see {folder / 'README.md'})")
    return ExitCode.OK


def _new_op(args: argparse.Namespace) -> int:
    from opspec.codegen.scaffold import new_op

    _written(lambda: new_op(Path(args.tree), args.op, args.domain, args.family), args.tree)
    return ExitCode.OK


def _schema_path(args: argparse.Namespace) -> int:
    from opspec.codegen.schema_paths import schema_file, schema_folder

    print(schema_file(args.kind) if args.kind else schema_folder())
    return ExitCode.OK


__all__ = ["register"]
