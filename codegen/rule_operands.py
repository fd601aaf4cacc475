"""The input and output names a rule uses, read from its source.

Rules may address a node's inputs and outputs by their formal names (see
:mod:`opspec.runtime.contract.positions`). A name written as a string literal in a call of
one of the context's input or output methods (``ctx.input_shape("past_key")``) is read here,
without running the module: in the rule's function and in the module's functions it calls,
directly or through others. The compiler then checks each name against every op version
bound to the rule. Names that reach the context through a variable are not seen.
"""
from __future__ import annotations

import ast
from typing import NamedTuple

from opspec.codegen.source import Location

#: The context's methods whose first argument is an input, by position or name.
INPUT_METHODS = frozenset({"has_input", "input_type", "input_shape", "input_with_rank", "input_with_rank_at_least",
                           "input_name", "input_elem", "input_data", "input_values"})
#: The context's methods whose first argument is an output, by position or name.
OUTPUT_METHODS = frozenset({"has_output", "output_type", "output_elem", "set_output", "set_output_shape", "set_output_data",
                            "output_data"})


class NamedOperand(NamedTuple):
    """One input or output name a rule uses, and where."""

    name: str
    output: bool
    location: Location


class _FunctionUse(NamedTuple):
    """What one module-level function names directly, and the module's functions it calls."""

    operands: tuple[NamedOperand, ...]
    calls: frozenset[str]


def _uses(function: ast.AST, shown: str) -> _FunctionUse:
    operands, calls = [], set()
    for node in ast.walk(function):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name):
            calls.add(node.func.id)
        elif isinstance(node.func, ast.Attribute) and node.args:
            method, first = node.func.attr, node.args[0]
            if (method in INPUT_METHODS or method in OUTPUT_METHODS) and isinstance(first, ast.Constant) \
                    and isinstance(first.value, str):
                operands.append(NamedOperand(first.value, method in OUTPUT_METHODS,
                                             Location(shown, first.lineno, first.col_offset + 1)))
    return _FunctionUse(tuple(operands), frozenset(calls))


class ModuleOperands:
    """The operand names each module-level function of one module uses, with those of the
    module's functions it calls."""

    def __init__(self, module: ast.Module, shown: str) -> None:
        self._uses = {statement.name: _uses(statement, shown) for statement in module.body
                      if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))}

    def of(self, function: str) -> tuple[NamedOperand, ...]:
        """The names ``function`` uses, itself or through the module functions it reaches."""
        seen, pending, found = {function}, [function], list[NamedOperand]()
        while pending:
            use = self._uses.get(pending.pop())
            if use is None:
                continue
            found.extend(use.operands)
            for callee in sorted(use.calls - seen):
                if callee in self._uses:
                    seen.add(callee)
                    pending.append(callee)
        return tuple(sorted(set(found), key=lambda operand: operand.location))


__all__ = ["INPUT_METHODS", "ModuleOperands", "NamedOperand", "OUTPUT_METHODS"]
