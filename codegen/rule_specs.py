"""The rule catalogue, read from rule declarations without running the modules.

A rule is declared once, on its implementation (``@rule(...)``, see
:mod:`opspec.runtime.contract.declare`). The compiler needs those declarations to check
opdefs references and to write the rules reference before any code of the tree runs (only
the worked examples run a tree's rules, once the tree is known to be sound); so it reads
the source: the decorator's arguments are literals,
calls of the parameter constructors with literal arguments, or names bound to such values
at module level (in the module itself or in a sibling module it imports them from), or the
element type names rules import from the contract (``FLOAT``, ``INT64``).
The built-in rules are read the same way, from the source of :mod:`opspec.runtime.rules`.
"""
from __future__ import annotations

import ast
import importlib.util
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opspec.codegen.diagnostics import Diagnostic, Diagnostics
from opspec.codegen.rule_operands import ModuleOperands, NamedOperand
from opspec.codegen.source import Location
from opspec.runtime.contract import elements
from opspec.runtime.contract.declare import CONSTRUCTORS, DeclarationError, RuleSpec, make_spec

#: The folder of an opdefs tree that holds the tree's own rule modules.
RULES_FOLDER = "rules"
#: Rule modules larger than this are not read (a declaration file is small).
_MAX_SOURCE = 1 << 20


@dataclass(frozen=True)
class DeclaredRule:
    """A rule declaration and where it stands."""

    spec: RuleSpec
    location: Location
    builtin: bool
    #: The input and output names the rule uses as literals (checked against each op version bound to it).
    operands: tuple[NamedOperand, ...] = ()


class _Unreadable(Exception):
    """A declaration argument that is not a literal the reader accepts."""

    def __init__(self, node: ast.AST, message: str) -> None:
        super().__init__(message)
        self.node = node


def builtin_rules_folder() -> Path:
    """The folder of the built-in rule modules (found without importing them)."""
    spec = importlib.util.find_spec("opspec.runtime.rules")
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations)))


def rule_modules(folder: Path) -> list[Path]:
    """The rule modules of a folder: its ``.py`` files that are regular files, by name."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir()
                  if p.suffix == ".py" and p.name != "__init__.py" and p.is_file() and not p.is_symlink())


def read_catalogue(tree_rules: Path | None, diagnostics: Diagnostics, shown: Any = str) -> dict[str, DeclaredRule]:
    """Every declared rule: built-in ones, then those in ``tree_rules`` (an opdefs tree's
    ``rules/`` folder), which may not reuse a built-in rule's name."""
    catalogue: dict[str, DeclaredRule] = {}
    sources = [(path, True) for path in rule_modules(builtin_rules_folder())]
    if tree_rules is not None:
        sources += [(path, False) for path in rule_modules(tree_rules)]
    for path, builtin in sources:
        declarations = (_builtin_declarations(path, diagnostics) if builtin
                        else read_declarations(path, diagnostics, shown(path)))
        for declared in declarations:
            known = catalogue.get(declared.spec.name)
            if known is not None:
                diagnostics.error(declared.location, f"rule {declared.spec.name!r} is already declared at "
                                  f"{known.location}")
                continue
            catalogue[declared.spec.name] = declared
    return catalogue


def _builtin_name(path: Path) -> str:
    return f"runtime/rules/{path.name}"


#: The declarations of each built-in rule module, with the problems found, by path, modification
#: time and size: a run compiles a tree and the op sets layered over it, and each reads them all.
_BUILTIN_READ: dict[tuple[str, int, int], tuple[list[DeclaredRule], list[Diagnostic]]] = {}


#: What :func:`read_builtin_rules` gives: the declarations of each built-in rule module, with the
#: problems found, by its path, modification time and size.
BuiltinRules = dict[tuple[str, int, int], tuple[list[DeclaredRule], list[Diagnostic]]]


def unread_builtin_rules() -> list[Path]:
    """The built-in rule modules whose declarations this process has not read (as they are now)."""
    return [path for path in rule_modules(builtin_rules_folder()) if _builtin_key(path) not in _BUILTIN_READ]


def read_builtin_rules(paths: list[Path]) -> BuiltinRules:
    """The declarations of the built-in rule modules at ``paths`` (see :func:`remember_builtin_rules`)."""
    found: BuiltinRules = {}
    for path in paths:
        key = _builtin_key(path)
        if key is not None:
            problems = Diagnostics()
            found[key] = (read_declarations(path, problems, _builtin_name(path), True), problems.items)
    return found


def remember_builtin_rules(found: BuiltinRules) -> None:
    """Keep what :func:`read_builtin_rules` gave (in another process, maybe) for the catalogues read here."""
    _BUILTIN_READ.update(found)


def _builtin_key(path: Path) -> tuple[str, int, int] | None:
    try:
        status = path.stat()
    except OSError:
        return None
    return str(path), status.st_mtime_ns, status.st_size


def _builtin_declarations(path: Path, diagnostics: Diagnostics) -> list[DeclaredRule]:
    key = _builtin_key(path)
    if key is None:
        return read_declarations(path, diagnostics, _builtin_name(path), True)
    if key not in _BUILTIN_READ:
        found = Diagnostics()
        _BUILTIN_READ[key] = (read_declarations(path, found, _builtin_name(path), True), found.items)
    declarations, problems = _BUILTIN_READ[key]
    for problem in problems:
        diagnostics.error(problem.location, problem.message)
    return declarations


