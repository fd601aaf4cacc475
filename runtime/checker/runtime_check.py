"""``opspec check --runtime`` from the API: the whole check of a model with the prediction for a
runtime's provider (kept apart from :mod:`.runtime_support`, which :mod:`.whole` itself uses)."""
from __future__ import annotations

import os
from typing import Any

from opspec.runtime.checker.runtime_support import DEFAULT_PROVIDER, RUNTIME, parse_target
from opspec.runtime.checker.whole import check_model
from opspec.runtime.ir import load_model


def check_for_runtime(model: Any, provider: str = DEFAULT_PROVIDER) -> Any:
    """``opspec check --runtime onnxruntime:PROVIDER`` from the API: ``model`` is a path, bytes, an
    ``onnx.ModelProto`` or ours; the :class:`~.whole.CheckResult` says ``will_run`` and lists every
    problem, the prediction's among them. Raises ValueError for a provider without a table."""
    target = parse_target(f"{RUNTIME}:{provider}")
    path = model if isinstance(model, (str, os.PathLike)) else None
    return check_model(load_model(model).model, path, target)


def placement(model: Any, provider: str = "cuda") -> Any:
    """Where each node of ``model`` runs on ``provider`` with the CPU as fallback, and the copies
    between devices (a :class:`~.placement.Placement`); raises ValueError for the CPU provider
    itself or a provider without a table."""
    if provider == DEFAULT_PROVIDER:
        raise ValueError(f"the {DEFAULT_PROVIDER} provider runs every node itself: placement needs another provider")
    return check_for_runtime(model, provider).placement


__all__ = ["check_for_runtime", "placement"]
