"""The inference API: ``infer_shapes`` (onnx's signature) and ``infer`` (with a report)."""
from __future__ import annotations

import importlib
import os
import warnings
from typing import Any, BinaryIO, Iterator

from opspec.runtime.contract.context import InferenceError
from opspec.runtime.inference.node_errors import NodeError
from opspec.runtime.inference.graph import GraphOutcome, infer_model, with_collector_paused
from opspec.runtime.inference.options import InferenceOptions
from opspec.runtime.ir import ModelSource, is_onnx_model, load_model, save_model
from opspec.runtime.ir.model_io import check_plausible
from opspec.runtime.op_set import OpSet


class InferenceResult:
    """The inferred model (in the kind it was given) and what inference found.

    ``errors``: node problems, in node order; ``notes``: problems found in graphs that may not
    run (an If's branch not taken, or either branch while the condition is unknown), which
    make the model fail only if that graph runs (see :class:`~.node_errors.Severity`); ``unknown_ops``: ``(domain, op_type)`` of
    nodes without a schema (``unknown_reasons`` says why, ``unknown_nodes`` lists the
    nodes, each as a :class:`NodeError` carrying the reason); ``values``: every value by
    name as ``(type, producer)``, where producer is the op type, ``(input)`` or
    ``(initializer)``; ``external_refusals``: why tensor data stored beside a model given
    by path was not read (outside the model's folder, unreadable, ...); ``implied_opsets``:
    onnxruntime domains the model uses without importing them, inferred at this version as
    onnxruntime runs them.
    """

    __slots__ = ("model", "errors", "notes", "unknown_reasons", "unknown_nodes", "node_count", "external_refusals",
                 "implied_opsets", "op_types", "added_values", "_unmerged", "_outcome", "_values")

    def __init__(self, model: Any, outcome: GraphOutcome) -> None:
        self.model = model
        self.errors: list[NodeError] = outcome.errors
        self.notes: list[NodeError] = outcome.notes
        self.unknown_reasons: dict[tuple[str, str], str] = outcome.unknown
        self.unknown_nodes: list[NodeError] = outcome.unknown_nodes
        self.node_count = outcome.node_count
        self.external_refusals: list[str] = []
        self.implied_opsets: dict[str, int] = outcome.implied
        #: The distinct ``(domain, op_type)`` of the main graph's nodes.
        self.op_types: list[tuple[str, str]] = outcome.op_types
        #: How many values inference added to the main graph's ``value_info``.
        self.added_values = outcome.added_values
        self._unmerged = outcome.unmerged_value_infos
        self._outcome: GraphOutcome | None = outcome
        self._values: dict[str, tuple[Any, str]] | None = None

    @property
    def unknown_ops(self) -> set[tuple[str, str]]:
        return set(self.unknown_reasons)

    @property
    def values(self) -> dict[str, tuple[Any, str]]:
        if self._values is None:
            self._values = self._tables().values()
        return self._values

    @property
    def value_count(self) -> int:
        """How many values there are (``len(values)``, without building them or visiting each)."""
        origins, producers = self._tables().origins, self._tables().producers
        return len(origins) + len(producers) - sum(1 for name in origins if name in producers)

    def iter_values(self) -> Iterator[tuple[str, Any, str]]:
        """``values`` one at a time, as ``(name, type, producer)``, without building the mapping."""
        return self._tables().iter_values()

    def type_of(self, name: str) -> Any:
        """The type inference gives value ``name`` (None when unknown), without building ``values``."""
        return self._tables().types.get(name)

    def is_produced(self, name: str) -> bool:
        """Whether a node of the main graph outputs ``name``."""
        return name in self._tables().producers

    def release_values(self) -> None:
        """Let go of the per-value tables (``values`` and the methods reading them fail afterwards):
        for a caller that has what it needs from them and now writes a large model."""
        self._outcome = None
        self._values = None

    def save(self, path: str | os.PathLike[str] | BinaryIO) -> None:
        """Write the inferred model to ``path`` whole or not at all, or to a binary stream (see
        :func:`save_model`), with the ``value_info`` entries inference left serialized (``merge_new=False``)."""
        save_model(self.model, path, self._unmerged)

    def _tables(self) -> GraphOutcome:
        if self._outcome is None:
            raise RuntimeError("the per-value tables of this result were released")
        return self._outcome

    @property
    def ok(self) -> bool:
        return not self.errors

    def __repr__(self) -> str:
        return (f"InferenceResult({self.node_count} nodes, {len(self.errors)} errors, "
                f"{len(self.unknown_reasons)} unknown ops)")


def infer(model: ModelSource, check_type: bool = False, strict_mode: bool = False,
          data_prop: bool = False, *, overridable_initializers: bool | None = None,
          op_set: OpSet | None = None) -> InferenceResult:
    """Infer types and shapes of every value; return the model and a report.

    Arguments mean what they mean for :func:`infer_shapes`. The input is never changed.
    ``overridable_initializers`` says whether an initializer that is also a graph input
    may be overridden, so that its data and dims are not used: None (the default) decides
    by the model's IR version (before IR 4 every initializer is listed as an input, so the
    listing says nothing and it counts as a constant, as onnx takes it); True is the
    strict reading for every model, False the loose one. ``op_set`` is where operators are
    looked up and which rules run (None: the installed op set).
    Raises :class:`~opspec.runtime.ir.ModelLoadError` for unreadable input and, with
    ``strict_mode``, :class:`InferenceError` at the first node problem.
    """
    options = InferenceOptions(check_type, strict_mode, data_prop, overridable_initializers=overridable_initializers)
    return _infer(model, options, op_set)


