"""ONNX's node conformance suite: opspec's and onnx's outcomes on every case, in both variants."""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

TITLES = {
    "as shipped": "As shipped",
    "int inputs as initializers": "Every int32/int64 input as an initializer (as exported models carry shapes, axes, sizes, k)",
}


def bench_conformance() -> list[str]:
    """The outcome tables of ``tests/conformance/harness.py`` with what they mean."""
    import onnx

    from conformance import harness

    started = time.perf_counter()
    tables = {variant: harness.table(harness.run_all(variant)) for variant in harness.VARIANTS}
    seconds = time.perf_counter() - started
    rows = [
        f"All {len(harness.cases())} cases of `onnx.backend.test.case.node.collect_testcases()` (onnx {onnx.__version__}),",
        "printed by `python tests/conformance/harness.py`; `make conformance` rewrites the committed expectations",
        "(`tests/conformance/expected*.json`) and regenerates the docs that show them. Each case's outputs",
        "are stripped of their types and inferred with `data_prop=True`; cases are grouped by how far opspec",
        "covers their ops: every op has an inference rule (\"rule\"), some op has a schema but no rule yet",
        "(\"no rule\"), some op has no schema (\"no schema\"). \"behind onnx\" counts cases (or outputs) where",
        "onnx is EXACT and opspec is not; `make test` requires none in the \"rule\" group, no WRONG or ERROR",
        "anywhere, and no case worse than committed, in both variants. Collecting and scoring both variants",
        f"with both engines took {seconds:.1f} s here; `--missing` lists the ops without a schema.",
    ]
    for variant, text in tables.items():
        rows += ["", f"### {TITLES.get(variant, variant)}", "", text]
    return rows


BENCHMARK = ("conformance", "Node conformance suite", bench_conformance)
