"""Expanding a normalization at float32 when its inputs are 16-bit floats.

The standard's bodies of the normalization operators round to the input's type after each
step (after normalising, again after the scale, again after the bias); the kernels that run
the operator accumulate at float32 and round once. Below the operator's first version its
body is therefore written for float32 inputs, between Casts: every input whose type
parameter is bound to float16 or bfloat16 is cast to float32, and every output of such a
parameter is cast back to the type it had. The result rounds once, as the kernels do, and is
never less accurate than the standard's body.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from opspec.runtime.contract.elements import ElementType
from opspec.runtime.convert.values import GraphValues
from opspec.runtime.convert.work_node import WorkNode, bind_formals
from opspec.runtime.schema import AttrType, FormalParameter, OpSchema

#: Operators expanded at float32 for 16-bit float inputs: the normalizations, whose statistics
#: and scaling the kernels compute at float32.
WIDENED = frozenset({("", "LayerNormalization"), ("", "RMSNormalization"), ("", "GroupNormalization"),
                     ("", "MeanVarianceNormalization")})

_NARROW = frozenset({ElementType.FLOAT16, ElementType.BFLOAT16})


@dataclass(frozen=True)
class Widened:
    """``node`` reading and giving float32 where it read or gave 16-bit floats, the Casts that
    feed it (``before``) and the Casts that turn its outputs back into the model's (``after``)."""

    node: WorkNode
    before: tuple[WorkNode, ...]
    after: tuple[WorkNode, ...]


def _bound(formals: tuple[FormalParameter, ...], actuals: list[str]) -> list[tuple[int, FormalParameter, str]]:
    """``(position, formal, actual)`` for every value given to a formal parameter."""
    found: list[tuple[int, FormalParameter, str]] = []
    for formal, names in zip(formals, bind_formals(formals, actuals).values()):
        found += [(len(found), formal, name) for name in names]
    return found


def narrow_parameters(node: WorkNode, schema: OpSchema, values: GraphValues) -> dict[str, int]:
    """The type parameters an input binds to float16 or bfloat16 that may also be float,
    with the element type each is bound to."""
    found: dict[str, int] = {}
    for _, formal, actual in _bound(schema.inputs, node.inputs):
        known = values.type_of(actual) if actual else None
        if known is not None and known.elem in _NARROW and "tensor(float)" in formal.types:
            found.setdefault(formal.type_str, known.elem)
    return found


def widened(node: WorkNode, schema: OpSchema, values: GraphValues) -> Widened | None:
    """``node`` rewritten to compute at float32 (None when no input is a 16-bit float or the
    operator is not one of :data:`WIDENED`)."""
    if (schema.domain, schema.name) not in WIDENED:
        return None
    narrow = narrow_parameters(node, schema, values)
    if not narrow:
        return None
    wide = WorkNode(node.op_type, node.domain, node.name, list(node.inputs), list(node.outputs),
                    dict(node.attributes), node.source)
    before: list[WorkNode] = []
    after: list[WorkNode] = []
    for position, formal, actual in _bound(schema.inputs, node.inputs):
        if actual and formal.type_str in narrow:
            wide.inputs[position] = values.fresh(f"{actual}_float")
            known = values.type_of(actual)
            if known is not None:
                values.types[wide.inputs[position]] = replace(known, elem=ElementType.FLOAT)
            before.append(_cast(node, f"in{len(before)}", actual, wide.inputs[position], ElementType.FLOAT))
    for position, formal, actual in _bound(schema.outputs, node.outputs):
        if actual and formal.type_str in narrow:
            wide.outputs[position] = values.fresh(f"{actual}_float")
            values.read.add(wide.outputs[position])
            after.append(_cast(node, f"out{len(after)}", wide.outputs[position], actual, narrow[formal.type_str]))
    return Widened(wide, tuple(before), tuple(after))


def _cast(node: WorkNode, suffix: str, source: str, result: str, elem: int) -> WorkNode:
    cast = WorkNode("Cast", "", f"{node.name}_{suffix}" if node.name else "", [source], [result])
    cast.set("to", AttrType.INT, elem)
    return cast
