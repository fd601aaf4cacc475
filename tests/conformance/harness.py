"""ONNX node conformance cases as an inference oracle.

Each case's graph outputs are stripped of their types, inference runs, and every output's
inferred element type and shape is compared with the real output array of the case:

- EXACT: element type and every dimension known and right;
- PARTIAL: nothing contradicts the array, but something is unknown or symbolic;
- MISSING: no type inferred;
- WRONG: the element type, the rank or a known dimension contradicts the array;
- ERROR: inference itself failed.

``python tests/conformance/harness.py --update`` rewrites ``expected.json`` and prints
the counts for opspec and onnx side by side.
"""
from __future__ import annotations

import json
import sys
import warnings
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

EXPECTED = Path(__file__).resolve().parent / "expected.json"
ORDER = ("EXACT", "PARTIAL", "MISSING", "WRONG", "ERROR")


@lru_cache(maxsize=1)
def cases() -> tuple[Any, ...]:
    """Conformance cases whose nodes all belong to the built-in slice, with real outputs."""
    from onnx.backend.test.case.node import collect_testcases

    import opspec

    names = {schema.name for schema in opspec.get_all_schemas() if schema.domain == ""}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        collected = collect_testcases(None)
    return tuple(
        case for case in collected
        if case.data_sets and not case.model.functions
        and all(node.domain in ("", "ai.onnx") and node.op_type in names for node in case.model.graph.node)
    )


def stripped(model: Any) -> Any:
    """A copy of ``model`` whose graph outputs carry no type."""
    copy = type(model)()
    copy.CopyFrom(model)
    for output in copy.graph.output:
        output.ClearField("type")
    return copy


def expected_type(output: Any) -> tuple[int | None, tuple[int, ...]] | None:
    """(element type, shape) of a real tensor output (numpy value or TensorProto); else None."""
    import numpy as np
    from onnx import helper

    if isinstance(output, np.generic):
        output = np.asarray(output)
    if isinstance(output, np.ndarray):
        try:
            return helper.np_dtype_to_tensor_dtype(output.dtype), output.shape
        except (KeyError, TypeError, ValueError):
            return None, output.shape
    if hasattr(output, "data_type") and hasattr(output, "dims"):
        return output.data_type, tuple(output.dims)
    return None


def output_status(value_type: Any, output: Any) -> str:
    """Classify one inferred output type against the real output (tensor, sequence or optional)."""
    kind = value_type.WhichOneof("value")
    if kind is None:
        return "MISSING"
    if kind == "optional_type":
        return output_status(value_type.optional_type.elem_type, output) if output is not None else "EXACT"
    if isinstance(output, list):
        if kind != "sequence_type":
            return "WRONG"
        statuses = [output_status(value_type.sequence_type.elem_type, item) for item in output]
        return case_status(statuses) if statuses else "EXACT"
    expected = expected_type(output)
    if expected is None:
        return "MISSING"
    if kind != "tensor_type":
        return "WRONG"
    tensor = value_type.tensor_type
    if tensor.elem_type == 0:
        return "MISSING"
    elem, shape = expected
    if elem is not None and tensor.elem_type != elem:
        return "WRONG"
    if not tensor.HasField("shape"):
        return "PARTIAL"
    dims = tensor.shape.dim
    if len(dims) != len(shape):
        return "WRONG"
    exact = True
    for dim, size in zip(dims, shape):
        if dim.HasField("dim_value"):
            if dim.dim_value != size:
                return "WRONG"
        else:
            exact = False
    return "EXACT" if exact else "PARTIAL"


def case_status(statuses: list[str]) -> str:
    if "WRONG" in statuses:
        return "WRONG"
    if all(s == "EXACT" for s in statuses):
        return "EXACT"
    if all(s == "MISSING" for s in statuses):
        return "MISSING"
    return "PARTIAL"


def evaluate(infer: Callable[[Any], Any], case: Any) -> tuple[str, list[str]]:
    """Run ``infer`` on a stripped case: (case status, per-output statuses)."""
    try:
        inferred = infer(stripped(case.model))
    except Exception:  # noqa: BLE001 - any failure of the engine under test is a result
        return "ERROR", []
    arrays = case.data_sets[0][1]
    statuses = [output_status(output.type, array) for output, array in zip(inferred.graph.output, arrays)]
    return case_status(statuses), statuses


def opspec_infer(model: Any) -> Any:
    import opspec

    return opspec.infer_shapes(model, data_prop=True)


def onnx_infer(model: Any) -> Any:
    import onnx.shape_inference

    return onnx.shape_inference.infer_shapes(model, data_prop=True)


def run_all() -> dict[str, dict[str, Any]]:
    """{case name: {"opspec": status, "onnx": status, "opspec_outputs": [...], "onnx_outputs": [...]}}."""
    results = {}
    for case in cases():
        ours, our_outputs = evaluate(opspec_infer, case)
        theirs, their_outputs = evaluate(onnx_infer, case)
        results[case.name] = {"opspec": ours, "onnx": theirs, "opspec_outputs": our_outputs,
                              "onnx_outputs": their_outputs}
    return results


def counts(results: dict[str, dict[str, Any]], engine: str) -> Counter[str]:
    return Counter(result[engine] for result in results.values())


def table(results: dict[str, dict[str, Any]]) -> str:
    rows = ["| engine | cases | " + " | ".join(ORDER) + " |", "|---|---:|" + "---:|" * len(ORDER)]
    for engine in ("opspec", "onnx"):
        tally = counts(results, engine)
        rows.append(f"| {engine} | {len(results)} | " + " | ".join(str(tally[s]) for s in ORDER) + " |")
    return "\n".join(rows)


def main() -> None:
    results = run_all()
    print(table(results))
    if "--update" in sys.argv:
        EXPECTED.write_text(
            json.dumps({name: result["opspec"] for name, result in sorted(results.items())}, indent=1) + "\n",
            encoding="utf-8",
        )
        print(f"wrote {EXPECTED}")


if __name__ == "__main__":
    main()
