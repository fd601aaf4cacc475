"""Version steps that data cannot describe, by the name a version's ``convert: by`` gives.

Each adapter brings the node to a form the computed signature step then finishes, or
raises :class:`Refusal`; one that returns True has done the whole step itself. It
receives the node, the schema it leaves and the adjacent schema it goes to.
"""
from __future__ import annotations

from typing import Callable

from opspec.runtime.convert.values import CONSTANT_FORMS, GraphValues, Refusal, make_tensor
from opspec.runtime.convert.work_node import WorkNode, make_attribute
from opspec.runtime.schema import AttrType, OpSchema

Adapter = Callable[[WorkNode, OpSchema, OpSchema, GraphValues], "bool | None"]


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
    if known is not None and known.dims is not None and -len(known.dims) <= axis < len(known.dims):
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


def constant_value(node: WorkNode, source: OpSchema, target: OpSchema, values: GraphValues) -> None:
    """Constant 12 adds ``value_int``, ``value_floats``...: below it they are a ``value`` tensor."""
    if target.since_version > source.since_version:
        return
    for name, (elem, is_list) in CONSTANT_FORMS.items():
        if name not in node.attributes:
            continue
        items = list(node.value(name)) if is_list else [node.value(name)]
        del node.attributes[name]
        tensor = make_tensor("", elem, (len(items),) if is_list else (), items)
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


def ceil_window(node: WorkNode, source: OpSchema, target: OpSchema, values: GraphValues) -> None:
    """Pooling 22 drops a last window that ``ceil_mode`` would start in the end padding; older
    versions keep it. The two agree when no such window exists, which known dims show."""
    if not node.value("ceil_mode"):
        return
    auto_pad = node.value("auto_pad") or "NOTSET"
    known = values.type_of(node.inputs[0])
    kernel = node.value("kernel_shape")
    if auto_pad not in ("NOTSET", "VALID") or known is None or known.dims is None or kernel is None:
        raise Refusal("with ceil_mode the versions differ where a last window starts in the padding, "
                      "and the input's dims or padding are not known")
    count = len(kernel)
    spatial = known.dims[2:]
    strides = node.value("strides") or [1] * count
    dilations = node.value("dilations") or [1] * count
    pads = node.value("pads") if auto_pad == "NOTSET" and node.value("pads") else [0] * (2 * count)
    for axis, size in enumerate(spatial):
        if size is None:
            raise Refusal(f"with ceil_mode the versions can differ, and spatial axis {axis} has no known length")
        span = size + pads[axis] + pads[axis + count] - dilations[axis] * (kernel[axis] - 1) - 1
        windows = -(-span // strides[axis]) + 1
        if (windows - 1) * strides[axis] >= size + pads[axis]:
            raise Refusal(f"with ceil_mode the last window along spatial axis {axis} starts in the padding, "
                          f"which versions {source.since_version} and {target.since_version} treat differently")


def dft_axis(node: WorkNode, source: OpSchema, target: OpSchema, values: GraphValues) -> None:
    """DFT 20 reads an absent ``axis`` input as -2, where DFT 17's attribute defaults to 1."""
    if target.since_version < source.since_version and (len(node.inputs) < 3 or not node.inputs[2]):
        node.inputs += [""] * (3 - len(node.inputs))
        node.inputs[2] = values.add_constant(f"{node.outputs[0]}_axis", 7, (), [-2])


def _resize_scales(node: WorkNode, values: GraphValues, actual: str) -> list[float]:
    constant = values.values_of(actual) if actual else None
    if constant is None:
        raise Refusal("the scales are computed at run time, and the two versions round nearest positions "
                      "differently depending on them")
    return [float(scale) for scale in constant[1]]


def resize_10(node: WorkNode, source: OpSchema, target: OpSchema, values: GraphValues) -> bool:
    """Resize 10 samples at asymmetric coordinates and rounds nearest positions down when
    enlarging and up when shrinking (as onnxruntime runs it); 11 says both in attributes."""
    up = target.since_version > source.since_version
    scales_name = node.inputs[1] if up else (node.inputs[2] if len(node.inputs) > 2 else "")
    mode = node.value("mode") or "nearest"
    rounding = ""
    if mode == "nearest" and up and node.source is not None and node.source.op_type == "Upsample":
        rounding = "floor"  # Upsample's scales are at least 1
    elif mode == "nearest":
        scales = _resize_scales(node, values, scales_name)
        kinds = {"floor" if scale > 1 else "ceil" for scale in scales if scale != 1}
        if len(kinds) > 1:
            raise Refusal("the scales enlarge some axes and shrink others, which Resize 10 rounds differently")
        rounding = kinds.pop() if kinds else "floor"
    if up:
        node.inputs = [node.inputs[0], values.add_constant(f"{node.outputs[0]}_roi", 1, (0,), []), scales_name]
        node.set("coordinate_transformation_mode", AttrType.STRING, "asymmetric")
        if rounding:
            node.set("nearest_mode", AttrType.STRING, rounding)
        return True
    if any(name for name in node.inputs[3:]) or not scales_name:
        raise Refusal("Resize 10 takes scales only, not sizes")
    settings = ("coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside",
                "extrapolation_value")
    current = {name: node.value(name) if name in node.attributes else source.attributes[name].default
               for name in settings}
    if current["coordinate_transformation_mode"] != "asymmetric" or current["exclude_outside"] != 0 or \
            (rounding and current["nearest_mode"] != rounding):
        raise Refusal("Resize 10 samples only at asymmetric coordinates, rounding nearest positions down when "
                      "enlarging and up when shrinking")
    for name in settings:
        node.attributes.pop(name, None)
    if mode not in ("nearest", "linear"):
        raise Refusal(f"mode {mode!r} is new in Resize 11")
    node.inputs = [node.inputs[0], scales_name]
    return True


def group_scale(node: WorkNode, source: OpSchema, target: OpSchema, values: GraphValues) -> None:
    """GroupNormalization 21 scales each channel where 18 scales each group: constant scales and
    biases are repeated per channel going up, and taken once per group going down when every
    channel of a group has the same one."""
    groups = node.value("num_groups")
    known = values.type_of(node.inputs[0])
    channels = known.dims[1] if known is not None and known.dims and len(known.dims) > 1 else None
    if not groups or channels is None or channels % groups:
        raise Refusal("the channel count is unknown, so scales per group and per channel cannot be matched")
    width = channels // groups
    for position in (1, 2):
        constant = values.values_of(node.inputs[position])
        if constant is None:
            raise Refusal(f"input {position} is computed at run time; its layout differs between versions 18 and 21")
        items = list(constant[1])
        if target.since_version > source.since_version:
            laid = [item for item in items for _ in range(width)]
        else:
            laid = items[::width]
            if any(items[index] != laid[index // width] for index in range(len(items))):
                raise Refusal("the channels of a group have different scales, which version 18 cannot state")
        elem = values.constants[node.inputs[position]].data_type
        node.inputs[position] = values.add_constant(f"{node.outputs[0]}_{position}", elem, (len(laid),), laid)


ADAPTERS: dict[str, Adapter] = {"group_scale": group_scale, "resize_10": resize_10, "ceil_window": ceil_window, "dft_axis": dft_axis, "empty_roi": empty_roi, "last_axis": last_axis, "split_count": split_count, "constant_value": constant_value}
