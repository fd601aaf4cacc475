"""The fresh-symbol names a model already uses, found in its serialized parts.

Inference makes up names for dims it cannot name (``unk__0``, ``unk__1``...), and each must
differ from every dim_param the model holds, nested graphs and function bodies included.
Only names of that one form can clash, so rather than reading every type of the model
field by field, the parts that can hold a type are serialized and searched for the prefix:
each graph's value declarations, each node attribute of a kind that holds graphs or types
(or of no declared kind), and each function. Protobuf writes a string's UTF-8 bytes as they
are, so a dim_param that is such a name, or holds one (``unk__3*2``), is found; bytes that
merely look like one (a doc string) only make a fresh name skip a number. Nothing else of a
node can hold a dim_param: its tensors' dims are numbers. So the weights, whether
initializers or the tensors of ``Constant`` nodes and tree ensembles' long lists, are never
copied.
"""
from __future__ import annotations

import re
from itertools import chain, compress
from operator import attrgetter, methodcaller
from typing import Any, Iterable

from opspec.runtime.kinds import AttrType

#: Attribute kinds that may hold a dim_param: graphs and types, and an attribute whose kind is
#: not set (0: its kind follows from the field it fills).
_HOLDING_TYPES = frozenset((0, AttrType.GRAPH, AttrType.GRAPHS, AttrType.TYPE_PROTO, AttrType.TYPE_PROTOS))
_serialized = methodcaller("SerializeToString")
_kind = attrgetter("type")


def taken_names(model: Any, prefix: str, input_types: Iterable[bytes] | None = None) -> set[str]:
    """Every text of the form ``prefix`` + digits in the parts of ``model`` that may hold dim_params.

    ``input_types``: the graph inputs' ``type`` fields, serialized already (the inputs are then
    not serialized again; their names hold no dim_param)."""
    graph = model.graph
    if input_types is None:
        input_types = map(_serialized, graph.input)
    parts = list(chain(input_types, map(_serialized, chain(graph.output, graph.value_info))))
    # The node list as a list first, then every attribute: each step one C-level pass.
    attributes = [attribute for node in graph.node[:] for attribute in node.attribute]
    parts += map(_serialized, compress(attributes, map(_HOLDING_TYPES.__contains__, map(_kind, attributes))))
    parts += map(_serialized, model.functions)
    text = b"\0".join(parts)
    marker = prefix.encode("utf-8")
    if marker not in text:
        return set()
    pattern = re.compile(re.escape(marker) + rb"[0-9]+")
    return {found.decode("utf-8") for found in pattern.findall(text)}


__all__ = ["taken_names"]
