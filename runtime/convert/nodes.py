"""Convert one node from one opset of its domain to another, version step by step."""
from __future__ import annotations

from functools import lru_cache

from opspec.runtime.convert.expand import expand
from opspec.runtime.convert.step import check_new_values, check_types, run_step, step_adapter
from opspec.runtime.convert.values import GraphValues, Refusal
from opspec.runtime.convert.work_node import Surrounding, WorkNode
from opspec.runtime.defs import get_all_schemas_with_history, get_schema
from opspec.runtime.registry import SchemaError
from opspec.runtime.schema import OpSchema

#: How deep function bodies may nest in expansion.
_MAX_DEPTH = 8
#: The opset of the standard domain that nodes written beside a node of another domain are written for.
HELPER_OPSET = 13


def canonical_domain(domain: str) -> str:
    """The standard domain spelled as onnx.defs spells it ("")."""
    return "" if domain in ("", "ai.onnx") else domain


def _schema(op_type: str, opset: int, domain: str = "") -> OpSchema | None:
    try:
        return get_schema(op_type, opset, domain)
    except SchemaError:
        return None


def version_chain(op_type: str, source: OpSchema, target_opset: int, domain: str = "") -> list[OpSchema]:
    """The versions a node passes from ``source`` to the one in force at ``target_opset``
    (empty when the operator has none there)."""
    target = _schema(op_type, target_opset, domain)
    if target is None:
        return []
    low, high = sorted((source, target), key=lambda schema: schema.since_version)
    chain = [high]
    while chain[-1].since_version > low.since_version:
        previous = _schema(op_type, chain[-1].since_version - 1, domain)
        if previous is None:
            return []
        chain.append(previous)
    return chain[::-1] if target is high else chain


@lru_cache(maxsize=None)
def predecessors(op_type: str, domain: str) -> tuple[OpSchema, ...]:
    """The deprecating versions of other operators that name ``op_type`` as their successor
    (``convert: replaced_by``), by name."""
    found = [schema for schema in get_all_schemas_with_history()
             if schema.domain == domain and schema.deprecated and schema.convert.get("replaced_by") == op_type]
    return tuple(sorted(found, key=lambda schema: schema.name))


def convert_node(node: WorkNode, source_opset: int, target_opset: int, values: GraphValues,
                 depth: int = 0) -> list[WorkNode]:
    """``node`` (at ``source_opset`` of its domain) as nodes valid at ``target_opset``, or raise
    :class:`Refusal`."""
    domain = canonical_domain(node.domain)
    schema = _schema(node.op_type, source_opset, domain)
    if schema is None:
        raise Refusal(f"opset {source_opset} has no operator {node.op_type}")
    chain = version_chain(node.op_type, schema, target_opset, domain)
    successor = next((index for index, version in enumerate(chain) if index and version.deprecated), None)
    if target_opset > source_opset and successor is not None and "replaced_by" in chain[successor].convert:
        return _replaced(node, chain[successor - 1], chain[successor], source_opset, target_opset, values, depth)
    first_problem: Refusal | None = None
    if chain:
        saved = (list(node.inputs), list(node.outputs), dict(node.attributes), len(values.added))
        try:
            before: list[WorkNode] = []
            after: list[WorkNode] = []
            for older, newer in zip(chain, chain[1:]):
                around = run_step(node, older, newer, values)
                opset = newer.since_version
                before += _written_at(around.before, opset, target_opset, values, depth, domain)
                after[:0] = _written_at(around.after, opset, target_opset, values, depth, domain)
            return [*before, node, *after]
        except Refusal as problem:
            first_problem = problem
            node.inputs, node.outputs, node.attributes = list(saved[0]), list(saved[1]), dict(saved[2])
            del values.added[saved[3]:]
    if target_opset > source_opset or depth >= _MAX_DEPTH:
        raise first_problem or Refusal(f"opset {target_opset} has no operator {node.op_type}")
    try:
        as_older = _as_predecessor(node, source_opset, target_opset, values, depth)
        if as_older is not None:
            return as_older
    except Refusal as problem:
        first_problem = first_problem or problem
    try:
        body_opset, body = expand(node, schema, target_opset, values)
        converted = _written_at(body, body_opset, target_opset, values, depth, domain)
    except Refusal as problem:
        if first_problem is not None:
            raise first_problem from None
        raise Refusal(f"opset {target_opset} has no {node.op_type}, and its body cannot be expanded there: "
                      f"{problem}") from None
    return converted


