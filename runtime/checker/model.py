"""Checks of a model's own fields, the ones ``onnx.checker`` makes before any schema: IR and
opset versions, graph names, the types of graph inputs and outputs, every stored tensor
(initializers, attribute tensors, sparse tensors) and every attribute's form.

Problems are collected, never raised; each names where it is.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Iterator

from opspec.runtime.checker.problems import ModelProblem
from opspec.runtime.checker.tensors import DATA_TYPES, check_sparse, check_tensor
from opspec.runtime.inference.graph_checks import node_label
from opspec.runtime.ir.codes import AttrType, ElementType
from opspec.runtime.op_set import OpSet, op_set_or_installed
from opspec.runtime.registry import Registry, SchemaError

#: The IR versions opspec reads (its IR module holds version 14's messages); models of IR
#: version 1 and 2 predate opset imports.
MIN_IR_VERSION, MAX_IR_VERSION = 3, 14
#: The IR version that brought model-local functions (older models cannot hold them).
FUNCTIONS_SINCE_IR = 8

# Attribute kind -> the field that holds its value.
_ATTRIBUTE_FIELDS: dict[int, str] = {
    AttrType.FLOAT: "f", AttrType.INT: "i", AttrType.STRING: "s", AttrType.TENSOR: "t", AttrType.GRAPH: "g",
    AttrType.SPARSE_TENSOR: "sparse_tensor", AttrType.TYPE_PROTO: "tp", AttrType.FLOATS: "floats",
    AttrType.INTS: "ints", AttrType.STRINGS: "strings", AttrType.TENSORS: "tensors", AttrType.GRAPHS: "graphs",
    AttrType.SPARSE_TENSORS: "sparse_tensors", AttrType.TYPE_PROTOS: "type_protos",
}
_VALUE_FIELDS = frozenset(_ATTRIBUTE_FIELDS.values())
# Attribute kinds of one message (tensor, graph, sparse tensor, type), which must be present;
# a number or text left out reads as zero or empty, as a writer that omits defaults leaves it.
_MESSAGE_TYPES = frozenset({AttrType.TENSOR, AttrType.GRAPH, AttrType.SPARSE_TENSOR, AttrType.TYPE_PROTO})
_HOLDERS = frozenset({"t", "g", "sparse_tensor", "tensors", "graphs", "sparse_tensors"})  # fields holding messages
_TENSOR_TYPE_CASES = ("tensor_type", "sparse_tensor_type")


class _Collector:
    """The problems found so far, and how external data locations are judged."""

    def __init__(self, folder: str | None) -> None:
        self.problems: list[ModelProblem] = []
        self.folder = folder
        self._external: Any = None

    def at(self, where: str) -> Callable[[str, str], None]:
        """A reporter of problems located at ``where``."""
        return lambda message, code: self.problems.append(ModelProblem(where, message, code))

    def at_node(self, node: Any, index: int, graph: str) -> Callable[[str, str], None]:
        """A reporter of problems located at a node (its label made only when one is found)."""
        return lambda message, code: self.problems.append(ModelProblem(node_label(node, index, graph), message, code))

    def location_problem(self, name: str, location: str) -> str | None:
        if self.folder is None:
            return f"tensor '{name}': external data location '{location}' cannot be checked without the model's folder"
        if self._external is None:
            from opspec.runtime.ir.external import ExternalData

            self._external = ExternalData(self.folder)
        problem: str | None = self._external.location_problem(name, location)
        if problem is None and not os.path.isfile(os.path.join(self._external.folder, location)):
            problem = f"tensor '{name}': external data file '{location}' does not exist in the model's folder"
        return problem


def check_model_fields(model: Any, folder: str | None = None, op_set: OpSet | None = None) -> list[ModelProblem]:
    """Every problem of ``model``'s own fields; ``folder`` is where the model file lies
    (external data must stay inside it), None when it was not read from a file; opset imports
    are checked against ``op_set``'s domains (None: the installed op set)."""
    registry = op_set_or_installed(op_set).registry
    found = _Collector(folder)
    report = found.at("model")
    if not MIN_IR_VERSION <= model.ir_version <= MAX_IR_VERSION:
        report(f"IR version {model.ir_version} is outside the versions opspec reads "
               f"({MIN_IR_VERSION} to {MAX_IR_VERSION})", "ir-version")
    _check_opsets(model.opset_import, report, registry)
    keys = [entry.key for entry in model.metadata_props]
    for key in sorted({key for key in keys if keys.count(key) > 1}):
        report(f"metadata_props gives key '{key}' more than once", "metadata")
    if model.HasField("graph"):
        _check_graph(model.graph, found, main=True)
    else:
        report("the model has no graph", "graph-structure")
    seen_functions: set[tuple[str, str, str]] = set()
    for function in model.functions:
        where = f"function '{function.name}' (domain '{function.domain}')"
        key = (function.domain, function.name, function.overload)
        if key in seen_functions:
            found.at(where)("the model defines this function more than once", "function-form")
        seen_functions.add(key)
        if model.ir_version >= FUNCTIONS_SINCE_IR and not function.name:
            found.at(where)("a model-local function has no name", "function-form")
        if model.ir_version >= FUNCTIONS_SINCE_IR and not function.HasField("domain"):
            found.at(where)("a model-local function has no domain", "function-form")
        _check_opsets(function.opset_import, found.at(where), registry)
        _check_nodes(function.node, "", found)
    return found.problems


