"""ONNX's node conformance suite as an inference oracle: every case, against committed expectations.

Each case's graph outputs are stripped of their types, inference runs, and every output's inferred
type is compared with the case's real output (see ``outcome`` for the classes). Every case of
``onnx.backend.test.case.node.collect_testcases()`` is scored, whatever its ops; each case also says
how far opspec covers its ops (``COVERAGE``): all ops have an inference rule, some op has a schema but
no rule yet, or some op has no schema. Only fully ruled cases are held to "exact wherever onnx is".
Cases with model-local functions run like any other (the engine infers through them); the ops of
their bodies count for coverage.

Two variants of every case run: the model as shipped, and the model with every int32/int64 input
turned into an initializer, as exported models carry shapes, axes, sizes and k.

``python tests/conformance/harness.py`` prints the tables; ``--update`` also rewrites the committed
expectations (``make conformance`` does that and regenerates the docs that show them).
"""
from __future__ import annotations

import json
import sys
import warnings
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator

if __package__ in (None, ""):  # run as a script: make the ``conformance`` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.outcome import ORDER, case_status, output_status  # noqa: E402
from conformance.variants import VARIANTS  # noqa: E402

HERE = Path(__file__).resolve().parent
#: Committed outcome of opspec per case and variant (the first one is also read by the docs).
EXPECTED = {"as shipped": HERE / "expected.json", "int inputs as initializers": HERE / "expected_initializers.json"}
COVERAGE = ("rule", "no rule", "no schema")
ENGINES = ("opspec", "onnx")


@lru_cache(maxsize=1)
def cases() -> tuple[Any, ...]:
    """Every node conformance case with real outputs."""
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        collected = collect_testcases(None)
    return tuple(case for case in collected if case.data_sets)


def nodes(graph: Any) -> Iterator[Any]:
    """Every node of ``graph`` and of its subgraphs."""
    for node in graph.node:
        yield node
        for attribute in node.attribute:
            if attribute.HasField("g"):
                yield from nodes(attribute.g)
            for subgraph in attribute.graphs:
                yield from nodes(subgraph)


def schemas(model: Any) -> Iterator[tuple[str, Any]]:
    """(op name, opspec schema or None) for every node of ``model``, its subgraphs and its
    model-local functions; calls of a model-local function are not ops of their own."""
    import opspec

    opsets = {("" if entry.domain == "ai.onnx" else entry.domain): entry.version for entry in model.opset_import}
    local = {(function.domain, function.name) for function in model.functions}
    bodies = [node for function in model.functions for node in function.node]
    for node in [*nodes(model.graph), *bodies]:
        domain = "" if node.domain == "ai.onnx" else node.domain
        if (node.domain, node.op_type) in local:
            continue
        try:
            schema = opspec.get_schema(node.op_type, opsets.get(domain), domain)
        except LookupError:
            schema = None
        yield f"{domain + '::' if domain else ''}{node.op_type}", schema


def coverage(model: Any) -> str:
    """How far opspec covers the ops of ``model``: the weakest of its nodes (see ``COVERAGE``)."""
    worst = 0
    for _, schema in schemas(model):
        worst = max(worst, 2 if schema is None else 0 if schema.inference else 1)
    return COVERAGE[worst]


def evaluate(infer: Callable[[Any], Any], model: Any, arrays: list[Any]) -> tuple[str, list[str]]:
    """Run ``infer`` on a prepared case model: (case status, per-output statuses)."""
    try:
        inferred = infer(model)
    except Exception:  # noqa: BLE001 - any failure of the engine under test is a result
        return "ERROR", []
    statuses = [output_status(output.type, array) for output, array in zip(inferred.graph.output, arrays)]
    return case_status(statuses), statuses


def opspec_infer(model: Any) -> Any:
    import opspec

    return opspec.infer_shapes(model, data_prop=True)


def onnx_infer(model: Any) -> Any:
    import onnx.shape_inference

    return onnx.shape_inference.infer_shapes(model, data_prop=True)


INFER = {"opspec": opspec_infer, "onnx": onnx_infer}


@lru_cache(maxsize=None)
def run_all(variant: str = "as shipped") -> dict[str, dict[str, Any]]:
    """{case: {"coverage", "opspec", "onnx", "opspec_outputs", "onnx_outputs"}} for one variant."""
    prepare = VARIANTS[variant]
    results = {}
    for case in cases():
        inputs, outputs = case.data_sets[0]
        model = prepare(case.model, list(inputs))
        result: dict[str, Any] = {"coverage": coverage(case.model)}
        for engine, infer in INFER.items():
            result[engine], result[f"{engine}_outputs"] = evaluate(infer, model, list(outputs))
        results[case.name] = result
    return results


def behind(results: dict[str, dict[str, Any]]) -> dict[str, str]:
    """{case[output]: opspec outcome} for every output onnx gets exact and opspec does not."""
    found = {}
    for name, result in results.items():
        for index, (ours, theirs) in enumerate(zip(result["opspec_outputs"], result["onnx_outputs"])):
            if theirs == "EXACT" and ours != "EXACT":
                found[f"{name}[{index}]"] = ours
    return found


def table(results: dict[str, dict[str, Any]]) -> str:
    """Outcome counts per engine: all cases, then per coverage class, then over scored outputs."""
    head = "| engine | scope | count | " + " | ".join(ORDER) + " | behind onnx |"
    rows = [head, "|---|---|---:|" + "---:|" * (len(ORDER) + 1)]
    scopes = [("all cases", results)] + [
        (f"cases, {scope}", {n: r for n, r in results.items() if r["coverage"] == scope}) for scope in COVERAGE]
    for engine in ENGINES:
        for scope, chosen in scopes:
            tally = Counter(r[engine] for r in chosen.values())
            lag = str(len({k.split("[")[0] for k in behind(chosen)})) if engine == "opspec" else ""
            rows.append(f"| {engine} | {scope} | {len(chosen)} | "
                        + " | ".join(str(tally[s]) for s in ORDER) + f" | {lag} |")
        outputs = Counter(s for r in results.values() for s in r[f"{engine}_outputs"])
        lag = str(len(behind(results))) if engine == "opspec" else ""
        rows.append(f"| {engine} | outputs scored | {sum(outputs.values())} | "
                    + " | ".join(str(outputs[s]) if s != "ERROR" else "" for s in ORDER) + f" | {lag} |")
    return "\n".join(rows)


def missing_ops() -> Counter[str]:
    """Ops of the suite that opspec has no schema for, with how many cases use them."""
    counted: Counter[str] = Counter()
    for case in cases():
        counted.update({name for name, schema in schemas(case.model) if schema is None})
    return counted


def write_expected() -> None:
    """Rewrite the committed expectations from this run."""
    for variant, path in EXPECTED.items():
        results = run_all(variant)
        path.write_text(json.dumps({n: r["opspec"] for n, r in sorted(results.items())}, indent=1) + "\n",
                        encoding="utf-8")
        print(f"wrote {path}")


def main(argv: list[str]) -> None:
    for variant in VARIANTS:
        print(f"\n### {variant}\n")
        print(table(run_all(variant)))
    if "--missing" in argv:
        print("\nops without a schema (cases): "
              + ", ".join(f"{op} ({n})" for op, n in sorted(missing_ops().items())))
    if "--update" in argv:
        write_expected()


if __name__ == "__main__":
    main(sys.argv[1:])
