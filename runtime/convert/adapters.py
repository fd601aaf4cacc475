"""Version steps that data cannot describe, by the name a version's ``convert: by`` gives.

Each adapter brings the node to a form the computed signature step then finishes, or
raises :class:`Refusal`; one that returns True has done the whole step itself, one that
returns a :class:`Surrounding` has written nodes around the node (the step still finishes it). It
receives the node, the schema it leaves and the adjacent schema it goes to.
"""
from __future__ import annotations

from typing import Callable

from opspec.runtime.contract.elements import ElementType
from opspec.runtime.convert.adapters_ml import ML_ADAPTERS
from opspec.runtime.convert.adapters_successors import SUCCESSOR_ADAPTERS
from opspec.runtime.convert.emitter import Emitter
from opspec.runtime.convert.shape_values import elements
from opspec.runtime.convert.values import CONSTANT_FORMS, GraphValues, Refusal, ValueType, make_tensor
from opspec.runtime.convert.work_node import Surrounding, WorkNode, make_attribute
from opspec.runtime.schema import AttrType, OpSchema

Adapter = Callable[[WorkNode, OpSchema, OpSchema, GraphValues], "bool | Surrounding | None"]


def last_axis(node: WorkNode, source: OpSchema, target: OpSchema, values: GraphValues) -> Surrounding | None:
    """Softmax, LogSoftmax, Hardmax: before version 13 ``axis`` splits a 2-D view, from 13 it
    names the one axis normalized; where it is not the last axis, the node works on the input
    flattened at ``axis`` going up, and with the axis moved last going down (refused where the
    rank is unknown).

    The two meanings agree when ``axis`` is the last axis, and then only the attribute changes.
    Flatten, normalize, Reshape to the input's shape is the older meaning in the newer opset;
    Transpose the axis last, normalize it, Transpose back is the newer meaning in the older one.
    """
    up = target.since_version > source.since_version
    known = values.type_of(node.inputs[0])
    axis = node.value("axis")
    if axis is None:
        axis = source.attributes["axis"].default
    if known is None or known.rank is None:
        if up:
            return _flattened(node, axis, values)
        raise Refusal("the input's rank is unknown, so the axis cannot be moved last for the older version")
    rank = max(known.rank, 1)
    if not -rank <= axis < rank:
        raise Refusal(f"axis {axis} is outside a rank-{known.rank} input")
    if axis % rank == rank - 1:
        node.set("axis", AttrType.INT, -1 if target.since_version >= 11 else rank - 1)
        return None
    if up:
        return _flattened(node, axis, values)
    return _moved_last(node, axis % rank, rank, values)


def _renamed_output(node: WorkNode, values: GraphValues, index: int = 0) -> tuple[str, str]:
    """Give the node's output ``index`` a fresh name: ``(the model's name, the fresh one)``."""
    given = node.outputs[index]
    fresh = values.fresh(f"{given}_inner")
    node.outputs[index] = fresh
    return given, fresh


def _typed(values: GraphValues, name: str, elem: int | None, rank: int | None) -> None:
    if elem is not None:
        values.types[name] = ValueType(elem, None if rank is None else (None,) * rank)


def _flattened(node: WorkNode, axis: int, values: GraphValues) -> Surrounding:
    known = values.type_of(node.inputs[0])
    elem = known.elem if known is not None else None
    emit = Emitter(node, values)
    shape = emit("Shape", node.inputs[0])
    flat = emit("Flatten", node.inputs[0], axis=axis)
    before = tuple(emit.nodes)
    given, fresh = _renamed_output(node, values)
    node.inputs[0] = flat
    node.set("axis", AttrType.INT, 1)
    _typed(values, flat, elem, 2)
    _typed(values, fresh, elem, 2)
    emit("Reshape", fresh, shape, out=given)
    return Surrounding(before, tuple(emit.nodes[len(before):]))


