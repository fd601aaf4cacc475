"""Opset conversion of models, computed from the versioned operator definitions."""
from opspec.runtime.convert.api import ConversionError, ConversionResult, NodeRefusal, convert, convert_version

__all__ = ["ConversionError", "ConversionResult", "NodeRefusal", "convert", "convert_version"]
