"""Helpers shared by the tests of onnxruntime's operators (``test_ort_*.py``).

Held against onnxruntime's runs: :func:`exact` and :func:`sound` (see ``ort_oracle``). Held
against onnxruntime's own inference, for ops its CPU provider has no kernel for:
:func:`ort_inference`. Run as the engine runs them: :func:`outputs`.
"""
from __future__ import annotations

import re
from typing import Any, Sequence

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper
from ort_oracle import Case, Const, check, model_of
from opspec.runtime.testing import run_rule

MS = "com.microsoft"


def exact(case: Case, settings: Sequence[dict[str, int]]) -> list:
    """opspec's (element type, shape) per output of ``case``: no run at ``settings`` contradicts it,
    and every type and dim is known."""
    verdict = check(case, settings)
    assert verdict.problems == []
    assert verdict.exact, verdict.inferred
    return verdict.inferred


def sound(case: Case, settings: Sequence[dict[str, int]]) -> list:
    """opspec's (element type, shape) per output of ``case``, which no run at ``settings`` contradicts."""
    verdict = check(case, settings)
    assert verdict.problems == []
    return verdict.inferred


def ones(*shape: int) -> Const:
    """A float initializer of ones."""
    return Const(np.ones(shape))


def scalar(value: Any, elem: int) -> Const:
    """A scalar initializer."""
    return Const(np.array(value), elem)


def outputs(op: str, inputs: list, attributes: dict | None = None, count: int | None = None, *, domain: str = MS,
            **kwargs: Any) -> list:
    """The output types ``op``'s rule (version 1 of ``domain``) gives, ``count`` of them (default: all)."""
    ctx = run_rule(op, 1, inputs, attributes, domain=domain, output_count=count, **kwargs)
    return [ctx.output_type(i) for i in range(ctx.output_count)]


def ort_inference(capfd: Any, case: Case, output: int = 0) -> tuple[int, tuple | None]:
    """onnxruntime's own inference of output ``output`` of ``case``, a node its CPU provider has no kernel for.

    The output is declared with a type and a rank that onnxruntime's answer contradicts: it
    names the type it expected in its error, and logs the shape it inferred ("source") when it
    falls back to the declared one. Returns (element type, shape with None for symbolic dims,
    or None when onnxruntime infers no shape).
    """
    elem: int = TensorProto.BOOL
    for _ in range(2):
        model = model_of(case)
        model.graph.output[output].CopyFrom(helper.make_tensor_value_info(f"out{output}", elem, (99,) * 7))
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 1
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
        capfd.readouterr()
        with pytest.raises(Exception) as failure:
            onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        expected = re.search(r"does not match expected type \(tensor\((\w+)\)\)", str(failure.value))
        if expected is None:
            assert "NOT_IMPLEMENTED" in str(failure.value), failure.value  # resolved, then no kernel
            break
        elem = TensorProto.DataType.Value(expected.group(1).upper())
    logged = re.search(rf"'out{output}' source:\{{([-0-9,]*)\}}", capfd.readouterr().err)
    shape = None
    if logged is not None:
        shape = tuple(None if d == "-1" else int(d) for d in logged.group(1).split(",") if d)
    return elem, shape
