"""No attribute value constraint rejects a node onnxruntime runs, but for the limits onnx
documents that onnxruntime lets pass (``ONNXRUNTIME_LAX``): for every constrained attribute of
every one-node case of ONNX's node suite that onnxruntime runs, the same node with the
attribute set to a value that breaks the constraint is refused by onnxruntime too, or is one
of those limits. Constraints on ops and versions the suite does not reach are held against
onnxruntime runs made here: the broken node is refused, and nodes at the edge of a limit that
onnxruntime runs are accepted. Each listed limit is held to be exact: onnxruntime runs a node
breaking it, and opspec refuses that node.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import opspec

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
from onnx import helper  # noqa: E402

from conformance.harness import cases  # noqa: E402
from opspec.runtime.checker.onnx_differences import ONNXRUNTIME_LAX  # noqa: E402
from test_attribute_constraints import _violation  # noqa: E402


def _runs(model, feeds) -> bool:
    try:
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        session.run(None, {value.name: data for value, data in zip(session.get_inputs(), feeds)})
    except Exception:  # noqa: BLE001 - any refusal of onnxruntime's, at load or at run
        return False
    return True


def _breaking(schema, name, feeds):
    """A value breaking attribute ``name``'s constraint for these inputs (None when the
    input a rank-relative limit needs is not there)."""
    attribute = schema.attributes[name]
    constraint = attribute.constraint
    value = _violation(attribute)
    relative = constraint.axis_of or constraint.length_of
    if relative and constraint.allowed is None and constraint.minimum is None:
        position = [param.name for param in schema.inputs].index(relative)
        if position >= len(feeds):
            return None
        rank = np.asarray(feeds[position]).ndim
        if constraint.axis_of:
            axis = rank + constraint.axis_extra
            value = [axis] if attribute.type.is_list else axis
        else:
            value = [1] * (constraint.length_scale * rank + constraint.length_offset + 1)
    return value


def test_onnxruntime_refuses_every_node_a_constraint_rejects():
    ort.set_default_logger_severity(4)
    ran, accepted = set(), []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        collected = cases()
    for case in collected:
        model = case.model
        if len(model.graph.node) != 1 or model.graph.node[0].domain not in ("", "ai.onnx"):
            continue
        node = model.graph.node[0]
        version = {entry.domain or "": entry.version for entry in model.opset_import}.get("", 1)
        schema = opspec.get_schema(node.op_type, version)
        constrained = [name for name, a in schema.attributes.items()
                       if a.constraint is not None and (schema.name, name) not in ran]
        feeds = case.data_sets[0][0]
        if not constrained or not _runs(model, feeds):
            continue
        for name in constrained:
            value = _breaking(schema, name, feeds)
            if value is None:
                continue
            broken = onnx.ModelProto()
            broken.CopyFrom(model)
            kept = [a for a in broken.graph.node[0].attribute if a.name != name]
            del broken.graph.node[0].attribute[:]
            broken.graph.node[0].attribute.extend([*kept, helper.make_attribute(name, value)])
            ran.add((schema.name, name))
            if _runs(broken, feeds):
                accepted.append((schema.name, name, value))
    assert len(ran) > 50  # the suite reaches many constrained attributes
    lax = {(limit.op, limit.attribute) for limit in ONNXRUNTIME_LAX}
    assert [entry for entry in accepted if entry[:2] not in lax] == []


# -- ops and attributes the node suite does not reach: onnxruntime run by hand ---------------
_F = np.float32


def _recurrent(op: str, gates: int, hidden: int = 4) -> list:
    rows = gates * hidden
    return [np.ones((5, 2, 3), _F), np.ones((1, rows, 3), _F), np.ones((1, rows, hidden), _F)]


def _roi_align() -> list:
    return [np.ones((1, 2, 4, 4), _F), np.array([[0, 0, 2, 2]], _F), np.array([0], np.int64)]


def _attention() -> list:
    return [np.ones((1, 2, 3, 4), _F)] * 3


#: A TfIdfVectorizer counting two 1-grams.
_TFIDF = {"mode": "TF", "min_gram_length": 1, "max_gram_length": 1, "max_skip_count": 0, "ngram_counts": [0],
          "ngram_indexes": [0, 1], "pool_int64s": [1, 2]}


def _sequence() -> list:
    return [[np.ones((2, 3), _F), np.ones((2, 3), _F)]]  # one input: a sequence of two rank-2 tensors


#: (op, opset, inputs, attributes, broken, output count): a node onnxruntime runs, which it
#: refuses once the ``broken`` attributes are set, as opspec rejects it for a broken constraint.
REFUSED: list[tuple[str, int, list, dict, dict, int]] = [
    ("RNN", 22, _recurrent("RNN", 1), {"hidden_size": 4}, {"activations": ["relu"]}, 2),
    ("RNN", 22, _recurrent("RNN", 1), {"hidden_size": 4}, {"activations": ["Bogus"]}, 2),
    ("RNN", 22, _recurrent("RNN", 1, 0), {"hidden_size": 0}, {"hidden_size": -1}, 2),
    ("LSTM", 22, _recurrent("LSTM", 4), {"hidden_size": 4}, {"clip": 0.0}, 2),
    ("LSTM", 22, _recurrent("LSTM", 4), {"hidden_size": 4}, {"clip": -1.0}, 2),
    ("LSTM", 14, _recurrent("LSTM", 4), {"hidden_size": 4}, {"clip": 0.0}, 2),
    ("GRU", 22, _recurrent("GRU", 3), {"hidden_size": 4}, {"clip": 0.0}, 2),
    ("GRU", 22, _recurrent("GRU", 3), {"hidden_size": 4}, {"activations": ["leaky_relu", "Tanh"]}, 2),
    ("LSTM", 22, _recurrent("LSTM", 4), {"hidden_size": 4}, {"activations": ["Sigmoid", "Bogus", "Tanh"]}, 2),
    ("RoiAlign", 16, _roi_align(), {}, {"output_height": -1}, 1),
    ("RoiAlign", 16, _roi_align(), {}, {"output_width": -1}, 1),
    ("RoiAlign", 10, _roi_align(), {}, {"output_height": -1}, 1),
    ("Attention", 23, _attention(), {}, {"scale": 0.0}, 1),
    ("Attention", 23, _attention(), {}, {"scale": -1.0}, 1),
    ("LRN", 13, [np.ones((1, 4, 3, 3), _F)], {"size": 3}, {"alpha": 0.0}, 1),
    ("LRN", 13, [np.ones((1, 4, 3, 3), _F)], {"size": 3}, {"beta": -1.0}, 1),
    ("LRN", 1, [np.ones((1, 4, 3, 3), _F)], {"size": 3}, {"alpha": -1.0}, 1),
    ("ConcatFromSequence", 11, _sequence(), {"axis": 1}, {"axis": 3}, 1),
    ("ConstantOfShape", 21, [np.array([2, 2])], {"value": onnx.numpy_helper.from_array(np.ones(1, _F))},
     {"value": onnx.numpy_helper.from_array(np.ones(2, _F))}, 1),
    ("TfIdfVectorizer", 9, [np.array([1, 2, 3, 1])], _TFIDF, {"weights": [1.0]}, 1),
    ("TfIdfVectorizer", 9, [np.array([1, 2, 3, 1])], _TFIDF, {"weights": [1.0, 2.0, 3.0]}, 1),
    ("ConstantOfShape", 9, [np.array([2, 2])], {}, {"value": onnx.numpy_helper.from_array(np.ones(0, _F))}, 1),
    ("ConcatFromSequence", 11, _sequence(), {"axis": 1, "new_axis": 1}, {"axis": -4}, 1),
]

#: Nodes at the edge of a constraint that onnxruntime runs, so opspec must accept them.
RUN: list[tuple[str, int, list, dict, int]] = [
    ("RNN", 22, _recurrent("RNN", 1, 0), {"hidden_size": 0}, 2),
    ("RNN", 22, _recurrent("RNN", 1), {"hidden_size": 4, "activations": ["LeakyRelu"]}, 2),
    ("RNN", 22, _recurrent("RNN", 1), {"hidden_size": 4, "clip": 0.0}, 2),
    ("GRU", 22, _recurrent("GRU", 3), {"hidden_size": 4, "activations": ["sigmoid", "TANH"]}, 2),
    ("LSTM", 7, _recurrent("LSTM", 4), {"hidden_size": 4, "activations": ["sigMoid", "tanh", "Softsign"]}, 2),
    ("RoiAlign", 16, _roi_align(), {"output_height": 0, "output_width": 0}, 1),
    ("RoiAlign", 16, _roi_align(), {"spatial_scale": -1.0}, 1),
    ("Attention", 23, _attention(), {"scale": float("nan")}, 1),
    ("ConcatFromSequence", 11, _sequence(), {"axis": 2, "new_axis": 1}, 1),
    ("TfIdfVectorizer", 9, [np.array([1, 2, 3, 1])], {**_TFIDF, "weights": [1.0, 2.0]}, 1),
    ("ConcatFromSequence", 11, _sequence(), {"axis": -3, "new_axis": 1}, 1),
]


def _scatter_elements() -> list:
    return [np.ones((3, 3), _F), np.zeros((1, 3), np.int64), np.ones((1, 3), _F)]


def _scatter_nd() -> list:
    return [np.ones(4, _F), np.zeros((1, 1), np.int64), np.ones(1, _F)]


def _loss() -> list:
    return [np.ones((2, 3), _F), np.zeros(2, np.int64)]


#: (op, opset, inputs, attributes, output count): a node breaking a limit of ONNXRUNTIME_LAX,
#: one or more per listed limit, each run by onnxruntime and refused by opspec.
LAX_RUN: list[tuple[str, int, list, dict, int]] = [
    ("Attention", 23, _attention(), {"qk_matmul_output_mode": 4}, 1),
    ("Col2Im", 18, [np.ones((1, 4, 1), _F), np.array([4, 4]), np.array([2, 2])], {"pads": [-1, -1, -1, -1]}, 1),
    ("NegativeLogLikelihoodLoss", 22, _loss(), {"reduction": "total"}, 1),
    ("RoiAlign", 16, _roi_align(), {"coordinate_transformation_mode": "corner"}, 1),
    ("ScatterElements", 16, _scatter_elements(), {"reduction": "max"}, 1),
    ("ScatterElements", 18, _scatter_elements(), {"reduction": "sum"}, 1),
    ("ScatterND", 16, _scatter_nd(), {"reduction": "min"}, 1),
    ("ScatterND", 18, _scatter_nd(), {"reduction": "sum"}, 1),
    ("SoftmaxCrossEntropyLoss", 13, _loss(), {"reduction": "total"}, 1),
    ("StringNormalizer", 10, [np.array(["a", "B"], dtype=object)], {"is_case_sensitive": 2}, 1),
    ("Trilu", 14, [np.ones((3, 3), _F)], {"upper": 2}, 1),
    ("Unique", 11, [np.array([2, 1, 2], _F)], {"sorted": -1}, 1),
]


def _model(op: str, opset: int, feeds: list, attributes: dict, outputs: int) -> Any:
    names = [f"i{position}" for position in range(len(feeds))]
    graph = helper.make_graph(
        [helper.make_node(op, names, [f"o{position}" for position in range(outputs)], name="n", **attributes)], "g",
        [helper.make_tensor_sequence_value_info(name, helper.np_dtype_to_tensor_dtype(feed[0].dtype), feed[0].shape)
         if isinstance(feed, list) else
         helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(feed.dtype), feed.shape)
         for name, feed in zip(names, feeds)],
        [helper.make_value_info(f"o{position}", onnx.TypeProto()) for position in range(outputs)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def _constraint_errors(model: Any) -> list[str]:
    return [error.message for error in opspec.infer(model).errors if " (constraint: " in error.message]


@pytest.mark.parametrize("op,opset,feeds,attributes,broken,outputs", REFUSED,
                         ids=[f"{case[0]}-{case[1]}-{sorted(case[4].items())}" for case in REFUSED])
def test_onnxruntime_refuses_what_a_constraint_rejects(op, opset, feeds, attributes, broken, outputs):
    ort.set_default_logger_severity(4)
    assert _runs(_model(op, opset, feeds, attributes, outputs), feeds)
    model = _model(op, opset, feeds, {**attributes, **broken}, outputs)
    assert not _runs(model, feeds)
    assert _constraint_errors(model)


#: Every node onnxruntime runs, with whether opspec refuses it for a limit onnx documents.
_RAN = [(*case, False) for case in RUN] + [(*case, True) for case in LAX_RUN]


@pytest.mark.parametrize("op,opset,feeds,attributes,outputs,documented_limit", _RAN,
                         ids=[f"{case[0]}-{case[1]}-{sorted(case[3].items())}" for case in _RAN])
def test_a_node_onnxruntime_runs_breaks_only_a_documented_limit(op, opset, feeds, attributes, outputs,
                                                                 documented_limit):
    ort.set_default_logger_severity(4)
    model = _model(op, opset, feeds, attributes, outputs)
    assert _runs(model, feeds)
    errors = _constraint_errors(model)
    assert bool(errors) == documented_limit
    assert [error for error in errors if not error.startswith(f"attribute '{next(iter(attributes))}' = ")] == []


def test_every_lax_limit_has_a_node_breaking_it():
    assert {(op, next(iter(attributes))) for op, _, _, attributes, _ in LAX_RUN} == \
        {(limit.op, limit.attribute) for limit in ONNXRUNTIME_LAX}

