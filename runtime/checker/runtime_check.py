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


__all__ = ["check_for_runtime"]
