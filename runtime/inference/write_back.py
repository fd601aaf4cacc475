"""Writing inferred types into a model: the main graph and every graph nested in its nodes.

Graph outputs get their inferred types, existing ``value_info`` entries are refined in place
and every other value a node produced is appended to ``value_info``, as onnx does. Graph
inputs and initializers are left as written.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from opspec.runtime.contract.values import TensorType
from opspec.runtime.inference.raw_dims import RawGraphEntries
from opspec.runtime.inference.typeops import TypeConflict, is_informative, merge_types
from opspec.runtime.inference.write_types import TypeEncoder, graph_value_infos, may_hold_denotation, write_type


def write_graph(graph: Any, types: Mapping[str, Any], produced: Iterable[str], given: Iterable[str],
                value_info_types: Mapping[str, Any], output_types: Mapping[str, Any],
                encoder: TypeEncoder | None = None, *, merge: bool = True) -> tuple[int, bytes]:
    """Write ``types`` into ``graph``: ``produced`` are its node outputs in node order (names of
    ``given``, its inputs and initializers, and of its value_info and outputs may be among them:
    they are not added); the two mappings hold what ``value_info`` and the outputs declared.

    Returns how many values were added to ``value_info`` and, unless ``merge``, those entries
    serialized and not yet in ``graph`` (``graph.MergeFromString`` of them adds them, as does
    appending them to the graph's bytes when the model is written)."""
    encoder = encoder or TypeEncoder()
    get = types.get
    output_names = [value_info.name for value_info in graph.output]
    _write_types(graph, "output", [(index, value) for index, (name, value) in
                                   enumerate(zip(output_names, map(get, output_names)))
                                   if is_informative(value) and value != output_types.get(name)], encoder)
    value_info_names = [value_info.name for value_info in graph.value_info]
    _write_types(graph, "value_info", [(index, value) for index, (name, value) in
                                       enumerate(zip(value_info_names, map(get, value_info_names)))
                                       if (original := value_info_types.get(name)) is not None
                                       and is_informative(value) and value != original], encoder)
    skip = set(given)
    skip.update(value_info_names)
    skip.update(output_names)
    added, written = graph_value_infos(encoder, produced, types, skip)
    if written and merge:
        graph.MergeFromString(written)
        written = b""
    return added, written


#: From this many entries to retype, a graph's outputs (or value_info) are rewritten together:
#: copied out, read, retyped and merged back in a few C calls, not a message at a time.
_BATCH_FROM = 32


def _write_types(graph: Any, field: str, changes: list[tuple[int, Any]], encoder: TypeEncoder) -> None:
    """Give the entries of ``graph.<field>`` (``output`` or ``value_info``) at the indices of
    ``changes`` their new types; everything else in every entry stays as it is."""
    entries = getattr(graph, field)
    if len(changes) < _BATCH_FROM:
        for index, value in changes:
            write_type(entries[index].type, value, encoder)
        return
    holder = type(graph)()
    getattr(holder, field).extend(entries)
    raw = RawGraphEntries.FromString(holder.SerializeToString())
    raw_entries = getattr(raw, field)
    with_denotation = []
    for index, value in changes:
        entry = raw_entries[index]
        if may_hold_denotation(entry.type):
            with_denotation.append((index, value))  # retyped below, once its entry is back
        else:
            entry.type = encoder(value)
    del entries[:]
    graph.MergeFromString(raw.SerializeToString())  # only that field's entries, in their order
    for index, value in with_denotation:
        write_type(entries[index].type, value, encoder)


@dataclass(frozen=True, slots=True)
class SubgraphRecord:
    """What the last inference of one nested graph found (the one with settled input types).

    ``graph`` is held so that the id the record is filed under stays its own."""

    graph: Any
    types: dict[str, Any]
    producers: dict[str, int]
    value_info_types: dict[str, Any]
    output_types: dict[str, Any]

    def write(self, encoder: TypeEncoder) -> None:
        """Write into the graph; an output keeps what it declares, refined where inference agrees."""
        types = dict(self.types)
        for name, declared in self.output_types.items():
            if declared is not None and name in types:
                try:
                    types[name] = merge_types(declared, types[name])
                except TypeConflict:
                    types[name] = declared  # reported during inference; the declaration stays
        given = [name for name in types if name not in self.producers]
        write_graph(self.graph, types, self.producers, given, self.value_info_types, self.output_types, encoder)
