"""Writing the nodes of a function body: fresh value names, constants, common slices."""
from __future__ import annotations

from opspec.runtime.convert.values import NON_NEGATIVE_OPS, GraphValues, Refusal
from opspec.runtime.convert.work_node import WorkNode
from opspec.runtime.schema import AttrType


def element_of(node: WorkNode, values: GraphValues) -> int:
    """The element type of the node's first input, which the body's constants take."""
    known = values.type_of(node.inputs[0])
    if known is None:
        raise Refusal("the input's element type is unknown, so the body's constants cannot be typed")
    return known.elem


class Emitter:
    """Writes body nodes with fresh names."""

    def __init__(self, node: WorkNode, values: GraphValues):
        self.node, self.values = node, values
        self.nodes: list[WorkNode] = []

    def __call__(self, op: str, *inputs: str, out: str | None = None, **attributes) -> str:
        result = out or self.values.fresh(f"{self.node.outputs[0]}_{op.lower()}")
        self.values.read.update(inputs)
        work = WorkNode(op, "", f"{self.node.name}_{len(self.nodes)}" if self.node.name else "",
                        list(inputs), [result])
        for name, value in attributes.items():
            kind = AttrType.INTS if isinstance(value, list) else AttrType.FLOAT if isinstance(value, float) \
                else AttrType.INT
            work.set(name, kind, value)
        self.nodes.append(work)
        if op in NON_NEGATIVE_OPS:
            self.values.non_negative.add(result)
        return result

    def scalar(self, hint: str, elem: int, value: float) -> str:
        return self.values.add_constant(f"{self.node.outputs[0]}_{hint}", elem, (), [value])

    def ints(self, hint: str, items: list[int]) -> str:
        return self.values.add_constant(f"{self.node.outputs[0]}_{hint}", 7, (len(items),), items)

    def last(self, x: str, axis: int, start: int, end: int, step: int = 1) -> str:
        """``x[..., start:end:step]`` along ``axis`` (the last one, counted from the front)."""
        steps = [self.ints("step", [step])] if step != 1 else []
        return self("Slice", x, self.ints("start", [start]), self.ints("end", [end]), self.ints("axis", [axis]), *steps)