def _moved_last(node: WorkNode, axis: int, rank: int, values: GraphValues) -> Surrounding:
    known = values.type_of(node.inputs[0])
    order = [index for index in range(rank) if index != axis] + [axis]
    back = [order.index(index) for index in range(rank)]
    emit = Emitter(node, values)
    moved = emit("Transpose", node.inputs[0], perm=order)
    before = tuple(emit.nodes)
    given, fresh = _renamed_output(node, values)
    node.inputs[0] = moved
    node.set("axis", AttrType.INT, rank - 1)
    _typed(values, moved, known.elem if known is not None else None, rank)
    _typed(values, fresh, known.elem if known is not None else None, rank)
    emit("Transpose", fresh, out=given, perm=back)
    return Surrounding(before, tuple(emit.nodes[len(before):]))


def dropout_mask(node: WorkNode, source: OpSchema, target: OpSchema, values: GraphValues) -> Surrounding | None:
    """Dropout's ``mask``: one nothing reads is dropped; across version 10 (a boolean mask where
    7 has the data's type) one that is read is cast to the type the model reads; across 12 one
    that is read is refused.

    Version 12 states that the mask is all true when nothing is dropped; older versions leave
    its value outside training unstated (onnxruntime gives all false), so a read mask would
    change meaning there.
    """
    if len(node.outputs) < 2 or not node.outputs[1]:
        return None
    if not values.is_used(node.outputs[1]):
        del node.outputs[1:]
        return None
    if max(source.since_version, target.since_version) >= 12:
        raise Refusal("the mask output is read, and versions before 12 leave its value outside training unstated")
    known = values.type_of(node.inputs[0])
    if known is None:
        raise Refusal("the mask output is read, and the data's element type, which the older mask has, is unknown")
    up = target.since_version > source.since_version
    shape = values.type_of(node.outputs[1])
    given, fresh = _renamed_output(node, values, 1)
    _typed(values, fresh, ElementType.BOOL if up else known.elem, shape.rank if shape is not None else None)
    emit = Emitter(node, values)
    emit("Cast", fresh, out=given, to=known.elem if up else ElementType.BOOL)
    return Surrounding(after=tuple(emit.nodes))


_GRID_MODES = {"bilinear": "linear", "bicubic": "cubic"}


def grid_modes(node: WorkNode, source: OpSchema, target: OpSchema, values: GraphValues) -> None:
    """GridSample 20 renames ``bilinear`` and ``bicubic`` to ``linear`` and ``cubic`` and samples
    any number of spatial axes: the mode is renamed, and going down only a 4-D input converts."""
    up = target.since_version > source.since_version
    names = _GRID_MODES if up else {new: old for old, new in _GRID_MODES.items()}
    mode = node.value("mode")
    if mode is None:
        mode = source.attributes["mode"].default
    if not up:
        known = values.type_of(node.inputs[0])
        if known is None or known.rank is None:
            raise Refusal(f"GridSample {target.since_version} samples 4-D inputs only, and the input's rank is unknown")
        if known.rank != 4:
            raise Refusal(f"GridSample {target.since_version} samples 4-D inputs only, and the input is {known.rank}-D")
    node.set("mode", AttrType.STRING, names.get(mode, mode))


def shape_without_zero(node: WorkNode, source: OpSchema, target: OpSchema, values: GraphValues) -> None:
    """Reshape 14 adds ``allowzero``, which changes only what a 0 in the shape means: below 14 it
    is dropped where the shape is a constant without a 0, refused otherwise."""
    if target.since_version > source.since_version or not node.value("allowzero"):
        return
    constant = values.values_of(node.inputs[1]) if len(node.inputs) > 1 else None
    if constant is not None and 0 in constant[1]:
        raise Refusal("allowzero = 1 and the shape holds a 0, which older versions read as a copied dim")
    if constant is None and not _copies_agree(node, values):
        raise Refusal("allowzero = 1, and the shape is computed at run time, so whether it holds a 0 "
                      "(which older versions read as a copied dim) is unknown")
    del node.attributes["allowzero"]


