"""Every value of a model held against onnxruntime's run, and any inference engine's answer scored.

:func:`real_values` runs a model in onnxruntime's CPU provider (optimizations off, so the graph
runs as written) with every node output exposed, once per setting of the input symbols, and
returns each value's element type and shape per setting. :func:`score` reads an inferred
model (opspec's, onnx's, or another engine's) and classifies each value:

- ``exact``: element type and every dim stated, each dim a number or an expression over the
  graph inputs' symbols, all equal to every run;
- ``symbolic``: rank and type right, some dims fresh symbols of the engine's own (any size);
- ``wrong``: a stated element type, rank or evaluable dim that a run contradicts;
- ``partial``: the rest (unknown type, rank or some dim).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import onnx
import onnxruntime

from opspec.runtime.shape import Sym, parse_dim

_ELEM = {"float": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6, "int64": 7, "string": 8, "bool": 9,
         "float16": 10, "double": 11, "uint32": 12, "uint64": 13, "bfloat16": 16}
RealValues = dict[str, list[tuple[int, tuple[int, ...]]]]


def _graph_values(model: onnx.ModelProto) -> list[str]:
    produced = [name for node in model.graph.node for name in node.output if name]
    return list(dict.fromkeys(produced))


def real_values(model: onnx.ModelProto, settings: list[dict[str, int]],
                feeds: Callable[[dict[str, int], np.random.Generator], dict[str, np.ndarray]]) -> RealValues:
    """Each node output's (element type, shape) in onnxruntime, per setting."""
    exposed = onnx.ModelProto()
    exposed.CopyFrom(model)
    del exposed.graph.value_info[:]
    declared = {output.name for output in exposed.graph.output}
    for name in _graph_values(model):
        if name not in declared:
            exposed.graph.output.add().name = name
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(exposed.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = [output.name for output in session.get_outputs()]
    kinds = {output.name: output.type for output in session.get_outputs()}
    found: RealValues = {name: [] for name in names}
    for number, setting in enumerate(settings):
        values = session.run(names, feeds(setting, np.random.default_rng(number)))
        for name, value in zip(names, values):
            found[name].append((_ELEM[kinds[name][len("tensor("):-1]], tuple(int(d) for d in np.shape(value))))
    return {name: runs for name, runs in found.items() if name in set(_graph_values(model))}


@dataclass
class Score:
    exact: int = 0
    symbolic: int = 0
    wrong: int = 0
    partial: int = 0
    wrong_values: list[str] = field(default_factory=list)
    partial_values: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.exact + self.symbolic + self.wrong + self.partial

    def __add__(self, other: "Score") -> "Score":
        return Score(self.exact + other.exact, self.symbolic + other.symbolic, self.wrong + other.wrong,
                     self.partial + other.partial, self.wrong_values + other.wrong_values,
                     self.partial_values + other.partial_values)


def _types(model: onnx.ModelProto) -> dict[str, Any]:
    graph = model.graph
    return {v.name: v.type for v in (*graph.value_info, *graph.output)}


_PLAIN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _dim(dim: Any, symbols: set[str]) -> tuple[str, Any]:
    """("int", n), ("expr", Sym over the input symbols), ("fresh", None) or ("unknown", None)."""
    if dim.HasField("dim_value"):
        return "int", dim.dim_value
    text = dim.dim_param
    if not text:
        return "unknown", None
    if _PLAIN_NAME.match(text):
        return ("expr", parse_dim(text)) if text in symbols else ("fresh", None)
    try:
        parsed = parse_dim(text.replace(" ", ""))
    except Exception:  # noqa: BLE001 - another engine's notation: a symbol of its own
        return "fresh", None
    names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)) - {"floor", "ceil", "min", "max", "Min", "Max"}
    if parsed is None or not names <= symbols:
        return "fresh", None
    if type(parsed) is Sym and not parsed.names() <= symbols:  # text opspec reads as one opaque name
        return "fresh", None
    return "expr", parsed


def score(inferred: onnx.ModelProto, real: RealValues, symbols: set[str], settings: list[dict[str, int]]) -> Score:
    """Classify every value of ``real`` by what ``inferred`` states about it."""
    types = _types(inferred)
    result = Score()
    for name, runs in real.items():
        kind = _classify(types.get(name), runs, symbols, settings)
        if kind == "wrong":
            result.wrong += 1
            result.wrong_values.append(name)
        elif kind == "partial":
            result.partial += 1
            result.partial_values.append(name)
        else:
            setattr(result, kind, getattr(result, kind) + 1)
    return result


def _classify(value_type: Any, runs: list[tuple[int, tuple[int, ...]]], symbols: set[str],
              settings: list[dict[str, int]]) -> str:
    if value_type is None or not value_type.HasField("tensor_type"):
        return "partial"
    tensor = value_type.tensor_type
    elem_known = tensor.elem_type != 0
    if elem_known and any(tensor.elem_type != elem for elem, _ in runs):
        return "wrong"
    if not tensor.HasField("shape"):
        return "partial"
    dims = [_dim(d, symbols) for d in tensor.shape.dim]
    if any(len(dims) != len(shape) for _, shape in runs):
        return "wrong"
    fresh = unknown = False
    for axis, (kind, value) in enumerate(dims):
        if kind == "unknown":
            unknown = True
        elif kind == "fresh":
            fresh = True
        else:
            for setting, (_, shape) in zip(settings, runs):
                stated = value if kind == "int" else value if type(value) is int else value.evaluate(setting)
                if stated != shape[axis]:
                    return "wrong"
    if unknown or not elem_known:
        return "partial"
    return "symbolic" if fresh else "exact"
