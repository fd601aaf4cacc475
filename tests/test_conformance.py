"""Inference against ONNX's whole node conformance suite: real outputs are the oracle.

Every case is scored, in two variants (as shipped; int32/int64 inputs as initializers). A case
whose ops all have an inference rule must be exact wherever onnx is; a case with an op that has
no rule yet or no schema is scored and held to the committed expectations only.
"""
from __future__ import annotations

import json

import pytest

from conformance import harness
from conformance.outcome import RANK


@pytest.fixture(scope="module", params=list(harness.VARIANTS))
def results(request):
    return request.param, harness.run_all(request.param)


def test_no_case_is_wrong(results):
    _, outcomes = results
    wrong = {name: r["opspec_outputs"] for name, r in outcomes.items() if r["opspec"] in ("WRONG", "ERROR")}
    assert wrong == {}


def test_no_regression_against_the_committed_expectations(results):
    variant, outcomes = results
    expected = json.loads(harness.EXPECTED[variant].read_text(encoding="utf-8"))
    assert set(expected) == set(outcomes), "the suite changed: run `make conformance`"
    worse = {name: (expected[name], r["opspec"]) for name, r in outcomes.items()
             if RANK[r["opspec"]] > RANK[expected[name]]}
    assert worse == {}, "regressions (expected, now)"


def test_exact_wherever_onnx_is_exact_for_ruled_ops(results):
    _, outcomes = results
    ruled = {name: r for name, r in outcomes.items() if r["coverage"] == "rule"}
    assert harness.behind(ruled) == {}


def test_every_case_of_the_suite_is_scored():
    assert len(harness.run_all()) == len(harness.cases())
    assert {r["coverage"] for r in harness.run_all().values()} <= set(harness.COVERAGE)
