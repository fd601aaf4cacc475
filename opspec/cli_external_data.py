"""Tensor data stored in files beside a model, kept reachable when a command writes the model
into another folder.

A tensor's external ``location`` is relative to the folder of the model file, so a model
written elsewhere would refer to files that are not there. Before such a model is written,
each data file is made reachable from the output's folder, in this order of preference:

- the output's folder already holds it (the same file, or one with the same bytes): nothing to do;
- it lies inside the output's folder (the output is written to a folder above the input's):
  the location is rewritten to lead to it;
- otherwise it is copied into the output's folder under its own location (each file once,
  whole or not at all), and a file of that name holding other bytes is an error: nothing
  is written.

Locations onnx and onnxruntime refuse (absolute, climbing out with ``..``, through a link
out of the folder) were never readable from the input either: they are kept as they are,
with a warning, as are all locations when the model is read from standard input or written
to a stream (standard output, a device, a pipe): no folder is known at one end.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterator

from opspec.cli_common import UserError, plural
from opspec.runtime.ir.codes import DataLocation
from opspec.runtime.kinds import AttrType

#: Bytes read at a time when a data file is copied or compared.
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Relocation:
    """What writing a model into its output's folder takes for its external data."""

    #: (the data file as the input refers to it, where the output finds it): files to copy first.
    copies: tuple[tuple[str, str], ...]
    #: The new ``location`` of each location that changes.
    renamed: tuple[tuple[str, str], ...]
    #: Warnings about references kept as they are.
    warnings: tuple[str, ...]


def plan(model: Any, source: str | None, output: str | None) -> Relocation:
    """What writing ``model``, read from ``source``, to ``output`` takes (None: standard input;
    for ``output``, a stream: standard output, a device or a pipe). Raises :class:`UserError` when a data file cannot be put beside the output
    without replacing another file; nothing is changed here."""
    from opspec.runtime.ir.external import ExternalData

    if source is not None and output is not None and (
            os.path.realpath(_folder(source)) == os.path.realpath(_folder(output)) or not _may_refer(source)):
        return Relocation((), (), ())
    locations = sorted({location for tensor in external_tensors(model) if (location := _location(tensor))})
    if not locations:
        return Relocation((), (), ())
    if source is None or output is None:
        where = ("the model is read from standard input, so their folder is not known" if source is None
                 else f"the model goes to a stream, not a file; they are relative to {_folder(source)}")
        return Relocation((), (), (f"{plural(len(locations), 'external data file')} kept as "
                                   f"referenced ({', '.join(locations)}): {where}",))
    source_folder, output_folder = _folder(source), _folder(output)
    copies: list[tuple[str, str]] = []
    renamed: list[tuple[str, str]] = []
    warnings: list[str] = []
    readable = ExternalData(source_folder)
    for location in locations:
        if readable.location_problem("", location) or not os.path.isfile(os.path.join(source_folder, location)):
            warnings.append(f"external data '{location}' is not a file inside {source_folder}; "
                            "its reference is written as it is")
            continue
        data = os.path.normpath(os.path.join(source_folder, location))
        inside = os.path.relpath(data, output_folder)
        if not _leaves_folder(inside):
            renamed.append((location, inside.replace(os.sep, "/")))
            continue
        destination = os.path.join(output_folder, location)
        _check_inside(destination, output_folder, output)
        if not _holds(destination, data, output):
            copies.append((data, destination))
    return Relocation(tuple(copies), tuple(renamed), tuple(warnings))


def apply(model: Any, relocation: Relocation) -> None:
    """Copy the data files ``relocation`` names, then rewrite ``model``'s locations."""
    from opspec.runtime.atomic_file import write_atomically

    for data, destination in relocation.copies:
        os.makedirs(os.path.dirname(destination), exist_ok=True)
        try:
            write_atomically(destination, _chunks(data))
        except OSError as error:
            raise UserError(f"cannot copy external data {data} to {destination}: {error.strerror or error}") from None
    if relocation.renamed:
        new = dict(relocation.renamed)
        for tensor in external_tensors(model):
            for entry in tensor.external_data:
                if entry.key == "location" and entry.value in new:
                    entry.value = new[entry.value]


