"""The options of one inference run, as one value."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class InferenceOptions:
    """How a model is inferred and what the run gives back.

    ``check_type`` checks inputs and attributes against each schema; ``strict_mode`` raises
    :class:`InferenceError` at the first node problem; ``data_prop`` propagates small integer
    tensors (shapes) through nodes. ``report`` also records each node's op and the producer of
    each value (for :meth:`GraphOutcome.values`). ``overridable_initializers`` says whether an
    initializer that is also a graph input may be overridden, so that its data and dims are not
    used: None follows the model's IR version (see :func:`~.graph.infer_model`). ``write_back``
    False leaves the model as it is (for a check that only wants the problems); ``merge_new``
    False leaves the main graph's new ``value_info`` entries serialized instead of parsing them
    into the model (for a caller that only writes the model out).
    """

    check_type: bool = False
    strict_mode: bool = False
    data_prop: bool = False
    report: bool = True
    overridable_initializers: bool | None = None
    write_back: bool = True
    merge_new: bool = True


__all__ = ["InferenceOptions"]