def _copies_agree(node: WorkNode, values: GraphValues) -> bool:
    """Whether every element of a computed shape reads the same as a copied dim: a known number
    other than 0, or a dim equal to the data's dim at its place (which a 0 there would copy).

    A shape holding -1 agrees whatever its other elements: with ``allowzero`` a 0 beside a -1 is
    invalid, so on every input the model is valid for, no element is 0."""
    parts = elements(node.inputs[1], values) if len(node.inputs) > 1 else None
    data = values.type_of(node.inputs[0])
    if parts is None:
        return False
    if -1 in [part for part in parts if isinstance(part, int)]:
        return True
    for place, element in enumerate(parts):
        if isinstance(element, int):
            if element == 0:
                return False
            continue
        if element is None or data is None or data.dims is None or place >= len(data.dims):
            return False
        if element.name == node.inputs[0] and element.index == place:
            continue
        source = values.type_of(element.name)
        theirs = source.symbols[element.index] if source is not None and source.symbols else None
        ours = data.symbols[place] if data.symbols else None
        if theirs is None or theirs != ours:
            return False
    return True


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
    """Resize before 13 needs ``roi`` even where it reads none: an empty one then.

    Going down, ``scales`` left out beside ``sizes`` becomes an empty one as well: version 11
    needs the input, and reads ``sizes`` where it is empty."""
    if target.since_version > source.since_version:
        return
    if len(node.inputs) < 2 or not node.inputs[1]:
        mode = node.value("coordinate_transformation_mode")
        if mode == "tf_crop_and_resize":
            raise Refusal("tf_crop_and_resize reads 'roi', which is absent")
        node.inputs[1:2] = [values.add_constant(f"{node.outputs[0]}_roi", 1, (0,), [])]
    if len(node.inputs) > 3 and node.inputs[3] and not node.inputs[2]:
        node.inputs[2] = values.add_constant(f"{node.outputs[0]}_scales", 1, (0,), [])


def ceil_window(node: WorkNode, source: OpSchema, target: OpSchema, values: GraphValues) -> None:
    """Pooling 22 drops a last window that ``ceil_mode`` would start in the end padding; older
    versions keep it. The two agree when no such window exists: for a known length, when the
    last window starts inside; for any length, when ``end pad + stride - 1 <= dilation * (kernel - 1)``.

    The last window starts at ``ceil(span / stride) * stride``, with ``span = length + pads -
    dilation * (kernel - 1) - 1``, which is at most ``span + stride - 1`` and reaches it for some
    length; it lies before the end padding (``< length + begin pad``) for every length exactly
    when the condition holds.
    """
    if not node.value("ceil_mode"):
        return
    auto_pad = node.value("auto_pad") or "NOTSET"
    known = values.type_of(node.inputs[0])
    kernel = node.value("kernel_shape")
    if auto_pad not in ("NOTSET", "VALID") or kernel is None:
        raise Refusal("with ceil_mode the versions differ where a last window starts in the padding, "
                      "and the padding is not known")
    count = len(kernel)
    spatial = list(known.dims[2:]) if known is not None and known.dims is not None else [None] * count
    strides = node.value("strides") or [1] * count
    dilations = node.value("dilations") or [1] * count
    pads = node.value("pads") if auto_pad == "NOTSET" and node.value("pads") else [0] * (2 * count)
    for axis, size in enumerate(spatial):
        reach = dilations[axis] * (kernel[axis] - 1)
        if size is None:
            if pads[axis + count] + strides[axis] - 1 > reach:
                raise Refusal(f"with ceil_mode the versions differ for some lengths of spatial axis {axis}, "
                              f"whose length is unknown")
            continue
        span = size + pads[axis] + pads[axis + count] - reach - 1
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


ADAPTERS: dict[str, Adapter] = {"dropout_mask": dropout_mask, "grid_modes": grid_modes, "shape_without_zero": shape_without_zero, "group_scale": group_scale, "resize_10": resize_10, "ceil_window": ceil_window, "dft_axis": dft_axis, "empty_roi": empty_roi, "last_axis": last_axis, "split_count": split_count, "constant_value": constant_value}
ADAPTERS.update(ML_ADAPTERS)
ADAPTERS.update(SUCCESSOR_ADAPTERS)
