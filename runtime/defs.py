"""The process-wide registry: the built-in operator sets plus any registered packages.

Mirrors ``onnx.defs``: ``get_schema``, ``has_schema`` (also as ``has``), ``get_all_schemas``,
``get_all_schemas_with_history``, ``get_function_ops``, ``schema_version_map``.
"""
from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType

from opspec.runtime.registry import DomainInfo, Registry, SchemaError

__all__ = [
    "AI_ONNX_PREVIEW_DOMAIN", "AI_ONNX_PREVIEW_TRAINING_DOMAIN", "ONNX_DOMAIN", "ONNX_ML_DOMAIN", "DomainInfo", "REGISTRY", "SchemaError", "domain_version_range", "get_all_schemas",
    "get_all_schemas_with_history", "get_function_ops", "get_schema", "has", "has_schema", "onnx_opset_version", "register",
    "schema_version_map",
]

#: Domain names as onnx.defs spells them (models write the default domain as "").
ONNX_DOMAIN = ""
ONNX_ML_DOMAIN = "ai.onnx.ml"
AI_ONNX_PREVIEW_DOMAIN = "ai.onnx.preview"
AI_ONNX_PREVIEW_TRAINING_DOMAIN = "ai.onnx.preview.training"

REGISTRY = Registry()
try:
    REGISTRY.add_package(importlib.import_module("opspec.generated"))
except (ImportError, AttributeError) as error:  # a fresh clone before `make generate`
    raise SchemaError(f"the built-in registry is missing or broken ({error}); run `make generate`") from None

get_schema = REGISTRY.get_schema
has_schema = REGISTRY.has_schema
has = REGISTRY.has_schema  # onnx.defs spells it both ways
get_function_ops = REGISTRY.get_function_ops
get_all_schemas = REGISTRY.get_all_schemas
get_all_schemas_with_history = REGISTRY.get_all_schemas_with_history
schema_version_map = REGISTRY.schema_version_map
domain_version_range = REGISTRY.domain_version_range


def onnx_opset_version() -> int:
    """The newest opset of the default (ai.onnx) domain."""
    return REGISTRY.domain_version_range("")[1]


def register(package: ModuleType | str | os.PathLike) -> list[DomainInfo]:
    """Add a registry package made by ``opspec generate --out DIR``.

    ``package`` is the imported module, its import name, or the folder itself (imported
    under the folder's name, with its parent put on ``sys.path``).
    """
    if isinstance(package, os.PathLike) or (isinstance(package, str) and os.path.isdir(package)):
        folder = os.path.abspath(os.fspath(package))
        parent, package = os.path.split(folder.rstrip(os.sep))
        if parent not in sys.path:
            sys.path.insert(0, parent)
    module = importlib.import_module(package) if isinstance(package, str) else package
    before = {info.name for info in REGISTRY.domains()}
    REGISTRY.add_package(module)
    return [info for info in REGISTRY.domains() if info.name not in before]