@with_collector_paused  # until the values inferred are let go: no collector pass over them
def infer_shapes(model: ModelSource, check_type: bool = False, strict_mode: bool = False,
                 data_prop: bool = False, *, op_set: OpSet | None = None) -> Any:
    """Like ``onnx.shape_inference.infer_shapes``: a copy of ``model`` with inferred types added.

    Accepts an ``onnx.ModelProto``, an opspec ``ModelProto``, a path or bytes and returns
    the same kind (a path gives an ``onnx.ModelProto`` when onnx is installed, an opspec
    ``ModelProto`` otherwise). Inferred types of intermediate
    values go to ``graph.value_info``; graph outputs get theirs. ``check_type`` checks
    inputs and attributes against each schema; ``strict_mode`` raises
    :class:`InferenceError` at the first problem (otherwise problems are ignored);
    ``data_prop`` propagates small integer tensors (shapes) through nodes. Each tensor whose
    data is stored beside the model and is not read gives an :class:`ExternalDataRefused` warning.
    ``op_set`` is where operators are looked up (None: the installed op set).
    """
    options = InferenceOptions(check_type, strict_mode, data_prop, report=False)
    inferred = _warned(_infer(model, options, op_set)).model
    return _onnx_message(inferred) if isinstance(model, (str, os.PathLike)) else inferred


@with_collector_paused
def infer_shapes_path(model_path: str | os.PathLike[str], output_path: str | os.PathLike[str] = "", check_type: bool = False,
                      strict_mode: bool = False, data_prop: bool = False) -> None:
    """Like ``onnx.shape_inference.infer_shapes_path``: infer the model file, write the result.

    The result goes to ``output_path``, or back to ``model_path`` when it is empty; it is
    written whole or not at all, so a failed write leaves the file as it was. Tensor data
    stored beside the model that is not read gives an :class:`ExternalDataRefused` warning.
    """
    loaded = load_model(model_path)
    # The model was read here, so it is inferred in place, and the new value_info entries
    # are written straight from their serialized form, after everything else is let go.
    options = InferenceOptions(check_type, strict_mode, data_prop, report=False, merge_new=False)
    result = _warned(infer_in_place(loaded.model, model_path, options))
    result.release_values()
    result.save(output_path or model_path)


class ExternalDataRefused(UserWarning):
    """Tensor data stored beside a model was not read (see ``InferenceResult.external_refusals``)."""


def _warned(result: InferenceResult) -> InferenceResult:
    """``result``, after a warning for each refused external tensor: the functions that
    return only a model report them this way, as ``infer`` does in its result."""
    for refusal in result.external_refusals:
        warnings.warn(refusal, ExternalDataRefused, stacklevel=3)
    return result


def _onnx_message(model: Any) -> Any:
    """``model`` as an ``onnx.ModelProto`` when onnx is installed, else unchanged."""
    try:
        onnx = importlib.import_module("onnx")
    except ImportError:
        return model
    return onnx.ModelProto.FromString(model.SerializeToString())


def _infer(model: ModelSource, options: InferenceOptions, op_set: OpSet | None) -> InferenceResult:
    if is_onnx_model(model):
        # A same-type copy is far cheaper than a round trip through bytes for models with
        # big weights; the engine only uses field names both message classes share.
        message: Any = model
        check_plausible(message, "<onnx.ModelProto>")
        copy = type(message)()
        copy.CopyFrom(message)
        finish = None
    else:
        loaded = load_model(model)
        copy, finish = loaded.model, loaded.to_source_kind
    path = model if isinstance(model, (str, os.PathLike)) else None
    result = infer_in_place(copy, path, options, op_set=op_set)
    if finish is not None:
        result.model = finish(copy)
    return result


def infer_in_place(model: Any, path: str | os.PathLike[str] | None = None,
                   options: InferenceOptions = InferenceOptions(), *, op_set: OpSet | None = None,
                   read_external: bool = True) -> InferenceResult:
    """Infer a model message that the caller owns as ``options`` say, writing results into it.

    ``path`` is the file it was read from, if any: small tensor data stored beside it is
    read (within its folder only; with ``read_external`` False, none is). With
    ``options.merge_new`` False the model lacks its new ``value_info`` entries until
    :meth:`InferenceResult.save` writes them with it. ``op_set`` is where operators are looked up
    (None: the installed op set).
    """
    from opspec.runtime.ir.external import ExternalData

    external = ExternalData(os.path.dirname(os.path.abspath(path)) if path is not None else None, read_external)
    outcome = infer_model(model, options, external=external, op_set=op_set)
    result = InferenceResult(model, outcome)
    result.external_refusals = external.refusals
    return result


__all__ = ["ExternalDataRefused", "InferenceError", "InferenceOptions", "InferenceResult", "NodeError", "infer", "infer_shapes", "infer_shapes_path"]
