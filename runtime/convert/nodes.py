"""Convert one node of the standard domain from one opset to another, version step by step."""
from __future__ import annotations

from opspec.runtime.convert.expand import expand
from opspec.runtime.convert.step import check_types, run_step
from opspec.runtime.convert.values import GraphValues, Refusal
from opspec.runtime.convert.work_node import WorkNode
from opspec.runtime.registry import Registry, SchemaError
from opspec.runtime.schema import OpSchema

#: How deep function bodies may nest in expansion.
_MAX_DEPTH = 8


def _schema(registry: Registry, op_type: str, opset: int) -> OpSchema | None:
    try:
        return registry.get_schema(op_type, opset, "")
    except SchemaError:
        return None


def version_chain(registry: Registry, op_type: str, source: OpSchema, target_opset: int) -> list[OpSchema]:
    """The versions of ``registry`` a node passes from ``source`` to the one in force at ``target_opset``
    (empty when the operator has none there)."""
    target = _schema(registry, op_type, target_opset)
    if target is None:
        return []
    low, high = sorted((source, target), key=lambda schema: schema.since_version)
    chain = [high]
    while chain[-1].since_version > low.since_version:
        previous = _schema(registry, op_type, chain[-1].since_version - 1)
        if previous is None:
            return []
        chain.append(previous)
    return chain[::-1] if target is high else chain


def convert_node(node: WorkNode, source_opset: int, target_opset: int, values: GraphValues,
                 depth: int = 0) -> list[WorkNode]:
    """``node`` (at ``source_opset``) as nodes valid at ``target_opset``, or raise :class:`Refusal`."""
    registry = values.registry
    schema = _schema(registry, node.op_type, source_opset)
    if schema is None:
        raise Refusal(f"opset {source_opset} has no operator {node.op_type}")
    chain = version_chain(registry, node.op_type, schema, target_opset)
    successor = next((index for index, version in enumerate(chain) if index and version.deprecated), None)
    if target_opset > source_opset and successor is not None and "replaced_by" in chain[successor].convert:
        replaced_at = chain[successor].since_version
        prior = convert_node(node, source_opset, replaced_at - 1, values, depth)
        place = next(index for index, written in enumerate(prior) if written is node)
        node.op_type = chain[successor].convert["replaced_by"]
        return prior[:place] + convert_node(node, replaced_at, target_opset, values, depth) + prior[place + 1:]
    first_problem: Refusal | None = None
    if chain:
        saved = (list(node.inputs), list(node.outputs), dict(node.attributes), len(values.added))
        try:
            before: list[WorkNode] = []
            after: list[WorkNode] = []
            for older, newer in zip(chain, chain[1:]):
                around = run_step(node, older, newer, values)
                opset = newer.since_version
                before += _written_at(around.before, opset, target_opset, values, depth)
                after[:0] = _written_at(around.after, opset, target_opset, values, depth)
            return [*before, node, *after]
        except Refusal as problem:
            first_problem = problem
            node.inputs, node.outputs, node.attributes = list(saved[0]), list(saved[1]), dict(saved[2])
            del values.added[saved[3]:]
    if target_opset > source_opset or depth >= _MAX_DEPTH:
        raise first_problem or Refusal(f"opset {target_opset} has no operator {node.op_type}")
    try:
        body_opset, body = expand(node, schema, target_opset, values)
        converted = _written_at(body, body_opset, target_opset, values, depth)
    except Refusal as problem:
        if first_problem is not None:
            raise first_problem from None
        raise Refusal(f"opset {target_opset} has no {node.op_type}, and its body cannot be expanded there: "
                      f"{problem}") from None
    return converted


def _written_at(nodes: tuple[WorkNode, ...] | list[WorkNode], opset: int, target_opset: int, values: GraphValues,
                depth: int) -> list[WorkNode]:
    """``nodes``, written for ``opset``, converted to ``target_opset`` in order."""
    if nodes and depth >= _MAX_DEPTH:
        raise Refusal("conversion writes nodes nested too deep")
    converted: list[WorkNode] = []
    for inner in nodes:
        inner_schema = _schema(values.registry, inner.op_type, opset)
        if inner_schema is not None:
            check_types(inner, inner_schema, values)
            values.learn(inner.message(), inner_schema)
        converted += convert_node(inner, opset, target_opset, values, depth + 1)
    return converted
