"""``opspec check --runtime``: the option, and the verdict in text and JSON."""
from __future__ import annotations

import argparse
from typing import Any

from opspec.cli_common import UserError


def add_runtime_option(command: argparse.ArgumentParser) -> None:
    """``--runtime onnxruntime[:PROVIDER]``."""
    command.add_argument("--runtime", metavar="RUNTIME[:PROVIDER]", default=None,
                         help="also predict whether the model loads and runs there, from the provider's kernel "
                              "table (onnxruntime, the CPU provider, is the one known; onnxruntime:PROVIDER picks "
                              "another with a table, which falls back to the CPU, and reports where each node "
                              "runs and the copies between devices)")


def runtime_target(args: argparse.Namespace) -> Any:
    """The target ``--runtime`` names (None without it)."""
    if getattr(args, "runtime", None) is None:
        return None
    from opspec.runtime.checker.runtime_support import parse_target

    try:
        return parse_target(args.runtime)
    except ValueError as error:
        raise UserError(f"--runtime: {error}") from None


def verdict_line(checked: Any) -> str:
    """One line: whether the model will run on the target."""
    verdict = checked.verdict
    return f"{verdict.target}: {'will run' if checked.will_run else 'will not load or run'}"


def runtime_problem_json(problem: Any) -> dict[str, Any]:
    """A problem of the prediction for scripts."""
    entry: dict[str, Any] = {"code": problem.code, "where": problem.where, "message": problem.message}
    if problem.index is not None:
        entry.update(index=problem.index, op_type=problem.op, domain=problem.domain or "ai.onnx",
                     version=problem.version)
    if problem.missing is not None and problem.missing.param:
        entry.update(type_parameter=problem.missing.param, found=problem.missing.found,
                     kernel_types=list(problem.missing.accepted))
    return entry


__all__ = ["add_runtime_option", "runtime_problem_json", "runtime_target", "verdict_line"]