def repeated_imports(model: Any) -> list[ModelProblem]:
    """The model's opset imports written more than once at one version (skl2onnx writes the default
    domain twice): not problems, since the repeat says nothing new, but worth a note."""
    counts: dict[tuple[str, int], int] = {}
    for entry in model.opset_import:
        key = ("" if entry.domain in ("", "ai.onnx") else entry.domain, entry.version)
        counts[key] = counts.get(key, 0) + 1
    return [ModelProblem("model", f"domain '{domain or 'ai.onnx'}' is imported {count} times at version {version}, "
                                  "which reads as one import", "opset-import-repeated")
            for (domain, version), count in counts.items() if count > 1]


def _check_opsets(imports: Any, report: Callable[[str, str], None], registry: Registry) -> None:

    seen: dict[str, int] = {}
    for entry in imports:
        domain = entry.domain or "ai.onnx"
        canonical = "" if entry.domain in ("", "ai.onnx") else entry.domain
        if canonical in seen:  # the same import again says nothing new; another version contradicts it
            if seen[canonical] != entry.version:
                report(f"domain '{domain}' is imported at two versions ({seen[canonical]} and {entry.version})",
                       "opset-import")
            continue
        seen[canonical] = entry.version
        if entry.version < 1:
            report(f"opset version {entry.version} of domain '{domain}' is not a version (versions start at 1)",
                   "opset-version")
            continue
        try:
            info = registry.domain(canonical)
        except SchemaError:
            continue  # a domain opspec does not know: its nodes are reported as unknown ops
        if entry.version > info.opset_max:
            report(f"opset version {entry.version} of domain '{domain}' is beyond the newest one opspec knows "
                   f"({info.opset_max})", "opset-version")


def _check_graph(graph: Any, found: _Collector, main: bool) -> None:
    where = f"graph '{graph.name}'"
    report = found.at(where)
    if not graph.name:
        report("the graph has no name", "graph-name")
    for kind, group in (("input", graph.input), ("output", graph.output)):
        for value_info in group:
            _check_value_info(value_info, kind, main, report)
    if any(not value.name for value in graph.value_info):
        report("a value_info entry has no name", "value-info")
    for tensor in graph.initializer:
        check_tensor(tensor, report, found.location_problem)
    for sparse in graph.sparse_initializer:
        check_sparse(sparse, report, found.location_problem)
    if graph.input and graph.initializer:
        _check_initializer_types(graph, report)
    _check_nodes(graph.node, "" if main else graph.name, found)


def _check_value_info(value_info: Any, kind: str, main: bool, report: Callable[[str, str], None]) -> None:
    name = value_info.name
    if not name:
        report(f"a graph {kind} has no name", "value-info")
    if not main:  # a subgraph's values may leave their types, or their tensors' element types, to inference
        if value_info.type.WhichOneof("value") is not None:
            for problem in _type_problems(value_info.type, kind == "input", tensors=False):
                report(f"{kind} '{name}' {problem}", "value-info")
        return
    if not value_info.HasField("type"):
        report(f"{kind} '{name}' has no type", "value-info")
        return
    for problem in _type_problems(value_info.type, kind == "input"):
        report(f"{kind} '{name}' {problem}", "value-info")


def _check_initializer_types(graph: Any, report: Callable[[str, str], None]) -> None:
    """An initializer that gives a graph input its default value holds what the input declares:
    its element type, its rank, and every dim the input states as a number."""
    declared = {value.name: value.type.tensor_type for value in graph.input
                if value.type.WhichOneof("value") == "tensor_type"}
    for tensor in graph.initializer:
        tensor_type = declared.get(tensor.name)
        if tensor_type is None:
            continue
        if tensor_type.elem_type and tensor.data_type and tensor_type.elem_type != tensor.data_type:
            report(f"initializer '{tensor.name}' has data type {tensor.data_type}, but its graph input declares "
                   f"element type {tensor_type.elem_type}", "declared-conflict")
        if not tensor_type.HasField("shape"):
            continue
        dims = tensor_type.shape.dim
        stated = [dim.dim_value if dim.WhichOneof("value") == "dim_value" else None for dim in dims]
        if len(stated) != len(tensor.dims) or any(d is not None and d >= 0 and d != actual
                                                   for d, actual in zip(stated, tensor.dims)):
            report(f"initializer '{tensor.name}' has dims {list(tensor.dims)}, but its graph input declares "
                   f"{['?' if d is None else d for d in stated]}", "declared-conflict")


