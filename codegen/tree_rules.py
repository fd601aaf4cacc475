"""A tree's own rule modules, loaded so that its worked examples run them.

The registry package that ``opspec generate`` writes carries a copy of each module of the
tree's ``rules/`` folder and imports them when it is registered. The worked examples of the
docs are computed before that, so here the same text is loaded into a rule book of its own:
built-in rules plus the tree's. The modules are loaded from the text the compiler read (the
text that is copied), nothing is written beside them, and they stay out of ``sys.modules``
once loaded (they are there only while their own code runs, as an import needs).
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import itertools
import sys
import traceback
from types import ModuleType

from opspec.codegen.diagnostics import CompileError, Diagnostic
from opspec.codegen.source import Location
from opspec.runtime.rulebook import RuleBook, RuleConflict

#: Numbers the packages of loaded rule modules in this process (each load gets a name of its own).
_LOADS = itertools.count()


class _TextLoader(importlib.abc.SourceLoader):
    """Loads one module from text already read (no bytecode is cached)."""

    def __init__(self, shown: str, text: str) -> None:
        self._shown, self._text = shown, text

    def get_filename(self, fullname: str) -> str:
        return self._shown

    def get_data(self, path: str) -> bytes:
        return self._text.encode("utf-8")


def tree_rule_book(folder: str, modules: tuple[tuple[str, str], ...]) -> RuleBook | None:
    """A rule book of the built-in rules and those of ``modules`` ((file name, text) of the tree's
    rule modules, whose folder errors name ``folder``); None when there are none. A module that
    cannot be loaded is a :class:`CompileError` located in it."""
    if not modules:
        return None
    book = RuleBook()
    package = f"_opspec_tree_rules{next(_LOADS)}"
    parent = ModuleType(package, "The rule modules of a tree being generated.")
    parent.__path__ = []  # a package with no folder: its modules come from the loader below
    problems: list[Diagnostic] = []
    planted = [package]
    sys.modules[package] = parent
    try:
        for name, text in modules:
            shown = f"{folder}/{name}"
            module_name = f"{package}.{name.removesuffix('.py')}"
            loader = _TextLoader(shown, text)
            spec = importlib.util.spec_from_loader(module_name, loader, origin=shown)
            assert spec is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module
            planted.append(module_name)
            try:
                loader.exec_module(module)
                book.add_module(module)
            except RuleConflict as error:
                problems.append(Diagnostic(Location(shown, 1, 1), str(error)))
            except Exception as error:  # noqa: BLE001 - the tree's own code: any failure is its error
                problems.append(Diagnostic(Location(shown, _line_in(error, shown), 1),
                                           f"the rule module cannot be loaded: {type(error).__name__}: {error}"))
    finally:
        for name in planted:
            sys.modules.pop(name, None)
    if problems:
        raise CompileError(problems)
    return book


def _line_in(error: BaseException, shown: str) -> int:
    """The line of ``shown`` where ``error`` was raised (its innermost frame there), else 1."""
    if isinstance(error, SyntaxError) and error.filename == shown and error.lineno:
        return error.lineno
    lines = [frame.lineno for frame in traceback.extract_tb(error.__traceback__) if frame.filename == shown]
    return lines[-1] if lines and lines[-1] else 1


__all__ = ["tree_rule_book"]
