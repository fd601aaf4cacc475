"""Shared fixtures: the slice of ONNX ops the built-in opdefs cover, and onnx's schemas for it."""
from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from pathlib import Path
from types import FrameType

import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))  # test helper modules

#: Packages only the tests use: where one is not installed (the dependency-range checks,
#: ``make compat``), a test that imports it is skipped, while opspec's own code still sees
#: the plain ImportError it handles.
TEST_ONLY = ("onnx", "onnxruntime", "numpy", "grpc_tools")


class _SkipTestsNeeding(importlib.abc.MetaPathFinder):
    """Turns a test's import of a missing test-only package into a skip."""

    def __init__(self, missing: set[str]):
        self.missing = missing

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] not in self.missing:
            return None
        frame: FrameType | None = sys._getframe(1)
        while frame is not None and frame.f_globals.get("__name__", "").startswith(("importlib", "_frozen_importlib")):
            frame = frame.f_back  # the import machinery between the importer and this finder
        origin = frame.f_globals.get("__file__") if frame is not None else None
        if origin and Path(origin).resolve().is_relative_to(TESTS):
            raise pytest.skip.Exception(f"needs {name.partition('.')[0]}", allow_module_level=True)
        return None


_missing = {name for name in TEST_ONLY if importlib.util.find_spec(name) is None}
if _missing:
    sys.meta_path.insert(0, _SkipTestsNeeding(_missing))

from opspec.runtime.inference import node_errors  # noqa: E402

# A Python exception inside a rule is a bug: the suite sees it instead of a node error.
node_errors.RAISE_RULE_BUGS = True

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def onnx_slice():
    """{(name, since_version): onnx OpSchema} for every op opspec defines in ai.onnx."""
    import onnx.defs

    import opspec

    names = {schema.name for schema in opspec.get_all_schemas()}
    return {
        (s.name, s.since_version): s
        for s in onnx.defs.get_all_schemas_with_history()
        if s.domain == "" and s.name in names
    }


def _same_shape(ctx):
    ctx.set_output_shape(0, ctx.input_shape(0))


def _broadcast(ctx):
    from opspec.runtime.shape import broadcast_shapes

    shapes = [ctx.input_shape(i) for i in range(ctx.input_count)]
    if all(shape is not None for shape in shapes):
        ctx.set_output_shape(0, broadcast_shapes(*shapes))


@pytest.fixture
def fake_rules(monkeypatch):
    """Small stand-in rules, so engine tests do not depend on the real rule families.

    Constant nodes keep their real rule: their outputs are how constant data enters.
    Tests may replace entries of the returned table.
    """
    from opspec.runtime.rulebook import RULES

    table = {"elementwise": _same_shape, "broadcast": _broadcast, "constant": RULES.lookup("constant")}
    monkeypatch.setattr(RULES, "lookup", lambda name: table.get(name))
    return table