def _replaced(node: WorkNode, last: OpSchema, deprecating: OpSchema, source_opset: int, target_opset: int,
              values: GraphValues, depth: int) -> list[WorkNode]:
    """Going up past the version that deprecates the operator: the node becomes its successor
    (rewritten by the deprecating version's adapter, if it names one)."""
    domain = canonical_domain(node.domain)
    replaced_at = deprecating.since_version
    prior = convert_node(node, source_opset, replaced_at - 1, values, depth)
    place = next(index for index, written in enumerate(prior) if written is node)
    node.op_type = deprecating.convert["replaced_by"]
    successor = _schema(node.op_type, replaced_at, domain)
    if successor is None:
        raise Refusal(f"opset {replaced_at} has no {node.op_type} to replace {last.name}")
    around = _rename_step(node, last, successor, deprecating, values)
    before = _written_at(around.before, replaced_at, target_opset, values, depth, domain)
    after = _written_at(around.after, replaced_at, target_opset, values, depth, domain)
    rest = convert_node(node, replaced_at, target_opset, values, depth)
    return prior[:place] + before + rest + after + prior[place + 1:]


def _as_predecessor(node: WorkNode, source_opset: int, target_opset: int, values: GraphValues,
                    depth: int) -> list[WorkNode] | None:
    """Going down below the first version of an operator that took over from a deprecated one
    (``replaced_by``): the node steps down to where the older operator was deprecated, becomes it
    (rewritten by the deprecating version's adapter, if it names one) and steps on down. None
    when no such operator applies."""
    domain = canonical_domain(node.domain)
    problems: list[str] = []
    for deprecating in predecessors(node.op_type, domain):
        replaced_at = deprecating.since_version
        older = _schema(deprecating.name, replaced_at - 1, domain)
        if older is None or not target_opset < replaced_at <= source_opset:
            continue
        saved = (node.op_type, list(node.inputs), list(node.outputs), dict(node.attributes), len(values.added))
        try:
            prior = convert_node(node, source_opset, replaced_at, values, depth)
            place = next(index for index, written in enumerate(prior) if written is node)
            successor = _schema(node.op_type, replaced_at, domain)
            assert successor is not None
            node.op_type = deprecating.name
            around = _rename_step(node, successor, older, deprecating, values)
            before = _written_at(around.before, replaced_at - 1, target_opset, values, depth, domain)
            after = _written_at(around.after, replaced_at - 1, target_opset, values, depth, domain)
            rest = convert_node(node, replaced_at - 1, target_opset, values, depth)
            return prior[:place] + before + rest + after + prior[place + 1:]
        except Refusal as problem:
            problems.append(f"as {deprecating.name}: {problem}")
            node.op_type, node.inputs, node.outputs, node.attributes = saved[0], list(saved[1]), list(saved[2]), \
                dict(saved[3])
            del values.added[saved[4]:]
    if problems:
        raise Refusal("; ".join(problems))
    return None


def _rename_step(node: WorkNode, source: OpSchema, target: OpSchema, deprecating: OpSchema,
                 values: GraphValues) -> Surrounding:
    """The step between a deprecated operator and its successor: the deprecating version's values
    the older one rejects are looked for going down, and its adapter, if any, rewrites the node."""
    up = target.since_version > source.since_version
    check_new_values(node, deprecating, values, up)
    adapter = step_adapter(deprecating)
    if adapter is None:
        return Surrounding()
    done = adapter(node, source, target, values)
    return done if isinstance(done, Surrounding) else Surrounding()


def _written_at(nodes: tuple[WorkNode, ...] | list[WorkNode], opset: int, target_opset: int, values: GraphValues,
                depth: int, domain: str = "") -> list[WorkNode]:
    """``nodes``, written for ``opset`` of ``domain``, converted to ``target_opset`` in order; nodes of
    another domain are written for :data:`HELPER_OPSET` of the standard domain, or for the target
    opset of their own, and converted to the graph's target opset of theirs."""
    if nodes and depth >= _MAX_DEPTH:
        raise Refusal("conversion writes nodes nested too deep")
    converted: list[WorkNode] = []
    for inner in nodes:
        inner_domain = canonical_domain(inner.domain)
        at, to = opset, target_opset
        if inner_domain != domain:
            to = values.target_opsets.get(inner_domain, HELPER_OPSET)
            at = HELPER_OPSET if inner_domain == "" else to
        inner_schema = _schema(inner.op_type, at, inner_domain)
        if inner_schema is not None:
            check_types(inner, inner_schema, values)
            values.learn(inner.message(), inner_schema)
        converted += convert_node(inner, at, to, values, depth + 1)
    return converted
