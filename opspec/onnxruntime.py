"""onnxruntime's operator set, layered over the standard one, with the functions of ``opspec``.

``opspec.onnxruntime.get_schema("Attention", domain="com.microsoft")`` looks up an operator
of onnxruntime's own domains (``com.microsoft``, ``com.microsoft.nchwc``,
``com.ms.internal.nhwc``); lookups in the standard domains answer as ``opspec`` does, plus
the versions onnxruntime adds to them (``LayerNormalization`` version 1, the deprecated
``Affine``, ...). ``kernels("Add", 14, provider="cpu")`` lists the kernels onnxruntime
registers for an op version, with their types (:mod:`opspec.runtime.kernels`);
``will_it_run(model)`` predicts whether onnxruntime's CPU provider loads and runs a model
(``.will_run``, ``.problems``), as ``opspec check --runtime onnxruntime`` does;
``placement(model, provider="cuda")`` says where each node runs on a provider that falls back to
the CPU, and which values are copied between devices (:mod:`opspec.runtime.checker.placement`). ``opspec`` itself stays exactly onnx's set. Inference
(``opspec.infer_shapes``, ``opspec infer``) uses this registry. Nothing is loaded until
first used.
"""
from __future__ import annotations

from typing import Any

from opspec.runtime.registry import Registry, SchemaError

__all__ = ["REGISTRY", "SchemaError", "domain_version_range", "get_all_schemas", "get_all_schemas_with_history",
           "get_function_ops", "get_schema", "has", "has_schema", "kernels", "placement", "schema_version_map",
           "will_it_run"]

_FUNCTIONS = {"get_schema", "has_schema", "get_function_ops", "get_all_schemas", "get_all_schemas_with_history",
              "schema_version_map", "domain_version_range"}


def _registry() -> Registry:
    from opspec.runtime import defs

    return defs.INFERENCE


def __getattr__(name: str) -> Any:
    if name == "REGISTRY":
        value: Any = _registry()
    elif name == "has":
        value = _registry().has_schema
    elif name == "kernels":
        from opspec.runtime.kernels import kernels

        value = kernels
    elif name == "will_it_run":
        from opspec.runtime.checker.runtime_check import check_for_runtime

        value = check_for_runtime
    elif name == "placement":
        from opspec.runtime.checker.runtime_check import placement

        value = placement
    elif name in _FUNCTIONS:
        value = getattr(_registry(), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
