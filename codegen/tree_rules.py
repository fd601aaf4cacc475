"""A tree's own rule modules, loaded so that its worked examples run them.

The registry package that ``opspec generate`` writes carries a copy of each module of the
tree's ``rules/`` folder and imports them when it is registered. The worked examples of the
docs are computed before that, so here the same text is loaded into a rule book of its own:
built-in rules plus the tree's. The modules are loaded from the text the compiler read (the
text that is copied), nothing is written beside them, and they stay out of ``sys.modules``
and its finders once loaded (they are there only while their own code runs, as an import
needs; a module may import its siblings relatively, as in the generated package).
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import itertools
import sys
import traceback
from importlib.machinery import ModuleSpec
from types import ModuleType

from opspec.codegen.diagnostics import CompileError, Diagnostics
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


class _TreeFinder(importlib.abc.MetaPathFinder):
    """Finds the modules of one load's package in the texts given (so that a rule module may import
    a sibling, ``from ._helpers import ...``, as it does in the generated package)."""

    def __init__(self, package: str, texts: dict[str, tuple[str, str]]) -> None:
        self._package, self._texts = package, texts  # module name -> (shown path, text)

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> ModuleSpec | None:
        prefix, _, name = fullname.rpartition(".")
        if prefix != self._package or name not in self._texts:
            return None
        shown, text = self._texts[name]
        return importlib.util.spec_from_loader(fullname, _TextLoader(shown, text), origin=shown)


def tree_rule_book(folder: str, modules: tuple[tuple[str, str], ...]) -> RuleBook | None:
    """A rule book of the built-in rules and those of ``modules`` ((file name, text) of the tree's
    rule modules, whose folder errors name ``folder``); None when there are none. A module that
    cannot be loaded is a :class:`CompileError` located in it."""
    if not modules:
        return None
    book = RuleBook()
    package = f"_opspec_tree_rules{next(_LOADS)}"
    parent = ModuleType(package, "The rule modules of a tree being generated.")
    parent.__path__ = []  # a package with no folder: its modules come from the finder below
    texts = {name.removesuffix(".py"): (f"{folder}/{name}", text) for name, text in modules}
    finder = _TreeFinder(package, texts)
    problems = Diagnostics()  # a sibling that fails fails each module importing it: said once
    sys.modules[package] = parent
    sys.meta_path.insert(0, finder)
    try:
        for stem, (shown, _) in texts.items():
            try:
                book.add_module(importlib.import_module(f"{package}.{stem}"))
            except RuleConflict as error:
                problems.error(Location(shown, 1, 1), str(error))
            except Exception as error:  # noqa: BLE001 - the tree's own code: any failure is its error
                where = _where(error, {shown for shown, _ in texts.values()}) or Location(shown, 1, 1)
                problems.error(where, f"the rule module cannot be loaded: {type(error).__name__}: {error}")
    finally:
        sys.meta_path.remove(finder)
        for name in [name for name in sys.modules if name == package or name.startswith(f"{package}.")]:
            del sys.modules[name]
    if problems:
        raise CompileError(problems.sorted())
    return book


def _where(error: BaseException, shown: set[str]) -> Location | None:
    """Where in the tree's rule modules ``error`` was raised: its innermost frame in one of them."""
    if isinstance(error, SyntaxError) and error.filename in shown and error.lineno:
        return Location(error.filename, error.lineno, error.offset or 1)
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename in shown]
    return Location(frames[-1].filename, frames[-1].lineno or 1, 1) if frames else None


__all__ = ["tree_rule_book"]