def read_declarations(path: Path, diagnostics: Diagnostics, shown: str, builtin: bool = False) -> list[DeclaredRule]:
    """The ``@rule(...)`` declarations of one module, in order; problems go to ``diagnostics``."""
    try:
        if path.stat().st_size > _MAX_SOURCE:
            diagnostics.error(Location(shown, 1, 1), f"rule module is larger than {_MAX_SOURCE} bytes")
            return []
        source = path.read_text(encoding="utf-8")
        module = ast.parse(source, filename=shown)
    except (OSError, UnicodeDecodeError) as error:
        diagnostics.error(Location(shown, 1, 1), f"cannot read rule module: {error}")
        return []
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        line = getattr(error, "lineno", None) or 1
        column = getattr(error, "offset", None) or 1
        diagnostics.error(Location(shown, line, column), f"rule module does not parse: {getattr(error, 'msg', error)}")
        return []
    names = _module_constants(module, path.parent, depth=1)
    operands = ModuleOperands(module, shown)
    found = []
    for statement in module.body:
        if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for decorator in statement.decorator_list:
            if not (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Name)
                    and decorator.func.id == "rule"):
                continue
            where = Location(shown, decorator.lineno, decorator.col_offset + 1)
            try:
                args = [_literal(a, names) for a in decorator.args]
                kwargs = {k.arg: _literal(k.value, names) for k in decorator.keywords if k.arg is not None}
                if len(args) != 2 or any(k.arg is None for k in decorator.keywords):
                    raise _Unreadable(decorator, "rule(...) takes a name and a summary, then parameters by keyword")
                found.append(DeclaredRule(make_spec(args[0], args[1], kwargs), where, builtin,
                                          operands.of(statement.name)))
            except _Unreadable as error:
                node = error.node
                diagnostics.error(Location(shown, getattr(node, "lineno", decorator.lineno),
                                           getattr(node, "col_offset", decorator.col_offset) + 1), str(error))
            except (DeclarationError, TypeError) as error:
                diagnostics.error(where, f"rule declaration: {error}")
    return found


#: The modules rules take element type names from (their values are plain ints).
_ELEMENT_MODULES = frozenset({"opspec.runtime.contract", "opspec.runtime.contract.elements"})


def _module_constants(module: ast.Module, folder: Path, depth: int) -> dict[str, Any]:
    """Names bound at module level to readable values, and such names imported from siblings."""
    names: dict[str, Any] = {}
    for statement in module.body:
        if isinstance(statement, ast.ImportFrom) and statement.module in _ELEMENT_MODULES:
            for alias in statement.names:
                if type(getattr(elements, alias.name, None)) is int:
                    names[alias.asname or alias.name] = getattr(elements, alias.name)
        elif isinstance(statement, ast.ImportFrom) and statement.module and depth > 0:
            theirs = _sibling_constants(folder / f"{statement.module.rsplit('.', 1)[-1]}.py", depth - 1)
            if theirs is not None:
                for alias in statement.names:
                    if alias.name in theirs:
                        names[alias.asname or alias.name] = theirs[alias.name]
        elif isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name):
            try:
                names[statement.targets[0].id] = _literal(statement.value, names)
            except (_Unreadable, DeclarationError, TypeError):
                pass
    return names


#: The constants of each sibling module read, by path, modification time, size and depth: many rule
#: modules import from the same few helpers.
_SIBLINGS: dict[tuple[str, int, int, int], dict[str, Any] | None] = {}


def _sibling_constants(sibling: Path, depth: int) -> dict[str, Any] | None:
    """The constants of a sibling module (see :func:`_module_constants`), None if it cannot be read."""
    try:
        status = sibling.lstat()
    except OSError:
        return None
    key = (str(sibling), status.st_mtime_ns, status.st_size, depth)
    if key not in _SIBLINGS:
        found = None
        if stat.S_ISREG(status.st_mode) and status.st_size <= _MAX_SOURCE:
            try:
                found = _module_constants(ast.parse(sibling.read_text(encoding="utf-8")), sibling.parent, depth)
            except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
                pass
        _SIBLINGS[key] = found
    return _SIBLINGS[key]


def _literal(node: ast.AST, names: dict[str, Any]) -> Any:
    """The value of a declaration argument (see the module docstring)."""
    if isinstance(node, ast.Name):
        if node.id in names:
            return names[node.id]
        raise _Unreadable(node, f"{node.id!r} is not a literal bound at module level")
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in CONSTRUCTORS:
            raise _Unreadable(node, f"only {', '.join(CONSTRUCTORS)} may be called in a rule declaration")
        args = [_literal(a, names) for a in node.args]
        if any(k.arg is None for k in node.keywords):
            raise _Unreadable(node, "** arguments are not allowed in a rule declaration")
        kwargs = {k.arg: _literal(k.value, names) for k in node.keywords if k.arg is not None}
        return CONSTRUCTORS[node.func.id](*args, **kwargs)
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(_literal(e, names) for e in node.elts)
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        raise _Unreadable(node, "a rule declaration takes literals only") from None
