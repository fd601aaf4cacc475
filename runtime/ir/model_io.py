"""Load and save ONNX models as :class:`opspec.generated.opspec_ir_pb2.ModelProto`.

Accepted sources are a file path, serialized bytes, one of our ``ModelProto``
messages, or an ``onnx.ModelProto``. The ``onnx`` package is never imported:
its messages are recognised by their protobuf type name and converted through
their (wire-identical) serialized form.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Union, overload

from google.protobuf.message import DecodeError, Message

from opspec.generated.opspec_ir_pb2 import ModelProto
from opspec.runtime.atomic_file import write_output
from opspec.runtime.ir.codes import WireType
from opspec.runtime.ir.varint import encode_varint, read_varint

__all__ = ["LoadedModel", "ModelLoadError", "ModelSource", "SourceKind", "check_plausible", "load_model", "save_model",
           "with_graph_fields"]

#: Anything :func:`load_model` accepts (``Message`` stands for ``onnx.ModelProto``).
ModelSource = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, ModelProto, Message]

#: Protobuf full name of the foreign model message we interoperate with.
_ONNX_MODEL_NAME = "onnx.ModelProto"

#: Highest IR version accepted from serialized input; anything above is
#: taken as a sign that the bytes are not a model at all.
_MAX_PLAUSIBLE_IR_VERSION = 1000

#: ONNX requires ``opset_import`` from this IR version on.
_OPSET_IMPORT_REQUIRED_SINCE = 3


class SourceKind:
    """Names for the kinds of source :func:`load_model` accepts."""

    PATH = "path"
    BYTES = "bytes"
    OPSPEC = "opspec"
    ONNX = "onnx"


class ModelLoadError(Exception):
    """A model could not be read or is not an ONNX model."""


@dataclass(frozen=True)
class LoadedModel:
    """A freshly parsed model and how to hand results back to the caller.

    ``model`` is always a private copy: changing it never affects the object,
    bytes or file it was loaded from.
    """

    model: ModelProto
    kind: str
    #: Where the model came from, for messages (a path or a short description).
    origin: str
    #: The caller's message class, kept only for ``onnx`` sources.
    source_type: type[Message] | None = None

    def to_source_kind(self, model: ModelProto) -> Any:
        """Return ``model`` in the kind of object the caller passed in.

        ``onnx.ModelProto`` for onnx input, ``bytes`` for bytes-like input, and
        our ``ModelProto`` (unchanged) for paths and our own messages.
        """
        if self.kind == SourceKind.ONNX:
            assert self.source_type is not None
            return self.source_type.FromString(model.SerializeToString())
        if self.kind == SourceKind.BYTES:
            return model.SerializeToString()
        return model


def load_model(source: ModelSource) -> LoadedModel:
    """Load a model from a path, bytes, our ``ModelProto`` or an ``onnx.ModelProto``.

    Serialized input (paths and bytes) is sanity-checked, since protobuf
    happily parses many non-model byte strings. Message input is trusted and
    only copied. Every failure raises :class:`ModelLoadError`.
    """
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        data = _read_file(path)
        return LoadedModel(_parse(data, f"'{path}'"), SourceKind.PATH, str(path))
    if isinstance(source, (bytes, bytearray, memoryview)):
        origin = f"<{type(source).__name__} of length {len(source)}>"
        return LoadedModel(_parse(source, origin), SourceKind.BYTES, origin)
    if isinstance(source, ModelProto):
        model = ModelProto()
        model.CopyFrom(source)
        check_plausible(model, "<ModelProto>")
        return LoadedModel(model, SourceKind.OPSPEC, "<ModelProto>")
    if is_onnx_model(source):
        origin = "<onnx.ModelProto>"
        try:
            data = source.SerializeToString()
        except Exception as exc:  # e.g. EncodeError for messages over 2 GB
            raise ModelLoadError(f"cannot serialize {origin}: {exc}") from None
        return LoadedModel(_parse(data, origin), SourceKind.ONNX, origin, type(source))
    raise ModelLoadError(
        f"unsupported model source of type {type(source).__module__}.{type(source).__qualname__}; "
        "expected a path, bytes, opspec ModelProto or onnx.ModelProto"
    )


#: What :func:`save_model` serializes.
SavedModel = Union[ModelProto, Message, bytes, bytearray, memoryview]


@overload
def save_model(model: SavedModel, path: str | os.PathLike[str], graph_fields: bytes = b"") -> Path: ...
@overload
def save_model(model: SavedModel, path: BinaryIO, graph_fields: bytes = b"") -> None: ...
def save_model(model: SavedModel, path: str | os.PathLike[str] | BinaryIO, graph_fields: bytes = b"") -> Path | None:
    """Serialize ``model`` (ours, onnx's, or already bytes) to ``path``; return the path.

    ``path`` may also be a binary stream open for writing (standard output): the bytes are
    written to it as they are, and None is returned.

    ``graph_fields`` are serialized ``GraphProto`` fields the written graph gets besides its
    own, as ``model.graph.MergeFromString(graph_fields)`` would add them, without building
    them as messages (for results written once and never read back).
    The file is replaced in one step (see :func:`opspec.runtime.atomic_file.write_output`): on any
    failure it is exactly as before, so a model may be written over its own input; a device,
    a pipe or an open descriptor is written as it is, and a symbolic link is kept while the
    file it points at is replaced.
    File system errors propagate as :class:`OSError`.
    """
    data = bytes(model) if isinstance(model, (bytes, bytearray, memoryview)) else model.SerializeToString()
    pieces = with_graph_fields(data, graph_fields) if graph_fields else [data]
    if isinstance(path, (str, os.PathLike)):
        return write_output(path, pieces)
    for piece in pieces:
        path.write(piece)
    return None


#: ``ModelProto.graph``'s field number (a length-delimited field).
_GRAPH_FIELD = 7
#: Bytes each wire type of a field takes after its key, where that is fixed.
_FIXED_WIDTH: dict[int, int] = {WireType.FIXED64: 8, WireType.FIXED32: 4}


def with_graph_fields(model: bytes, fields: bytes) -> list[bytes | memoryview]:
    """The pieces of ``model`` (a serialized ``ModelProto`` with a graph) with ``fields``
    appended to its graph: what serializing it after ``graph.MergeFromString(fields)`` gives,
    the appended repeated entries last in the graph. Only the model's own top-level fields
    are read, so this costs no more than copying the bytes."""
    view = memoryview(model)
    position, size = 0, len(model)
    while position < size:
        start = position
        key, position = read_varint(view, position)
        number, wire_type = key >> 3, key & 7
        if wire_type == WireType.LENGTH_DELIMITED:
            length, position = read_varint(view, position)
            if number == _GRAPH_FIELD:
                end = position + length
                header = encode_varint(key) + encode_varint(length + len(fields))
                return [view[:start], header, view[position:end], fields, view[end:]]
            position += length
        elif wire_type == WireType.VARINT:
            position = read_varint(view, position)[1]
        elif wire_type in _FIXED_WIDTH:
            position += _FIXED_WIDTH[wire_type]
        else:
            break  # groups: not in any model message
    raise ValueError("the serialized model has no graph to add fields to")


def is_onnx_model(obj: object) -> bool:
    """True for an ``onnx.ModelProto``, recognised by its protobuf type without importing onnx."""
    descriptor = getattr(type(obj), "DESCRIPTOR", None)
    return (
        getattr(descriptor, "full_name", None) == _ONNX_MODEL_NAME
        and callable(getattr(obj, "SerializeToString", None))
        and isinstance(obj, Message)
    )


def _read_file(path: Path) -> bytes:
    where = f"'{path}'"
    try:
        if path.is_dir():
            raise ModelLoadError(f"cannot load model {where}: it is a directory")
        data = path.read_bytes()
    except FileNotFoundError:
        raise ModelLoadError(f"cannot load model {where}: no such file") from None
    except OSError as exc:
        raise ModelLoadError(f"cannot load model {where}: {exc.strerror or exc}") from None
    except ValueError as exc:  # e.g. an embedded NUL in the path
        raise ModelLoadError(f"cannot load model {where}: invalid path ({exc})") from None
    if not data:
        raise ModelLoadError(f"cannot load model {where}: the file is empty")
    return data


def _parse(data: bytes | bytearray | memoryview, where: str) -> ModelProto:
    if len(data) == 0:
        raise ModelLoadError(f"cannot load model {where}: no data (empty input)")
    model = ModelProto()
    try:
        model.ParseFromString(data)  # type: ignore[arg-type]  # protobuf reads any buffer; its stubs say bytes
    except (DecodeError, ValueError, TypeError, RuntimeError) as exc:
        raise ModelLoadError(
            f"cannot load model {where}: truncated, corrupt or not an ONNX model ({exc})"
        ) from None
    check_plausible(model, where)
    return model


def check_plausible(model: Any, where: str) -> None:
    """Raise :class:`ModelLoadError` when ``model`` (ours or onnx's) lacks what every model has.

    Every kind of source goes through this one check, so a path, its bytes and the
    message read from them get the same answer.
    """
    problem = _implausibility(model)
    if problem:
        raise ModelLoadError(f"cannot load model {where}: not an ONNX model ({problem})")


def _implausibility(model: Any) -> str | None:
    """Why a successfully parsed message does not look like a model, if it doesn't."""
    if not model.HasField("ir_version") or model.ir_version <= 0:
        return "no ir_version"
    if model.ir_version > _MAX_PLAUSIBLE_IR_VERSION:
        return f"implausible ir_version {model.ir_version}"
    if not model.HasField("graph") and not model.functions:
        return "no graph"
    if model.ir_version >= _OPSET_IMPORT_REQUIRED_SINCE and not model.opset_import:
        return "no opset_import (the file may be truncated)"
    return None
