"""Version steps of ai.onnx.ml operators that data cannot describe: LabelEncoder's tables and
the tensor forms of the tree ensembles' float attributes.

Each is an adapter as in :mod:`opspec.runtime.convert.adapters`: it receives the node, the
schema it leaves and the adjacent schema it goes to, and brings the node to a form the
computed signature step finishes, or raises :class:`Refusal`.
"""
from __future__ import annotations

import math
import struct
from typing import Any

from opspec.runtime.contract.elements import ElementType
from opspec.runtime.convert.values import GraphValues, Refusal, make_tensor
from opspec.runtime.convert.work_node import WorkNode, make_attribute
from opspec.runtime.inference.read_tensors import counted_tensor_data
from opspec.runtime.schema import AttrType, OpSchema

#: LabelEncoder's list attributes by element type: (suffix of keys_*/values_*, default_* attribute).
_LABEL_LISTS: dict[int, tuple[str, str]] = {
    ElementType.STRING: ("strings", "default_string"), ElementType.INT64: ("int64s", "default_int64"),
    ElementType.FLOAT: ("floats", "default_float"),
}
_LIST_KIND = {"strings": AttrType.STRINGS, "int64s": AttrType.INTS, "floats": AttrType.FLOATS}
_SINGLE_KIND = {"strings": AttrType.STRING, "int64s": AttrType.INT, "floats": AttrType.FLOAT}


def tensor_items(tensor: Any) -> tuple[int, list]:
    """``(element type, the elements)`` of a tensor attribute, whatever its size."""
    elem = tensor.data_type
    if elem == ElementType.STRING:
        return elem, [item.decode("utf-8", "replace") for item in tensor.string_data]
    count = math.prod(tensor.dims)
    data = counted_tensor_data(tensor, elem, tuple(tensor.dims), count)
    if data is None:
        raise Refusal(f"a tensor attribute of element type {elem} cannot be read")
    return elem, list(data.values)


def _input_elem(node: WorkNode, values: GraphValues, index: int, role: str = "inputs") -> int | None:
    names = getattr(node, role)
    known = values.type_of(names[index]) if len(names) > index and names[index] else None
    return None if known is None else known.elem


def label_classes(node: WorkNode, source: OpSchema, target: OpSchema, values: GraphValues) -> None:
    """LabelEncoder 1 maps the strings of ``classes_strings`` to their positions, or positions to
    the strings; version 2 states any table as parallel ``keys_*`` and ``values_*`` lists. Going
    down only such a table of positions converts."""
    up = target.since_version > source.since_version
    elem = _input_elem(node, values, 0)
    if up:
        classes = node.value("classes_strings")
        if not classes:
            raise Refusal("classes_strings is absent, so the table version 2 needs cannot be written")
        if elem is None:
            elem = ElementType.STRING if _input_elem(node, values, 0, "outputs") == ElementType.INT64 else \
                ElementType.INT64 if _input_elem(node, values, 0, "outputs") == ElementType.STRING else None
        if elem not in (ElementType.STRING, ElementType.INT64):
            raise Refusal("the input's element type, which says which way classes_strings maps, is unknown")
        positions = list(range(len(classes)))
        del node.attributes["classes_strings"]
        if elem == ElementType.STRING:
            node.set("keys_strings", AttrType.STRINGS, classes)
            node.set("values_int64s", AttrType.INTS, positions)
        else:
            node.set("keys_int64s", AttrType.INTS, positions)
            node.set("values_strings", AttrType.STRINGS, classes)
        return
    keys_strings, values_ints = node.value("keys_strings"), node.value("values_int64s")
    keys_ints, values_strings = node.value("keys_int64s"), node.value("values_strings")
    if keys_strings is not None and values_ints is not None and list(values_ints) == list(range(len(keys_strings))):
        classes = list(keys_strings)
    elif keys_ints is not None and values_strings is not None and list(keys_ints) == list(range(len(values_strings))):
        classes = list(values_strings)
    else:
        raise Refusal("LabelEncoder 1 maps strings to their positions in a list and back only, and this "
                      "table is another")
    for name in ("keys_strings", "values_int64s", "keys_int64s", "values_strings", "default_float"):
        node.attributes.pop(name, None)
    node.set("classes_strings", AttrType.STRINGS, classes)


def label_tensors(node: WorkNode, source: OpSchema, target: OpSchema, values: GraphValues) -> None:
    """LabelEncoder 4 may give keys, values and default as tensors: going down they become the
    list attributes of their element type (string, int64 or float), refused for other types."""
    if target.since_version > source.since_version:
        return
    values_elem = None
    for role in ("keys", "values"):
        attribute = node.attributes.get(f"{role}_tensor")
        if attribute is None:
            continue
        elem, items = tensor_items(attribute.t)
        if elem not in _LABEL_LISTS:
            raise Refusal(f"{role}_tensor holds element type {elem}, which version {target.since_version} "
                          f"cannot list")
        suffix = _LABEL_LISTS[elem][0]
        del node.attributes[f"{role}_tensor"]
        node.set(f"{role}_{suffix}", _LIST_KIND[suffix], items)
        values_elem = elem if role == "values" else values_elem
    default = node.attributes.pop("default_tensor", None)
    if default is None:
        return
    elem, items = tensor_items(default.t)
    if values_elem is None:
        values_elem = next((e for e, (suffix, _) in _LABEL_LISTS.items() if f"values_{suffix}" in node.attributes),
                           None)
    if elem != values_elem or elem not in _LABEL_LISTS or len(items) != 1:
        raise Refusal("default_tensor is not one value of the values' element type")
    suffix, name = _LABEL_LISTS[elem]
    node.set(name, _SINGLE_KIND[suffix], items[0])


#: The tensor forms version 3 of the tree ensembles adds, by the list attribute they stand for.
_TREE_TENSORS = ("base_values", "nodes_hitrates", "nodes_values", "target_weights", "class_weights")


def float32_exact(value: float) -> bool:
    return math.isnan(value) or struct.unpack("<f", struct.pack("<f", value))[0] == value


def tree_tensors(node: WorkNode, source: OpSchema, target: OpSchema, values: GraphValues) -> None:
    """The tree ensembles 3 may give their float attributes as tensors (``*_as_tensor``), which keep
    double precision: going down each becomes the float list, where every value is a float
    exactly (otherwise a threshold or weight would change)."""
    if target.since_version > source.since_version:
        return
    for name in _TREE_TENSORS:
        attribute = node.attributes.pop(f"{name}_as_tensor", None)
        if attribute is None:
            continue
        elem, items = tensor_items(attribute.t)
        if elem not in (ElementType.FLOAT, ElementType.DOUBLE):
            raise Refusal(f"{name}_as_tensor holds element type {elem}, not float or double")
        if not all(float32_exact(float(item)) for item in items):
            raise Refusal(f"{name}_as_tensor holds values that are not exactly floats, which version "
                          f"{target.since_version} cannot hold")
        if name in node.attributes:
            raise Refusal(f"both {name} and {name}_as_tensor are given")
        node.set(name, AttrType.FLOATS, [float(item) for item in items])


def tensor_attribute(name: str, elem: int, items: list) -> Any:
    """A tensor attribute holding ``items`` as a 1-D tensor of ``elem``."""
    attribute = make_attribute(name, AttrType.TENSOR, None)
    attribute.t.CopyFrom(make_tensor("", elem, (len(items),), items))
    return attribute


ML_ADAPTERS = {"label_classes": label_classes, "label_tensors": label_tensors, "tree_tensors": tree_tensors}
