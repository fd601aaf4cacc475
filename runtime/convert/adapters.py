"""Version steps that data cannot describe, by the name a version's ``convert: by`` gives.

Each adapter brings the node to a form the computed signature step then finishes, or
raises :class:`Refusal`. It receives the node, the schema it leaves and the adjacent
schema it goes to.
"""
from __future__ import annotations

from typing import Callable

from opspec.runtime.convert.values import GraphValues, Refusal, make_tensor
from opspec.runtime.convert.work_node import WorkNode, make_attribute
from opspec.runtime.schema import AttrType, OpSchema

Adapter = Callable[[WorkNode, OpSchema, OpSchema, GraphValues], None]


def last_axis(node: WorkNode, source: OpSchema, target: OpSchema, values: GraphValues) -> None:
    """Softmax, LogSoftmax, Hardmax: before version 13 ``axis`` splits a 2-D view, from 13 it
    names the one axis normalized. The two agree when ``axis`` is the last axis."""
    known = values.type_of(node.inputs[0])
    if known is None or known.rank is None:
        raise Refusal("the input's rank is unknown, so whether 'axis' is the last axis is unknown")
    axis = node.value("axis")
    if axis is None:
        axis = source.attributes["axis"].default
    rank = known.rank
    if not -rank <= axis < max(rank, 1) or axis % max(rank, 1) != max(rank, 1) - 1:
        raise Refusal(f"axis {axis} is not the last axis of a rank-{rank} input, where versions "
                      f"{source.since_version} and {target.since_version} differ")
    node.set("axis", AttrType.INT, -1 if target.since_version >= 11 else rank - 1)


def split_count(node: WorkNode, source: OpSchema, target: OpSchema, values: GraphValues) -> None:
    """Split 18 adds ``num_outputs``: an equal split needs it, and it allows a smaller last chunk."""
    count = len(node.outputs)
    given = len(node.inputs) > 1 and bool(node.inputs[1])
    if target.since_version > source.since_version:
        if not given:
            node.set("num_outputs", AttrType.INT, count)
        return
    if "num_outputs" not in node.attributes:
        return
    del node.attributes["num_outputs"]
    known = values.type_of(node.inputs[0])
    axis = node.value("axis") or 0
    length = None
    if known is not None and known.dims is not None and -known.rank <= axis < known.rank:
        length = known.dims[axis]
    if length is None:
        raise Refusal("num_outputs splits an axis whose length is unknown into chunks the older version cannot state")
    if length % count == 0:
        return
    chunk = -(-length // count)
    sizes = [chunk] * (count - 1) + [length - chunk * (count - 1)]
    if sizes[-1] <= 0:
        raise Refusal(f"an axis of length {length} does not split into {count} chunks")
    node.inputs[1:2] = [values.add_constant(f"{node.outputs[0]}_split", 7, (count,), sizes)]


_CONSTANT_FORMS = {"value_float": (1, False), "value_floats": (1, True), "value_int": (7, False),
                   "value_ints": (7, True), "value_string": (8, False), "value_strings": (8, True)}


def constant_value(node: WorkNode, source: OpSchema, target: OpSchema, values: GraphValues) -> None:
    """Constant 12 adds ``value_int``, ``value_floats``...: below it they are a ``value`` tensor."""
    if target.since_version > source.since_version:
        return
    for name, (elem, is_list) in _CONSTANT_FORMS.items():
        if name not in node.attributes:
            continue
        items = list(node.value(name)) if is_list else [node.value(name)]
        del node.attributes[name]
        tensor = make_tensor(values.tensor_class, "", elem, (len(items),) if is_list else (), items)
        node.attributes["value"] = make_attribute("value", AttrType.TENSOR, None)
        node.attributes["value"].t.CopyFrom(tensor)


def empty_roi(node: WorkNode, source: OpSchema, target: OpSchema, values: GraphValues) -> None:
    """Resize before 13 needs ``roi`` even where it reads none: an empty one then."""
    if target.since_version < source.since_version and (len(node.inputs) < 2 or not node.inputs[1]):
        mode = node.value("coordinate_transformation_mode")
        if mode == "tf_crop_and_resize":
            raise Refusal("tf_crop_and_resize reads 'roi', which is absent")
        node.inputs[1:2] = [values.add_constant(f"{node.outputs[0]}_roi", 1, (0,), [])]
        while len(node.inputs) < 2:
            node.inputs.append("")


ADAPTERS: dict[str, Adapter] = {"empty_roi": empty_roi, "last_axis": last_axis, "split_count": split_count, "constant_value": constant_value}
