"""``convert_version``: a model moved to another opset of the standard domain, up or down.

Every node of the standard domain is converted version step by step (see
:mod:`opspec.runtime.convert.step`); a node whose operator is missing at a lower target
opset is replaced by its function body. The nodes of another domain opspec holds the
schemas of (ai.onnx.ml) are converted the same way to the opset of that domain given in
``domains``; other domains (onnxruntime's) keep their versions. Nothing is returned when
any node cannot be converted: the refusal names each such node and why.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from opspec.runtime.convert.inline import inline_functions
from opspec.runtime.convert.nodes import canonical_domain, convert_node
from opspec.runtime.convert.values import GraphValues, Refusal, collect_types, value_names
from opspec.runtime.convert.work_node import WorkNode
from opspec.runtime.defs import onnx_opset_version
from opspec.runtime.registry import SchemaError
from opspec.runtime.ir import ModelSource, load_model
from opspec.runtime.op_set import OpSet, standard_op_set
from opspec.runtime.registry import Registry

_STANDARD = ("", "ai.onnx")
#: The oldest opset a model can be converted from or to.
OLDEST_OPSET = 1
#: The IR version onnx pairs with each opset; a converted model gets at least this one.
IR_FOR_OPSET = {7: 3, 8: 3, 9: 4, 10: 5, 11: 6, 12: 7, 13: 7, 14: 7, 15: 8, 16: 8, 17: 8, 18: 8, 19: 9,
                20: 9, 21: 10, 22: 10, 23: 11, 24: 12, 25: 13, 26: 13, 27: 13, 28: 14}
#: The IR version onnx pairs with each opset of the other domains it versions.
IR_FOR_DOMAIN_OPSET = {"ai.onnx.ml": {1: 3, 2: 6, 3: 8, 4: 9, 5: 10}}


@dataclass(frozen=True)


class NodeRefusal:
    """A node that cannot be converted: where it is (``graph``: the graph's path), and why."""

    graph: str
    index: int
    name: str
    op_type: str
    reason: str

    def __str__(self) -> str:
        label = f"'{self.name}'" if self.name else f"#{self.index}"
        return f"{self.graph}: node {label} ({self.op_type}): {self.reason}"


class ConversionError(ValueError):
    """A model that cannot be converted; ``refusals`` lists every node that stops it."""

    def __init__(self, message: str, refusals: tuple[NodeRefusal, ...] = ()):
        super().__init__(message)
        self.refusals = refusals


@dataclass


class ConversionResult:
    """The converted model (None when refused), the opsets, and every node refused."""

    model: Any
    source_opset: int
    target_opset: int
    refusals: list[NodeRefusal] = field(default_factory=list)
    #: Other domains converted: domain -> (the model's opset, the target opset).
    domains: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.refusals


def convert_version(model: ModelSource, target_version: int, domains: Mapping[str, int] | None = None, *,
                    op_set: OpSet | None = None) -> Any:
    """Like ``onnx.version_converter.convert_version``: ``model`` at opset ``target_version``
    (and at the opsets ``domains`` gives of other domains, such as ``{"ai.onnx.ml": 3}``).

    Returns the kind of object it was given (a path gives an ``onnx.ModelProto`` when onnx
    is installed) and never changes the input. Raises :class:`ConversionError` naming every
    node that cannot be converted. ``op_set`` is as for :func:`convert`.
    """
    result = convert(model, target_version, domains, op_set=op_set)
    if not result.ok:
        lines = "\n".join(f"  {refusal}" for refusal in result.refusals)
        others = "".join(f", {domain} {old} to {new}" for domain, (old, new) in result.domains.items() if old != new)
        raise ConversionError(f"cannot convert from opset {result.source_opset} to {target_version}{others}; "
                              f"{len(result.refusals)} node(s) refused:\n{lines}", tuple(result.refusals))
    if isinstance(model, (str, os.PathLike)):
        from opspec.runtime.inference.api import _onnx_message

        return _onnx_message(result.model)
    return result.model


def convert(model: ModelSource, target_version: int, domains: Mapping[str, int] | None = None, *,
            op_set: OpSet | None = None) -> ConversionResult:
    """Convert ``model`` to ``target_version`` (and the other domains to the opsets ``domains``
    gives); the result lists refusals instead of raising. Operators are looked up and inferred in
    ``op_set`` (None: they are looked up in the standard op set, without onnxruntime's additions to
    the standard domain, and inferred with the installed op set)."""
    from opspec.runtime.inference.api import infer

    registry = (op_set or standard_op_set()).registry
    loaded = load_model(model)
    copy = loaded.model
    source = standard_opset(copy)
    newest = registry.domain_version_range("")[1]
    if not OLDEST_OPSET <= target_version <= newest:
        raise ConversionError(f"target opset {target_version} is outside {OLDEST_OPSET}..{newest}")
    if source < OLDEST_OPSET:
        raise ConversionError(f"the model is at opset {source}; conversion starts from opset {OLDEST_OPSET}")
    result = ConversionResult(None, source, target_version, domains=_domain_targets(copy, domains or {}, registry))
    if source == target_version and all(old == new for old, new in result.domains.values()):
        result.model = loaded.to_source_kind(copy)
        return result
    _inline(copy, source, result)
    if result.refusals:
        return result
    before = infer(copy, check_type=True, data_prop=True, op_set=op_set)
    types: dict[str, Any] = {}
    collect_types(before.model.graph, types)
    overridable = copy.ir_version >= 4
    opsets = {"": (source, target_version), **result.domains}
    _convert_graph(copy.graph, f"graph '{copy.graph.name}'", None, types, opsets, overridable, copy.ir_version,
                   result.refusals, registry, op_set)
    if result.refusals:
        return result
    for entry in copy.opset_import:
        if entry.domain in _STANDARD:
            entry.version = target_version
        elif entry.domain in result.domains:
            entry.version = result.domains[entry.domain][1]
    if not any(entry.domain in _STANDARD for entry in copy.opset_import):
        copy.opset_import.add(domain="", version=target_version)  # a model of other domains only: now at the target
    copy.ir_version = max(copy.ir_version, IR_FOR_OPSET.get(target_version, copy.ir_version),
                          *(IR_FOR_DOMAIN_OPSET.get(domain, {}).get(new, 0) for domain, (_, new) in result.domains.items()))
    checked = _verify(before, copy, result, op_set)
    if not result.refusals:
        result.model = loaded.to_source_kind(checked)
    return result


def _inline(model: Any, source: int, result: ConversionResult) -> None:
    """Replace calls of model-local functions by their bodies (written for the model's opset)."""
    for function in model.functions:
        if any(entry.domain in _STANDARD and entry.version != source for entry in function.opset_import):
            result.refusals.append(NodeRefusal(f"function '{function.name}'", 0, function.name, "(function)",
                                               f"it imports the standard domain at another opset than {source}"))
    if result.refusals:
        return
    try:
        inline_functions(model, value_names(model.graph))
    except Refusal as refusal:
        result.refusals.append(NodeRefusal(f"graph '{model.graph.name}'", 0, "", "(function)", str(refusal)))


def standard_opset(model: Any) -> int:
    """The model's opset of the standard domain (1 when it imports none, as onnx reads it)."""
    for entry in model.opset_import:
        if entry.domain in _STANDARD:
            return entry.version
    return 1


def _domain_targets(model: Any, domains: Mapping[str, int], registry: Registry) -> dict[str, tuple[int, int]]:
    """Each other domain to convert: (the model's opset of it, the target), checked against the registry."""
    found: dict[str, tuple[int, int]] = {}
    imported = {entry.domain: entry.version for entry in model.opset_import}
    for domain, target in domains.items():
        if canonical_domain(domain) == "":
            raise ConversionError("the standard domain's target is the target opset, not one of the other domains")
        try:
            oldest, newest = registry.domain_version_range(domain)
        except (SchemaError, KeyError):
            raise ConversionError(f"opspec holds no operators of domain {domain!r} to convert") from None
        if not oldest <= target <= newest:
            raise ConversionError(f"target opset {target} of {domain} is outside {oldest}..{newest}")
        if domain in imported:
            found[domain] = (imported[domain], target)
    return found


def _convert_graph(graph: Any, path: str, outer: GraphValues | None, types: dict, opsets: dict[str, tuple[int, int]],
                   overridable: bool, ir_version: int, refusals: list[NodeRefusal], registry: Registry,
                   op_set: OpSet | None) -> None:
    """Convert every node of ``graph`` (and of its subgraphs) whose domain ``opsets`` maps to its
    (source, target) opsets."""
    values = GraphValues.of(graph, types, outer, overridable, registry, op_set,
                            {domain: new for domain, (_, new) in opsets.items()})
    converted = []
    for index, node in enumerate(graph.node):
        for attribute in node.attribute:
            for sub in ([attribute.g] if attribute.HasField("g") else []) + list(attribute.graphs):
                _convert_graph(sub, f"{path} > {node.op_type} '{node.name}' {attribute.name}", values, types,
                               opsets, overridable, ir_version, refusals, registry, op_set)
        domain = canonical_domain(node.domain)
        if domain not in opsets or opsets[domain][0] == opsets[domain][1]:
            converted.append(node)
            continue
        source, target = opsets[domain]
        try:
            converted += [work.message() for work in convert_node(WorkNode.of(node), source, target, values)]
        except Refusal as refusal:
            refusals.append(NodeRefusal(path, index, node.name, node.op_type, str(refusal)))
        except (ValueError, TypeError, KeyError, IndexError, ZeroDivisionError) as error:  # a malformed node
            refusals.append(NodeRefusal(path, index, node.name, node.op_type,
                                        f"the node does not fit its schema ({type(error).__name__}: {error})"))
    del graph.node[:]
    graph.node.extend(converted)
    graph.initializer.extend(values.added)
    if ir_version < 4 and outer is None:
        for tensor in values.added:
            info = graph.input.add(name=tensor.name)
            info.type.tensor_type.elem_type = tensor.data_type
            info.type.tensor_type.shape.SetInParent()
            for dim in tensor.dims:
                info.type.tensor_type.shape.dim.add(dim_value=dim)


def _verify(before: Any, model: Any, result: ConversionResult, op_set: OpSet | None) -> Any:
    """The converted model with its inferred types written in, as onnx's converter gives it.

    Refuses a conversion after which inference finds a node problem the original did not
    have, or gives a graph output another element type or rank."""
    from opspec.runtime.inference.api import infer

    after = infer(model, check_type=True, data_prop=True, op_set=op_set)
    known_before = {(error.op_type, error.message) for error in before.errors}
    for error in after.errors:
        if (error.op_type, error.message) not in known_before:
            result.refusals.append(NodeRefusal(f"graph '{model.graph.name}'", error.index, error.name,
                                               error.op_type, f"after conversion: {error.message}"))
    for output in model.graph.output:
        old, new = before.values.get(output.name), after.values.get(output.name)
        if old is None or new is None:
            continue
        old_type, new_type = old[0], new[0]
        if getattr(old_type, "elem", None) != getattr(new_type, "elem", None) or \
                _rank(old_type) not in (None, _rank(new_type)):
            result.refusals.append(NodeRefusal(f"graph '{model.graph.name}'", -1, output.name, "(output)",
                                               f"after conversion the output is {new_type}, not {old_type}"))
    return after.model


def _rank(value: Any) -> int | None:
    shape = getattr(value, "shape", None)
    return None if shape is None else len(shape)
