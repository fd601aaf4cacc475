"""onnxruntime as an inference oracle: run a one-node model, compare its real outputs with opspec's answer.

A case names an op, its inputs (element type and a shape whose dims are numbers or symbol
names, or constant data, or ``None`` for an absent optional input), attributes and the
number of outputs. :func:`check` builds the model with symbolic dims, infers it with opspec,
then runs it in onnxruntime's CPU provider once per setting of the symbols (random data of the
concrete shapes) and compares each output's element type and shape with opspec's answer with
the symbols substituted. opspec may know less (an unknown dim, rank or type); it may never
state something the run contradicts. The returned :class:`Verdict` says how much it knew,
so a test can also require exact answers.

    verdict = check(Case("FastGelu", "com.microsoft", [In(F, ("B", "S", 64)), In(F, (64,))]),
                    [{"B": 2, "S": 5}, {"B": 1, "S": 3}])
    assert verdict.exact
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import onnx
import onnxruntime
from onnx import TensorProto, helper, numpy_helper

import opspec
from opspec.runtime.shape import parse_dim

F, F16, I8, U8, I32, I64, BOOL = (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT8, TensorProto.UINT8,
                                  TensorProto.INT32, TensorProto.INT64, TensorProto.BOOL)

#: The opset imports of every case unless it says otherwise.
DEFAULT_OPSETS = {"": 21, "com.microsoft": 1, "com.microsoft.nchwc": 1, "ai.onnx.ml": 3}


@dataclass(frozen=True)
class In:
    """A graph input: element type and shape (ints or symbol names); ``fill`` makes its data."""

    elem: int
    shape: tuple[Any, ...] | None
    fill: Callable[[tuple[int, ...], np.random.Generator], np.ndarray] | None = None


@dataclass(frozen=True)
class Const:
    """An input given as an initializer with these values (exporters write shapes and weights so)."""

    values: Any
    elem: int = F


#: What one input position of a case holds: a graph input, an initializer, or nothing (omitted).
Operand = In | Const | None


@dataclass(frozen=True)
class Case:
    """One node: ``output_types`` declares the element type of each output (None: untyped), for
    the ops onnxruntime refuses to load with an untyped output."""

    op: str
    domain: str
    inputs: Sequence[Operand]
    attributes: dict[str, Any] = field(default_factory=dict)
    outputs: int = 1
    opsets: dict[str, int] | None = None
    output_types: Sequence[int | None] | None = None


@dataclass
class Verdict:
    """What opspec said of each output, and how it held up against the runs."""

    inferred: list[tuple[int | None, tuple[Any, ...] | None]]
    runs: list[list[tuple[int, tuple[int, ...]]]]
    problems: list[str]

    @property
    def exact(self) -> bool:
        """Every output's type and every dim known (as numbers or symbol expressions)."""
        return all(elem is not None and shape is not None and all(d is not None for d in shape)
                   for elem, shape in self.inferred)


_NUMPY: dict[int, type] = {
    F: np.float32, F16: np.float16, I8: np.int8, U8: np.uint8, I32: np.int32, I64: np.int64, BOOL: np.bool_,
    TensorProto.DOUBLE: np.float64, TensorProto.UINT16: np.uint16, TensorProto.INT16: np.int16,
    TensorProto.UINT32: np.uint32, TensorProto.UINT64: np.uint64}


def model_of(case: Case) -> onnx.ModelProto:
    """The one-node model of ``case``, with symbolic input dims and untyped outputs."""
    names, inputs, initializers = [], [], []
    for position, item in enumerate(case.inputs):
        if item is None:
            names.append("")
            continue
        name = f"in{position}"
        names.append(name)
        if isinstance(item, Const):
            initializers.append(numpy_helper.from_array(np.asarray(item.values, dtype=_NUMPY[item.elem]), name))
        else:
            inputs.append(helper.make_tensor_value_info(name, item.elem, item.shape))
    outputs = [f"out{i}" for i in range(case.outputs)]
    node = helper.make_node(case.op, names, outputs, domain=case.domain)
    node.attribute.extend(_attribute(key, value) for key, value in sorted(case.attributes.items()) if value is not None)
    types = list(case.output_types or ()) + [None] * case.outputs
    declared = [helper.make_empty_tensor_value_info(o) if elem is None else helper.make_tensor_value_info(o, elem, None)
                for o, elem in zip(outputs, types)]
    graph = helper.make_graph([node], "case", inputs, declared, initializers)
    opsets = case.opsets or DEFAULT_OPSETS
    return helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets.items()],
                             ir_version=10)


