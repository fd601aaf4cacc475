"""Models converted to other opsets and proven by running: the oracle of ``opspec convert``.

A conversion is ``ok`` when the converted model is at the target opset, passes
``onnx.checker``'s full check, runs in onnxruntime with the outputs of the original on the
same seeded inputs (rtol 1e-3 for floats, exact otherwise) and opspec's inference of it
agrees with those outputs; ``refused`` when the converter declines; ``wrong`` otherwise
(a converted model that is not at the target, that the checker rejects, that does not
run or that computes something else). The same cases hold onnx's version converter.
"""
from __future__ import annotations

import random
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

import opspec

OLDEST, NEWEST = 7, 25  # onnxruntime 1.31 runs opsets up to 25 with every kernel used here
OK, REFUSED, WRONG = "ok", "refused", "wrong"


@dataclass(frozen=True)
class Case:
    """A model and inputs it runs on."""

    name: str
    model: Any
    inputs: dict[str, np.ndarray]


@dataclass(frozen=True)
class Outcome:
    verdict: str
    detail: str = ""


def standard_opset(model: Any) -> int:
    return next((e.version for e in model.opset_import if e.domain in ("", "ai.onnx")), 1)


def session(model: Any) -> Any:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def run(model: Any, inputs: dict[str, np.ndarray]) -> list:
    sess = session(model)
    names = {i.name for i in sess.get_inputs()}
    return sess.run(None, {k: v for k, v in inputs.items() if k in names})


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind in "fc":
        return bool(np.allclose(a, b, rtol=1e-3, atol=1e-5, equal_nan=True))
    return bool(np.array_equal(a, b))


def inference_errors(model: Any) -> frozenset[str]:
    """The messages of the node problems opspec's inference finds in ``model``."""
    return frozenset(error.message for error in opspec.infer(model, data_prop=True).errors)


def inference_disagreement(model: Any, outputs: list, names: list[str], known: frozenset[str]) -> str:
    """Empty when opspec's inference of ``model`` states nothing its run contradicts and finds no
    node problem beyond the ``known`` ones (those of the original)."""
    result = opspec.infer(model, data_prop=True)
    new = [error for error in result.errors if error.message not in known]
    if new:
        return f"opspec inference: {new[0]}"
    for name, actual in zip(names, outputs):
        inferred = result.values.get(name)
        if inferred is None or not hasattr(inferred[0], "elem") or not isinstance(actual, np.ndarray):
            continue
        value = inferred[0]
        if value.elem and helper.tensor_dtype_to_np_dtype(value.elem) != actual.dtype:
            return f"opspec infers {name} as element type {value.elem}, the run gives {actual.dtype}"
        if value.shape is not None:
            if len(value.shape) != actual.ndim:
                return f"opspec infers {name} with rank {len(value.shape)}, the run gives {actual.ndim}"
            for dim, size in zip(value.shape, actual.shape):
                if isinstance(dim, int) and dim != size:
                    return f"opspec infers {name} as {value.shape}, the run gives {actual.shape}"
    return ""


def judge(case: Case, target: int, convert: Callable[[Any, int], Any], expected: list,
          original_errors: frozenset[str] | None = None) -> Outcome:
    """Convert ``case`` to ``target`` and prove the result (``expected``: the original's outputs;
    ``original_errors``: its ``inference_errors``, worked out here when not given)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            converted = convert(case.model, target)
    except Exception as error:  # noqa: BLE001 - any failure to convert is a refusal
        reasons = "; ".join(line.strip() for line in str(error).strip().splitlines())
        return Outcome(REFUSED, f"{type(error).__name__}: {reasons[:400]}")
    if standard_opset(converted) != target:
        return Outcome(WRONG, f"the result is at opset {standard_opset(converted)}")
    try:
        onnx.checker.check_model(converted, full_check=True)
    except Exception as error:  # noqa: BLE001
        return Outcome(WRONG, f"checker: {str(error).strip().splitlines()[0][:200]}")
    try:
        outputs = run(converted, case.inputs)
    except Exception as error:  # noqa: BLE001
        return Outcome(WRONG, f"onnxruntime: {str(error).strip().splitlines()[0][-200:]}")
    if not _same(outputs, expected):
        return Outcome(WRONG, "outputs differ")
    known = inference_errors(case.model) if original_errors is None else original_errors
    problem = inference_disagreement(converted, outputs, [o.name for o in converted.graph.output], known)
    return Outcome(WRONG, problem) if problem else Outcome(OK)


def opspec_convert(model: Any, target: int) -> Any:
    return opspec.convert_version(model, target)


def onnx_convert(model: Any, target: int) -> Any:
    from onnx import version_converter

    return version_converter.convert_version(model, target)


# ----------------------------------------------------------------------------- the cases

_NONDETERMINISTIC = {"Bernoulli", "Multinomial", "RandomNormal", "RandomNormalLike", "RandomUniform",
                     "RandomUniformLike", "Dropout"}


def node_suite_cases() -> Iterator[Case]:
    """onnx's node conformance cases that onnxruntime runs, with their own inputs."""
    from conformance.harness import cases

    for case in cases():
        model = case.model
        if model.functions or any(node.op_type in _NONDETERMINISTIC for node in model.graph.node):
            continue
        if any(entry.domain not in ("", "ai.onnx") for entry in model.opset_import):
            continue
        inputs, _ = case.data_sets[0]
        names = [value.name for value in model.graph.input]
        yield Case(case.name, model, {n: v for n, v in zip(names, inputs) if isinstance(v, np.ndarray)})