def external_tensors(model: Any) -> Iterator[Any]:
    """Every tensor of ``model`` whose data is stored in a file: initializers, sparse
    initializers, attribute values, in every graph, subgraph, function and training graph."""
    graphs = [model.graph] if model.HasField("graph") else []
    for info in model.training_info:
        graphs.extend(getattr(info, field) for field in ("initialization", "algorithm") if info.HasField(field))
    node_lists = [function.node for function in model.functions]
    while graphs or node_lists:
        if graphs:
            graph = graphs.pop()
            yield from _stored_externally(graph.initializer)
            for sparse in graph.sparse_initializer:
                yield from _stored_externally((sparse.values, sparse.indices))
            node_lists.append(graph.node)
            continue
        for node in node_lists.pop():
            for attribute in node.attribute:
                if attribute.type in _HOLDING_TENSORS_OR_GRAPHS:
                    yield from _in_attribute(attribute, graphs)


#: ``AttributeProto.type`` of the attributes that may hold tensors or graphs (0: not stated, so looked into),
#: as plain ints, which every node's attributes are compared with.
_HOLDING_TENSORS_OR_GRAPHS = frozenset({0, *(int(kind) for kind in (
    AttrType.TENSOR, AttrType.GRAPH, AttrType.TENSORS, AttrType.GRAPHS, AttrType.SPARSE_TENSOR,
    AttrType.SPARSE_TENSORS))})



def _in_attribute(attribute: Any, graphs: list[Any]) -> Iterator[Any]:
    """The externally stored tensors ``attribute`` holds; its graphs are added to ``graphs``."""
    yield from _stored_externally([attribute.t] if attribute.HasField("t") else [])
    yield from _stored_externally(attribute.tensors)
    sparse_tensors = [*attribute.sparse_tensors, *([attribute.sparse_tensor] if attribute.HasField("sparse_tensor") else [])]
    for sparse in sparse_tensors:
        yield from _stored_externally((sparse.values, sparse.indices))
    graphs.extend([attribute.g] if attribute.HasField("g") else [])
    graphs.extend(attribute.graphs)


def _may_refer(source: str) -> bool:
    """Whether the model file ``source`` may have external data: every reference names its
    ``location``, and a file without those bytes has none (a scan of the file costs far less
    than visiting every node's attributes)."""
    import mmap

    try:
        with open(source, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return data.find(b"location") >= 0
    except (OSError, ValueError):  # not a file that can be mapped (a pipe, an empty file): look at the model
        return True


def _stored_externally(tensors: Any) -> Iterator[Any]:
    return (tensor for tensor in tensors if tensor.data_location == DataLocation.EXTERNAL)


def _location(tensor: Any) -> str:
    return next((entry.value for entry in tensor.external_data if entry.key == "location"), "")


def _folder(path: str) -> str:
    return os.path.dirname(os.path.abspath(path))


def _leaves_folder(location: str) -> bool:
    """Whether a relative location is absolute or climbs out of its folder (onnx refuses both)."""
    parts = location.replace("\\", "/").split("/")
    return os.path.isabs(location) or location.startswith(("/", "\\")) or ".." in parts or "\0" in location


def _check_inside(destination: str, folder: str, output: str) -> None:
    """Refuse a copy whose destination leads out of the output's folder through a link."""
    real_folder = os.path.realpath(folder)
    if os.path.commonpath([os.path.realpath(destination), real_folder]) != real_folder:
        raise UserError(f"cannot write {output}: its external data would go to {destination}, "
                        f"which leads outside {folder} through a link; nothing written")


def _holds(destination: str, data: str, output: str) -> bool:
    """Whether ``destination`` already is ``data`` or a copy of it; an error when another file is there."""
    if not os.path.lexists(destination):
        return False
    if os.path.isfile(destination) and (os.path.samefile(destination, data) or _same_bytes(destination, data)):
        return True
    raise UserError(f"cannot write {output}: its external data {data} would replace {destination}, "
                    "which holds something else; write the model into another folder; nothing written")


def _same_bytes(first: str, second: str) -> bool:
    if os.path.getsize(first) != os.path.getsize(second):
        return False
    with open(first, "rb") as one, open(second, "rb") as other:
        while True:
            block = one.read(_CHUNK)
            if block != other.read(_CHUNK):
                return False
            if not block:
                return True


def _chunks(path: str) -> Iterator[bytes]:
    with open(path, "rb") as handle:
        while block := handle.read(_CHUNK):
            yield block


__all__ = ["Relocation", "apply", "external_tensors", "plan"]