def _attribute(key: str, value: Any) -> onnx.AttributeProto:
    """``key=value`` as an attribute; an empty list is taken for an empty list of ints."""
    return helper.make_attribute(key, value, attr_type=onnx.AttributeProto.INTS if value == [] else None)


def inferred_outputs(model: onnx.ModelProto, count: int) -> list[tuple[int | None, tuple[Any, ...] | None]]:
    """opspec's (element type, shape) of each output; dims as ints, Sym or None."""
    result = opspec.infer_shapes(model, data_prop=True)
    types = {v.name: v.type for v in (*result.graph.value_info, *result.graph.output)}
    found: list[tuple[int | None, tuple[Any, ...] | None]] = []
    for index in range(count):
        value = types.get(f"out{index}")
        if value is None or not value.HasField("tensor_type") or value.tensor_type.elem_type == 0:
            found.append((None, None))
            continue
        tensor = value.tensor_type
        shape = None
        if tensor.HasField("shape"):
            shape = tuple(d.dim_value if d.HasField("dim_value") else parse_dim(d.dim_param) if d.dim_param else None
                          for d in tensor.shape.dim)
        found.append((tensor.elem_type, shape))
    return found


def _data(item: In, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    if item.fill is not None:
        return item.fill(shape, rng)
    dtype = _NUMPY[item.elem]
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(shape).astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(dtype)
    return rng.integers(0, 4, shape).astype(dtype)


def run_ort(model: onnx.ModelProto, case: Case, setting: dict[str, int], seed: int = 0) -> list[tuple[int, tuple[int, ...]]]:
    """onnxruntime's output element types and shapes for one setting of the symbols."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for position, item in enumerate(case.inputs):
        if isinstance(item, In):
            assert item.shape is not None, "onnxruntime runs on inputs of a known rank"
            shape = tuple(setting[d] if isinstance(d, str) else d for d in item.shape)
            feeds[f"in{position}"] = _data(item, shape, rng)
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    values = session.run(None, feeds)
    elems = {o.name: o.type for o in session.get_outputs()}
    return [(_elem_of(elems[f"out{i}"]), tuple(int(d) for d in np.shape(value))) for i, value in enumerate(values)]


def _elem_of(type_text: str) -> int:
    name = type_text[len("tensor("):-1]
    return {"float": F, "float16": F16, "int8": I8, "uint8": U8, "int32": I32, "int64": I64, "bool": BOOL,
            "double": TensorProto.DOUBLE, "uint16": TensorProto.UINT16, "int16": TensorProto.INT16,
            "uint32": TensorProto.UINT32, "uint64": TensorProto.UINT64,
            "bfloat16": TensorProto.BFLOAT16, "string": TensorProto.STRING}[name]


def _value(dim: Any, setting: dict[str, int]) -> int | None:
    if dim is None:
        return None
    if isinstance(dim, int):
        return dim
    try:
        return dim.evaluate(setting)
    except KeyError:  # a fresh symbol of opspec's own: it stands for any size
        return None


def check(case: Case, settings: Sequence[dict[str, int]]) -> Verdict:
    """Infer ``case`` with opspec, run it per setting, and list every contradiction."""
    return check_model(model_of(case), case, settings)


def check_model(model: onnx.ModelProto, case: Case, settings: Sequence[dict[str, int]]) -> Verdict:
    """:func:`check` for a model built otherwise (several nodes, say): its inputs ``in<position>`` are
    fed as ``case.inputs`` says, and its outputs ``out0`` ... ``out<case.outputs - 1>`` compared."""
    inferred = inferred_outputs(model, case.outputs)
    runs, problems = [], []
    for number, setting in enumerate(settings):
        real = run_ort(model, case, setting, seed=number)
        runs.append(real)
        for index, ((elem, shape), (real_elem, real_shape)) in enumerate(zip(inferred, real)):
            where = f"{case.domain}::{case.op} output {index} at {setting}"
            if elem is not None and elem != real_elem:
                problems.append(f"{where}: opspec says element type {elem}, onnxruntime gives {real_elem}")
            if shape is None:
                continue
            if len(shape) != len(real_shape):
                problems.append(f"{where}: opspec says rank {len(shape)} {shape}, onnxruntime gives {real_shape}")
                continue
            for axis, (dim, real_dim) in enumerate(zip(shape, real_shape)):
                value = _value(dim, setting)
                if value is not None and value != real_dim:
                    problems.append(f"{where}: opspec says dim {axis} is {dim} = {value}, onnxruntime gives {real_dim}")
    return Verdict(inferred, runs, problems)