def seeded_inputs(model: Any, seed: int = 0, length: int | None = None) -> dict[str, np.ndarray]:
    """Random inputs for every graph input of ``model`` (symbolic dims at 2 or 3; with ``length``,
    a symbolic dim other than the first at ``length``)."""
    rng = np.random.default_rng(seed)
    initializers = {t.name for t in model.graph.initializer}
    feeds = {}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        tensor = value.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else length if length and i else 2 + i % 2
                 for i, d in enumerate(tensor.shape.dim)]
        dtype = helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        if dtype.kind == "f":
            feeds[value.name] = rng.standard_normal(shape).astype(dtype)
        elif tensor.elem_type == onnx.TensorProto.STRING:
            words = np.array(["alpha", "beta gamma", "delta", "alpha beta"], dtype=object)
            feeds[value.name] = words[rng.integers(0, len(words), shape)]
        elif dtype == np.bool_:
            feeds[value.name] = rng.integers(0, 2, shape).astype(bool)
        else:
            feeds[value.name] = rng.integers(0, 4, shape).astype(dtype)
    return feeds


def runnable(model: Any, seed: int = 0) -> Any:
    """``model`` with the IR version onnx pairs with its opset and its all-zero float weights (as test
    builders write them) filled with seeded values in [0.5, 1.5], so that every weight counts."""
    from opspec.runtime.convert.api import IR_FOR_OPSET

    rng = np.random.default_rng(seed)
    copy = type(model)()
    copy.CopyFrom(model)
    copy.ir_version = IR_FOR_OPSET.get(standard_opset(copy), copy.ir_version)
    for index, tensor in enumerate(copy.graph.initializer):
        array = numpy_helper.to_array(tensor)
        if array.dtype.kind == "f" and array.size > 1 and not array.any():
            filled = rng.uniform(0.5, 1.5, array.shape).astype(array.dtype)
            copy.graph.initializer[index].CopyFrom(numpy_helper.from_array(filled, tensor.name))
    return onnx.shape_inference.infer_shapes(copy)


def sampled_targets(case_name: str, source: int, count: int, seed: int = 0) -> list[int]:
    """``count`` target opsets for a case (seeded by its name), always different from its own."""
    choices = [t for t in range(OLDEST, NEWEST + 1) if t != source]
    return sorted(random.Random(f"{seed}:{case_name}").sample(choices, min(count, len(choices))))


def baseline(case: Case) -> list | None:
    """The original's outputs (None when the full check rejects it or onnxruntime does not run it)."""
    try:
        onnx.checker.check_model(case.model, full_check=True)
        return run(case.model, case.inputs)
    except Exception:  # noqa: BLE001 - a model onnxruntime cannot run proves nothing
        return None


__all__ = ["Case", "NEWEST", "Table", "model_cases", "run", "runnable", "score", "OK", "OLDEST", "Outcome", "REFUSED", "WRONG", "baseline", "inference_disagreement", "inference_errors", "judge", "node_suite_cases",
           "numpy_helper", "onnx_convert", "opspec_convert", "sampled_targets", "seeded_inputs", "standard_opset"]


def model_cases() -> Iterator[Case]:
    """Models written as exporters write them (tests/models.py, tests/exporter_models.py), each at
    every opset from 9 on where it is valid and onnxruntime runs it, with seeded weights and inputs."""
    import exporter_models
    import models

    builders: list[Callable[..., Any]] = [models.small_cnn, models.transformer, exporter_models.unet, exporter_models.detection_head,
                exporter_models.quantized_matmul, exporter_models.bidirectional_lstm,
                exporter_models.rotary_attention, exporter_models.fused_attention, exporter_models.interpolate_pyramid]
    for build in builders:
        for opset in (9, 11, 13, 15, 17, 19, 21, 23):
            try:
                model = runnable(build(opset=opset))
                onnx.checker.check_model(model, full_check=True)
            except Exception:  # noqa: BLE001 - the builder writes ops this opset lacks
                continue
            case = Case(f"{build.__name__}@{opset}", model, seeded_inputs(model))
            if baseline(case) is not None:
                yield case


@dataclass
class Table:
    """Outcomes by converter, direction and target opset."""

    counts: dict = field(default_factory=dict)
    wrong: list = field(default_factory=list)

    def add(self, converter: str, source: int, target: int, outcome: Outcome, case: str) -> None:
        key = (converter, "up" if target > source else "down", target)
        verdicts = self.counts.setdefault(key, {OK: 0, REFUSED: 0, WRONG: 0})
        verdicts[outcome.verdict] += 1
        if outcome.verdict == WRONG:
            self.wrong.append((converter, case, source, target, outcome.detail))


def score(cases: list[Case], targets: Callable[[Case], list[int]], converters: dict[str, Callable]) -> Table:
    """Every case converted to each of its targets by each converter, judged."""
    table = Table()
    for case in cases:
        expected = baseline(case)
        if expected is None:
            continue
        source = standard_opset(case.model)
        for target in targets(case):
            for name, convert in converters.items():
                table.add(name, source, target, judge(case, target, convert, expected), case.name)
    return table
