"""The fresh-symbol names a model already uses, found in its serialized parts.

Inference makes up names for dims it cannot name (``unk__0``, ``unk__1``...), and each must
differ from every dim_param the model holds, nested graphs and function bodies included.
Only names of that one form can clash, so rather than reading every type of the model
field by field, the parts that can hold a type (each graph's value declarations and
nodes, whose attributes carry nested graphs and types, and each function) are serialized
and searched for the prefix: protobuf writes a string's UTF-8 bytes as they are, so a
dim_param that is such a name, or holds one (``unk__3*2``), is found. Bytes that merely
look like one (a node's name, a doc string) only make a fresh name skip a number. A
graph's initializers hold no types and are not read, so the weights are never copied.
"""
from __future__ import annotations

import re
from typing import Any


def taken_names(model: Any, prefix: str) -> set[str]:
    """Every text of the form ``prefix`` + digits in the parts of ``model`` that may hold dim_params."""
    graph = model.graph
    parts = [value_info.SerializeToString() for group in (graph.input, graph.output, graph.value_info)
             for value_info in group]
    parts += [node.SerializeToString() for node in graph.node]
    parts += [function.SerializeToString() for function in model.functions]
    text = b"\0".join(parts)
    marker = prefix.encode("utf-8")
    if marker not in text:
        return set()
    pattern = re.compile(re.escape(marker) + rb"[0-9]+")
    return {found.decode("utf-8") for found in pattern.findall(text)}


__all__ = ["taken_names"]