def _type_problems(proto: Any, read: bool, tensors: bool = True) -> Iterator[str]:
    """What a graph input's (``read``) or output's type lacks: every kind names what it
    holds (an element type, key and value types, an opaque type's name), and an element
    type is one ONNX defines (UNDEFINED only on an output, whose type inference may fill);
    without ``tensors``, a tensor's element type is not looked at."""
    case = proto.WhichOneof("value")
    if case is None:
        yield "has a type with no kind (tensor, sequence, map, optional...)"
    elif case in _TENSOR_TYPE_CASES:
        tensor_type = getattr(proto, case)
        if not tensors:
            return
        if not tensor_type.HasField("elem_type"):
            yield "has a tensor type with no element type"
        elif tensor_type.elem_type not in DATA_TYPES and (read or tensor_type.elem_type != ElementType.UNDEFINED):
            yield f"has element type {tensor_type.elem_type}, which is not an ONNX data type"
    elif case == "map_type":
        if not proto.map_type.HasField("key_type"):
            yield "has a map type with no key type"
        elif proto.map_type.key_type not in DATA_TYPES:
            yield f"has a map key type {proto.map_type.key_type}, which is not an ONNX data type"
        if not proto.map_type.HasField("value_type"):
            yield "has a map type with no value type"
        else:
            yield from _type_problems(proto.map_type.value_type, read, tensors)
    elif case == "opaque_type":
        if not proto.opaque_type.name:
            yield "has an opaque type with no name"
    else:  # sequence_type, optional_type
        holder = getattr(proto, case)
        if not holder.HasField("elem_type"):
            yield f"has a {case.split('_')[0]} type with no element type"
        else:
            yield from _type_problems(holder.elem_type, read, tensors)


def _check_nodes(nodes: Any, graph: str, found: _Collector) -> None:
    for index, node in enumerate(nodes):
        well_formed = node.op_type and (node.input or node.output)
        outputs = [name for name in node.output if name]
        if well_formed and not node.attribute and len(set(outputs)) == len(outputs):
            continue
        report = found.at_node(node, index, graph)
        if len(set(outputs)) != len(outputs):
            twice = sorted({name for name in outputs if outputs.count(name) > 1})
            report(f"the node names output {', '.join(repr(name) for name in twice)} more than once", "duplicate-name")
        if not node.op_type:
            report("the node has no op_type", "node-form")
        if not node.input and not node.output:
            report("the node has neither inputs nor outputs", "node-form")
        names = [attribute.name for attribute in node.attribute]
        if "" in names or len(set(names)) != len(names):
            seen: set[str] = set()
            for name in names:
                if not name:
                    report("an attribute has no name", "attribute-form")
                elif name in seen:
                    report(f"attribute '{name}' is given more than once", "attribute-duplicate")
                seen.add(name)
        for attribute in node.attribute:
            _check_attribute(attribute, report, found)


def _check_attribute(attribute: Any, report: Callable[[str, str], None], found: _Collector) -> None:
    kind = attribute.type
    filled = [field.name for field, _ in attribute.ListFields() if field.name in _VALUE_FIELDS]
    if len(filled) == 1 and _ATTRIBUTE_FIELDS.get(kind) == filled[0] and filled[0] not in _HOLDERS:
        return  # the common case: one plain value in the field its type names
    name = attribute.name
    if not filled and kind in _MESSAGE_TYPES and not attribute.ref_attr_name:
        report(f"attribute '{name}' of type {_ATTRIBUTE_FIELDS[kind]!r} holds no value", "attribute-form")
    if len(filled) > 1:
        report(f"attribute '{name}' fills more than one value field ({', '.join(filled)})", "attribute-form")
    if not kind:
        if not attribute.ref_attr_name:
            report(f"attribute '{name}' has no type", "attribute-form")
    else:
        field = _ATTRIBUTE_FIELDS.get(kind)
        if field is None:
            report(f"attribute '{name}' has type {kind}, which is not an attribute type", "attribute-form")
        elif filled and field not in filled:
            report(f"attribute '{name}' says its type is {field!r} but fills {filled[0]!r}", "attribute-type")
    if filled and filled[0] in _HOLDERS:
        if "t" in filled:
            check_tensor(attribute.t, report, found.location_problem)
        for tensor in attribute.tensors:
            check_tensor(tensor, report, found.location_problem)
        if "sparse_tensor" in filled:
            check_sparse(attribute.sparse_tensor, report, found.location_problem)
        for sparse in attribute.sparse_tensors:
            check_sparse(sparse, report, found.location_problem)
        if "g" in filled:
            _check_graph(attribute.g, found, main=False)
        for graph in attribute.graphs:
            _check_graph(graph, found, main=False)


__all__ = ["MAX_IR_VERSION", "MIN_IR_VERSION", "check_model_fields"]
