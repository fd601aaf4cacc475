"""No attribute value constraint rejects a node onnxruntime runs: for every constrained
attribute of every one-node case of ONNX's node suite that onnxruntime runs, the same node
with the attribute set to a value that breaks the constraint is refused by onnxruntime too.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import opspec

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
from onnx import helper  # noqa: E402

from conformance.harness import cases  # noqa: E402
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
    assert accepted == []
