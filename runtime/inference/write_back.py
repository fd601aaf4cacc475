"""Writing inferred types into a model: the main graph and every graph nested in its nodes.

Graph outputs get their inferred types, existing ``value_info`` entries are refined in place
and every other value a node produced is appended to ``value_info``, as onnx does. Graph
inputs and initializers are left as written.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import count
from operator import add
from typing import Any, Container, Iterable, Mapping

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from opspec.runtime.contract.values import TensorType
from opspec.runtime.inference.deferred_types import UnreadType
from opspec.runtime.inference.typeops import TypeConflict, is_informative, merge_types
from opspec.runtime.inference.value_info_entries import LISTS_FROM, Entries
from opspec.runtime.inference.write_types import TypeEncoder, graph_value_infos, write_type
from opspec.runtime.ir.varint import encode_varint

_TYPE_FIELD = 0x12  # ValueInfoProto.type: field 2, length-delimited
_GRAPH_OUTPUT = 0x62  # GraphProto.output: field 12, length-delimited
#: Key and length of a short output, and of a short type field.
_OUTPUT_HEADS = [bytes((_GRAPH_OUTPUT, size)) for size in range(0x80)]
_TYPE_HEADS = [bytes((_TYPE_FIELD, size)) for size in range(0x80)]


def _output_list_class() -> Any:
    """A message class whose field 12, a ``GraphProto``'s outputs, is a list of bytes: entries
    serialized one by one, written through it, come out framed as a graph's outputs."""
    proto = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(name="opspec_output_list.proto", package="opspec.output_list")
    outputs = file.message_type.add(name="Outputs")
    outputs.field.add(name="output", number=12, label=proto.LABEL_REPEATED, type=proto.TYPE_BYTES)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("opspec.output_list.Outputs"))


_OutputList = _output_list_class()
_ELEM_ONLY_PREFIX = b"\x0a\x02\x08"  # TypeProto.tensor_type holding only elem_type (one varint byte)


def write_graph(graph: Any, types: Mapping[str, Any], produced: Iterable[str], given: Iterable[str],
                value_info_types: Mapping[str, Any], output_types: Mapping[str, Any],
                encoder: TypeEncoder | None = None, *, merge: bool = True,
                plain_outputs: Container[int] = (), outputs_read: Entries | None = None) -> tuple[int, bytes]:
    """Write ``types`` into ``graph``: ``produced`` are its node outputs in node order (names of
    ``given``, its inputs and initializers, and of its value_info and outputs may be among them:
    they are not added); the two mappings hold what ``value_info`` and the outputs declared.

    Returns how many values were added to ``value_info`` and, unless ``merge``, those entries
    serialized and not yet in ``graph`` (``graph.MergeFromString`` of them adds them, as does
    appending them to the graph's bytes when the model is written). ``plain_outputs`` are the
    positions of outputs whose declared type holds nothing a written type must keep;
    ``outputs_read`` the outputs as read before inference, when the caller has them."""
    encoder = encoder or TypeEncoder()
    get = types.get
    outputs = graph.output
    in_place: list[tuple[int, Any]]
    output_names = [value_info.name for value_info in outputs] if outputs_read is None else outputs_read.names
    if outputs_read is None or len(output_names) < LISTS_FROM:  # each output's type parsed on its own
        in_place = [(index, value) for index, value, declared in zip(
            count(), map(get, output_names), map(output_types.get, output_names)) if _rewritten(value, declared)]
    else:
        values = list(map(get, output_names))
        merged = _merged_type_fields(outputs_read, values, encoder) if len(output_types) == len(output_names) else None
        if merged is not None:  # (names all distinct: each output's declared type is its own)
            in_place = []
            if any(merged):
                del graph.output[:]
                graph.MergeFromString(_OutputList(output=list(map(add, outputs_read.raws, merged))).SerializeToString())
        else:
            in_place = _rewrite_outputs(graph, outputs_read, values, list(map(output_types.get, output_names)),
                                        plain_outputs, encoder)
    for index, value in in_place:
        if index in plain_outputs:  # no denotation to keep: no need to look for one
            outputs[index].type.ParseFromString(encoder(value))
        else:
            write_type(outputs[index].type, value, encoder)
    skip = set(given)
    for value_info in graph.value_info:
        name = value_info.name
        skip.add(name)
        value = get(name)
        original = value_info_types.get(name)
        if original is not None and is_informative(value) and value != original:
            write_type(value_info.type, value, encoder)
    skip.update(output_names)
    added, written = graph_value_infos(encoder, produced, types, skip)
    if written and merge:
        graph.MergeFromString(written)
        written = b""
    return added, written


