"""Shared fixtures: the slice of ONNX ops the built-in opdefs cover, and onnx's schemas for it."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # test helper modules

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
