"""opspec: declarative operator schemas and type/shape inference for ONNX-style op sets.

Schema lookups mirror ``onnx.defs``::

    >>> import opspec
    >>> opspec.get_schema("Add", 13).since_version
    13

Names are loaded on first use, so ``import opspec`` stays cheap and the compiler
(``opspec.codegen``) never depends on the generated registry being present.
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

TYPE_CHECKING = False  # True for type checkers only; importing typing would slow ``import opspec``
if TYPE_CHECKING:  # what the lazy names are, for type checkers
    from opspec.runtime.defs import (
        AI_ONNX_PREVIEW_DOMAIN, AI_ONNX_PREVIEW_TRAINING_DOMAIN, ONNX_DOMAIN, ONNX_ML_DOMAIN, domain_version_range,
        get_all_schemas, get_all_schemas_with_history, get_function_ops, get_schema, has, has_schema,
        onnx_ml_opset_version, onnx_opset_version, register, schema_version_map,
    )
    from opspec.runtime.convert.api import ConversionError, convert_version
    from opspec.runtime.cost import CostReport, cost
    from opspec.runtime.inference.api import (
        InferenceError, InferenceResult, NodeError, infer, infer_shapes, infer_shapes_path,
    )
    from opspec.runtime.inference.single_node import infer_node_outputs
    from opspec.runtime.ir import ModelLoadError
    from opspec.runtime.registry import SchemaError
    from opspec.runtime.schema import OpSchema
    from opspec.validation import ValidationError, check_model
    from opspec.batch.api import ScanResult, scan

#: Public name -> module that defines it.
_EXPORTS = {
    "SchemaError": "opspec.runtime.registry",
    "AI_ONNX_PREVIEW_DOMAIN": "opspec.runtime.defs",
    "AI_ONNX_PREVIEW_TRAINING_DOMAIN": "opspec.runtime.defs",
    "ONNX_DOMAIN": "opspec.runtime.defs",
    "ONNX_ML_DOMAIN": "opspec.runtime.defs",
    "domain_version_range": "opspec.runtime.defs",
    "get_all_schemas": "opspec.runtime.defs",
    "get_all_schemas_with_history": "opspec.runtime.defs",
    "get_function_ops": "opspec.runtime.defs",
    "get_schema": "opspec.runtime.defs",
    "has": "opspec.runtime.defs",
    "has_schema": "opspec.runtime.defs",
    "onnx_ml_opset_version": "opspec.runtime.defs",
    "onnx_opset_version": "opspec.runtime.defs",
    "register": "opspec.runtime.defs",
    "schema_version_map": "opspec.runtime.defs",
    "OpSchema": "opspec.runtime.schema",
    "convert_version": "opspec.runtime.convert.api",
    "cost": "opspec.runtime.cost",
    "CostReport": "opspec.runtime.cost",
    "ConversionError": "opspec.runtime.convert.api",
    "infer_shapes": "opspec.runtime.inference.api",
    "infer_shapes_path": "opspec.runtime.inference.api",
    "infer_node_outputs": "opspec.runtime.inference.single_node",
    "infer": "opspec.runtime.inference.api",
    "InferenceError": "opspec.runtime.inference.api",
    "InferenceResult": "opspec.runtime.inference.api",
    "NodeError": "opspec.runtime.inference.api",
    "ModelLoadError": "opspec.runtime.ir",
    "check_model": "opspec.validation",
    "ValidationError": "opspec.validation",
    "scan": "opspec.batch.api",
    "ScanResult": "opspec.batch.api",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'opspec' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
