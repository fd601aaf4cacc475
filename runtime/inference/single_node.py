"""``infer_node_outputs``: one node's output types, as ``onnx.shape_inference`` offers it."""
from __future__ import annotations

import sys
from typing import Any, Mapping, Sequence

from opspec.generated import opspec_ir_pb2

#: The IR message classes (built at import time from a descriptor, so typed loosely).
ir: Any = opspec_ir_pb2
from opspec.runtime.inference.graph import infer_model
from opspec.runtime.inference.options import InferenceOptions
from opspec.runtime.op_set import OpSet

#: How a single node is inferred: its problem raised, shapes propagated.
_ONE_NODE = InferenceOptions(strict_mode=True, data_prop=True, report=False)
#: The IR version onnx 1.23 writes, which ``infer_node_outputs`` assumes by default.
DEFAULT_IR_VERSION = 14


def infer_node_outputs(schema: Any, node: Any, input_types: Mapping[str, Any],
                       input_data: Mapping[str, Any] | None = None,
                       input_sparse_data: Mapping[str, Any] | None = None,
                       opset_imports: Sequence[Any] | None = None,
                       ir_version: int = DEFAULT_IR_VERSION, *, op_set: OpSet | None = None) -> dict[str, Any]:
    """The inferred ``TypeProto`` of each output of ``node``, by output name.

    ``schema`` names the operator version (ours or onnx's); ``input_types`` maps input
    names to ``TypeProto``; ``input_data`` gives constant inputs as ``TensorProto`` (used
    for data propagation), ``input_sparse_data`` as ``SparseTensorProto``. Messages may be
    onnx's or ours; results are of the same family as ``node``. Raises ``InferenceError``
    when the node contradicts its schema, as onnx does. ``op_set`` is where the node's op is
    looked up (None: the installed op set).
    """
    model = ir.ModelProto(ir_version=ir_version)
    imports = opset_imports if opset_imports is not None else [_import(schema.domain, schema.since_version)]
    for opset in imports:
        model.opset_import.add(domain=opset.domain, version=opset.version)
    graph = model.graph
    graph.node.add().CopyFrom(_as(ir.NodeProto, node))
    for name, type_proto in input_types.items():
        graph.input.add(name=name).type.CopyFrom(_as(ir.TypeProto, type_proto))
    for name, tensor in (input_data or {}).items():
        graph.initializer.add().CopyFrom(_as(ir.TensorProto, tensor))
        graph.initializer[-1].name = name
    for name, sparse in (input_sparse_data or {}).items():
        graph.sparse_initializer.add().CopyFrom(_as(ir.SparseTensorProto, sparse))
        graph.sparse_initializer[-1].values.name = name
    wanted = [name for name in node.output if name]
    for name in wanted:
        graph.output.add(name=name)
    infer_model(model, _ONE_NODE, op_set=op_set)
    found = {info.name: info.type for info in graph.output if info.HasField("type")}
    family = _message_family(node)
    return {name: _as(family.TypeProto, found[name]) for name in wanted if name in found}


def _import(domain: str, version: int) -> Any:
    return ir.OperatorSetIdProto(domain=domain, version=version)


def _as(cls: Any, message: Any) -> Any:
    """``message`` as an instance of ``cls`` (a wire-identical class of the other family)."""
    return message if isinstance(message, cls) else cls.FromString(message.SerializeToString())


def _message_family(message: Any) -> Any:
    """The module that defines ``message``'s class (onnx's or ours), for its siblings."""
    return sys.modules.get(type(message).__module__, ir)


__all__ = ["DEFAULT_IR_VERSION", "infer_node_outputs"]
