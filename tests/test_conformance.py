"""Inference against ONNX's node conformance suite: real outputs are the oracle."""
from __future__ import annotations

import json

import pytest

from conformance import harness

RANK = {status: index for index, status in enumerate(harness.ORDER)}


@pytest.fixture(scope="module")
def results():
    return harness.run_all()


def test_no_case_is_wrong(results):
    wrong = {name: r["opspec_outputs"] for name, r in results.items() if r["opspec"] in ("WRONG", "ERROR")}
    assert wrong == {}


def test_no_regression_against_the_committed_expectations(results):
    expected = json.loads(harness.EXPECTED.read_text(encoding="utf-8"))
    assert set(expected) == set(results), "the selection of cases changed: run harness.py --update"
    worse = {name: (expected[name], r["opspec"]) for name, r in results.items()
             if RANK[r["opspec"]] > RANK[expected[name]]}
    assert worse == {}, "regressions (expected, now)"


def test_exact_wherever_onnx_is_exact(results):
    behind = {}
    for name, r in results.items():
        for index, (ours, theirs) in enumerate(zip(r["opspec_outputs"], r["onnx_outputs"])):
            if theirs == "EXACT" and ours != "EXACT":
                behind[f"{name}[{index}]"] = ours
    assert behind == {}