def _rewritten(value: Any, declared: Any) -> bool:
    """Whether an output declared as ``declared`` is written as ``value``: when it says something
    (``is_informative``, inlined: graphs may have 10^5 outputs) and something else."""
    return value is not None and value != declared and (
        type(value) is not TensorType or value.elem or value.shape is not None)


def _merged_type_fields(read: Entries, values: list[Any], encoder: TypeEncoder) -> list[bytes] | None:
    """Per output, as ``read``, a ``type`` field that, appended to the entry, gives it the type
    of ``values`` there (empty where that type says nothing, and the entry stays as declared);
    None unless every output can be written so.

    Parsing a message merges a field met twice into the first: appended to an entry whose type
    holds at most an element type, a tensor type with an element type replaces it whole. So
    each entry must hold just a name and such a type, and each type to write must be either such
    a tensor type or one that says nothing. Each distinct type (outputs share them) is looked
    at once."""
    if not read.all_bare or not all(map(_holds_elem_only, set(read.keys))):
        return None
    if values.count(values[0]) == len(values):  # one type for all (equal types encode alike)
        field = _merged_type_field(values[0], encoder)
        return None if field is None else [field] * len(values)
    ids = list(map(id, values))
    fields: dict[int, bytes] = {}
    for value_id, value in dict(zip(ids, values)).items():  # (each stays alive in ``values``)
        field = _merged_type_field(value, encoder)
        if field is None:
            return None
        fields[value_id] = field
    return list(map(fields.__getitem__, ids))


def _merged_type_field(value: Any, encoder: TypeEncoder) -> bytes | None:
    """The ``type`` field that gives an entry ``value`` when appended to it (see
    :func:`_merged_type_fields`): empty for a type that says nothing, None when there is none."""
    kind = type(value)
    if (kind is TensorType or kind is UnreadType) and value.elem:
        return _type_field(encoder(value))
    if value is None or kind is TensorType and value.shape is None:
        return b""
    return None


def _type_field(encoded: bytes) -> bytes:
    """A ``ValueInfoProto.type`` field holding the serialized ``TypeProto`` ``encoded``."""
    size = len(encoded)
    return (_TYPE_HEADS[size] if size < 0x80 else bytes((_TYPE_FIELD,)) + encode_varint(size)) + encoded


def _holds_elem_only(key: bytes) -> bool:
    """Whether a serialized ``TypeProto`` holds nothing, an empty tensor type or a tensor type
    with only its element type (a number below 128)."""
    return not key or key == b"\x0a\x00" or len(key) == 4 and key.startswith(_ELEM_ONLY_PREFIX) and 0 < key[3] < 0x80


def _rewrite_outputs(graph: Any, read: Entries, values: list[Any], declared: list[Any], plain: Container[int],
                     encoder: TypeEncoder) -> list[tuple[int, Any]]:
    """Give ``graph``'s outputs, as ``read`` before inference, the types ``values`` where they say
    more than ``declared``: the bare ones among those whose declared type is ``plain`` are
    written whole, all in one parse; the others are returned as ``(position, type)`` to be
    written into their messages."""
    pieces: list[bytes] = []
    add = pieces.append
    fields: dict[int, bytes] = {}  # per type object (outputs share them): its ``type`` field
    in_place: list[tuple[int, Any]] = []
    rebuilt = False
    for index, raw, old, value, given, bare in zip(count(), read.raws, read.keys, values, declared, read.bare):
        if value is not None and value != given and (
                type(value) is not TensorType or value.elem or value.shape is not None):  # (``_rewritten``)
            if bare and index in plain:
                field = fields.get(id(value))  # (the value stays alive in ``values`` meanwhile)
                if field is None:
                    field = fields[id(value)] = _type_field(encoder(value))
                # A bare entry is its name field, then its type field: keep the first, put the new type after.
                size = len(old)
                raw = raw[:len(raw) - size - (2 if size < 0x80 else len(encode_varint(size)) + 1)] + field
                rebuilt = True
            else:
                in_place.append((index, value))
        size = len(raw)
        add(_OUTPUT_HEADS[size] if size < 0x80 else bytes((_GRAPH_OUTPUT,)) + encode_varint(size))
        add(raw)
    if rebuilt:
        del graph.output[:]
        graph.MergeFromString(b"".join(pieces))
    return in_place


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
        types = self.types
        refined: dict[str, Any] = {}
        for name, declared in self.output_types.items():
            if declared is not None and name in types:
                try:
                    value = merge_types(declared, types[name])
                except TypeConflict:
                    value = declared  # reported during inference; the declaration stays
                if value != types[name]:
                    refined[name] = value
        if refined:  # (a copy only then: a large graph holds many values)
            types = {**types, **refined}
        # ``given`` would only leave names out of those the nodes produced: the inputs and initializers are none of them.
        write_graph(self.graph, types, self.producers, (), self.value_info_types, self.output_types, encoder)
