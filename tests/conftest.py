"""Shared fixtures: the slice of ONNX ops the built-in opdefs cover, and onnx's schemas for it."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # test helper modules

from opspec.runtime.inference import engine as _engine  # noqa: E402

# A Python exception inside a rule is a bug: the suite sees it instead of a node error.
_engine.RAISE_RULE_BUGS = True

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
