"""Replace a node by its function body, for an opset where the operator does not exist.

Bodies written as data (a version's ``function``) are instantiated as they are: formal
names become the node's values, inner values get fresh names, attribute references take
the node's attribute or the schema's default. Operators whose body onnx builds per node
(``context_dependent``) have a builder here. The body's nodes are returned with the
opset they are written for; the caller converts them on to the target opset.
"""
from __future__ import annotations

from typing import Callable

from opspec.runtime.convert.bodies_attention import attention, rotary_embedding
from opspec.runtime.convert.bodies_older import einsum, grid_sample, range_constant
from opspec.runtime.convert.bodies_normalization import gelu, group_normalization, layer_normalization, rms_normalization
from opspec.runtime.convert.bodies_tensor import cast_like, shape_range, split_count, trilu
from opspec.runtime.convert.values import GraphValues, Refusal
from opspec.runtime.convert.widen import widened
from opspec.runtime.convert.work_node import WorkNode, bind_formals, make_attribute
from opspec.runtime.schema import AttrType, OpSchema

Builder = Callable[[WorkNode, OpSchema, GraphValues], list[WorkNode]]


def expand(node: WorkNode, schema: OpSchema, target_opset: int, values: GraphValues) -> tuple[int, list[WorkNode]]:
    """``(opset of the body, its nodes)`` for ``node``, or raise :class:`Refusal`; a normalization
    of 16-bit floats is computed at float32 between Casts (:mod:`.widen`)."""
    wide = widened(node, schema, values)
    if wide is None:
        return _body(node, schema, target_opset, values)
    opset, body = _body(wide.node, schema, target_opset, values)
    return opset, [*wide.before, *body, *wide.after]


def _body(node: WorkNode, schema: OpSchema, target_opset: int, values: GraphValues) -> tuple[int, list[WorkNode]]:
    builder = BUILDERS.get((schema.domain, schema.name))
    if builder is not None:
        return builder.opset, builder.build(node, schema, values)
    if not schema.functions:
        raise Refusal(f"{schema.name} has no version at opset {target_opset} and no function body to expand")
    below = [body for body in schema.functions if body.opset <= target_opset]
    body = below[-1] if below else schema.functions[0]
    return body.opset, _instantiate(node, schema, body, values)


def _instantiate(node: WorkNode, schema: OpSchema, body, values: GraphValues) -> list[WorkNode]:
    function = schema.get_function_with_opset_version(body.opset)
    names: dict[str, str] = {"": ""}
    for formal, actuals in bind_formals(schema.inputs, node.inputs).items():
        names[formal] = actuals[0] if actuals else ""
    for formal, actuals in bind_formals(schema.outputs, node.outputs).items():
        names[formal] = actuals[0] if actuals else ""
    nodes: list[WorkNode] = []
    if function is None:
        raise Refusal(f"{schema.name} has no function body for opset {body.opset}")
    for inner in function.node:
        if any(a.HasField("g") or a.graphs for a in inner.attribute):
            raise Refusal(f"the function body of {schema.name} holds a subgraph, which is not expanded")
        for output in inner.output:
            if output and (output not in names or not names[output]):
                names[output] = values.fresh(f"{node.outputs[0]}_{output}")
        work = WorkNode(inner.op_type, inner.domain, "", [names.get(i, i) for i in inner.input],
                        [names[o] for o in inner.output])
        for attribute in inner.attribute:
            if not attribute.ref_attr_name:
                copy = make_attribute(attribute.name, AttrType.INT, 0)
                copy.CopyFrom(attribute)
                work.attributes[attribute.name] = copy
                continue
            referred = node.attributes.get(attribute.ref_attr_name)
            default = schema.attributes.get(attribute.ref_attr_name)
            if referred is not None:
                copy = make_attribute(attribute.name, AttrType.INT, 0)
                copy.CopyFrom(referred)
                copy.name = attribute.name
                work.attributes[attribute.name] = copy
            elif default is not None and default.default is not None:
                work.set(attribute.name, default.type, default.default)
        work.name = f"{node.name}_{len(nodes)}" if node.name else ""
        nodes.append(work)
    return nodes


class _Built:
    """A builder of the body of one context-dependent operator, written for ``opset``."""

    def __init__(self, opset: int, build: Builder):
        self.opset, self.build = opset, build


BUILDERS: dict[tuple[str, str], _Built] = {
    ("", "LayerNormalization"): _Built(13, layer_normalization),
    ("", "Gelu"): _Built(13, gelu),
    ("", "Shape"): _Built(13, shape_range),
    ("", "CastLike"): _Built(13, cast_like),
    ("", "RMSNormalization"): _Built(13, rms_normalization),
    ("", "Attention"): _Built(14, attention),
    ("", "Split"): _Built(13, split_count),
    ("", "Trilu"): _Built(13, trilu),
    ("", "RotaryEmbedding"): _Built(13, rotary_embedding),
    ("", "GroupNormalization"): _Built(13, group_normalization),
    ("", "Range"): _Built(1, range_constant),
    ("", "Einsum"): _Built(11, einsum),
    ("", "GridSample"): _Built(13, grid_sample),
}
