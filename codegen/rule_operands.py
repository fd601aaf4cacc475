"""The input and output names a rule uses, read from its source.

Rules may address a node's inputs and outputs by their formal names (see
:mod:`opspec.runtime.contract.positions`). A name written as a string literal where the context
takes an input or output (``ctx.input_shape("past_key")``) is read here, without running the
module: in the rule's function and in the module's functions it calls, directly or through
others. So is a literal handed to a module function whose parameter reaches
such a method (``check_vector(ctx, "q_bias", ...)``), and each literal of a tuple a loop or a
comprehension walks (``for name in ("gamma", "beta"): ctx.input_shape(name)``). The compiler then
checks each name against every op version bound to the rule. Names that reach the context in
other ways (computed, or read from the rule's arguments) are not seen, nor are those a rule asks
of :meth:`~opspec.runtime.contract.InferenceContext.input_index`, which tells whether a version
has an input at all.
"""
from __future__ import annotations

import ast
from typing import Iterator, NamedTuple

from opspec.codegen.source import Location

#: The context's methods whose first argument is an input, by position or name.
INPUT_METHODS = frozenset({"has_input", "input_type", "input_shape", "input_with_rank", "input_with_rank_at_least",
                           "input_name", "input_elem", "input_data", "input_values"})
#: The context's methods whose first argument is an output, by position or name.
OUTPUT_METHODS = frozenset({"has_output", "output_type", "output_elem", "set_output", "set_output_shape", "set_output_data",
                            "output_data"})

#: A function's parameters that reach an input (False) or output (True) method: by position and by name.
_Slots = dict[int | str, frozenset[bool]]


class NamedOperand(NamedTuple):
    """One input or output name a rule uses, and where."""

    name: str
    output: bool
    location: Location


class _FunctionUse(NamedTuple):
    """What one module-level function names directly, and the module's functions it calls."""

    operands: tuple[NamedOperand, ...]
    calls: frozenset[str]


def _functions(module: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    return {statement.name: statement for statement in module.body
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    arguments = function.args
    return [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]


def _call_slots(call: ast.Call, slots: dict[str, _Slots]) -> Iterator[tuple[ast.expr, bool]]:
    """The arguments of ``call`` that stand for an input or output, each with whether it is an output."""
    if isinstance(call.func, ast.Attribute) and call.args:
        method = call.func.attr
        if method in INPUT_METHODS or method in OUTPUT_METHODS:
            yield call.args[0], method in OUTPUT_METHODS
    elif isinstance(call.func, ast.Name) and call.func.id in slots:
        callee = slots[call.func.id]
        for position, argument in enumerate(call.args):
            for output in callee.get(position, ()):
                yield argument, output
        for keyword in call.keywords:
            if keyword.arg is not None:
                for output in callee.get(keyword.arg, ()):
                    yield keyword.value, output


def _literal_names(target: ast.expr, values: ast.expr) -> dict[str, list[ast.Constant]]:
    """The string literals a loop target takes from a literal tuple or list (``for name, rank in
    (("gamma", 1), ("W", 2))`` binds ``name`` to "gamma" and "W"), by the target's names."""
    if not isinstance(values, (ast.Tuple, ast.List)):
        return {}
    if isinstance(target, ast.Name):
        if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in values.elts):
            return {target.id: [e for e in values.elts if isinstance(e, ast.Constant)]}
        return {}
    if not isinstance(target, ast.Tuple):
        return {}
    found: dict[str, list[ast.Constant]] = {}
    for place, part in enumerate(target.elts):
        if not isinstance(part, ast.Name):
            continue
        items = [e.elts[place] if isinstance(e, (ast.Tuple, ast.List)) and len(e.elts) == len(target.elts) else None
                 for e in values.elts]
        if all(isinstance(i, ast.Constant) and isinstance(i.value, str) for i in items):
            found[part.id] = [i for i in items if isinstance(i, ast.Constant)]
    return found


#: Names bound to string literals, with the code where they hold.
_Scope = tuple[dict[str, list[ast.Constant]], list[ast.AST]]


def _loop_scopes(function: ast.AST) -> list[_Scope]:
    """Each loop and comprehension of a function that binds names to string literals only: those
    names with their literals, and where they hold (the loop's body; the comprehension's element
    and conditions). A loop walks a literal tuple or a name the function binds to one."""
    tuples = {node.targets[0].id: node.value for node in ast.walk(function)
              if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
              and isinstance(node.value, (ast.Tuple, ast.List))}

    def walked(values: ast.expr) -> ast.expr:
        return tuples.get(values.id, values) if isinstance(values, ast.Name) else values

    scopes: list[_Scope] = []
    for node in ast.walk(function):
        if isinstance(node, (ast.For, ast.AsyncFor)):
            bound = _literal_names(node.target, walked(node.iter))
            if bound:
                scopes.append((bound, list(node.body)))
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            results: list[ast.AST] = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            conditions = [condition for generator in node.generators for condition in generator.ifs]
            for generator in node.generators:
                bound = _literal_names(generator.target, walked(generator.iter))
                if bound:
                    scopes.append((bound, [*results, *conditions]))
    return scopes


def _operand_slots(functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]) -> dict[str, _Slots]:
    """Each function's parameters that reach an input or output method, itself or through the
    module's other functions (followed until nothing more is found)."""
    slots: dict[str, _Slots] = {name: {} for name in functions}
    changed = True
    while changed:
        changed = False
        for name, function in functions.items():
            parameters = _parameters(function)
            reached: dict[str, set[bool]] = {}
            for node in ast.walk(function):
                if isinstance(node, ast.Call):
                    for argument, output in _call_slots(node, slots):
                        if isinstance(argument, ast.Name) and argument.id in parameters:
                            reached.setdefault(argument.id, set()).add(output)
            found: _Slots = {}
            for position, parameter in enumerate(parameters):
                if parameter in reached:
                    found[position] = found[parameter] = frozenset(reached[parameter])
            if found != slots[name]:
                slots[name], changed = found, True
    return slots


def _uses(function: ast.AST, slots: dict[str, _Slots], shown: str) -> _FunctionUse:
    found: list[ast.Constant] = []
    outputs: list[bool] = []
    calls: set[str] = set()
    for node in ast.walk(function):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name):
            calls.add(node.func.id)
        for argument, output in _call_slots(node, slots):
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                found.append(argument)
                outputs.append(output)
    for bound, code in _loop_scopes(function):
        for part in code:
            for node in ast.walk(part):
                if isinstance(node, ast.Call):
                    for argument, output in _call_slots(node, slots):
                        if isinstance(argument, ast.Name):
                            literals = bound.get(argument.id, [])
                            found.extend(literals)
                            outputs.extend([output] * len(literals))
    operands = tuple(NamedOperand(str(literal.value), output, Location(shown, literal.lineno, literal.col_offset + 1))
                     for literal, output in zip(found, outputs))
    return _FunctionUse(operands, frozenset(calls))


class ModuleOperands:
    """The operand names each module-level function of one module uses, with those of the
    module's functions it calls."""

    def __init__(self, module: ast.Module, shown: str) -> None:
        functions = _functions(module)
        slots = _operand_slots(functions)
        self._uses = {name: _uses(function, slots, shown) for name, function in functions.items()}

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
