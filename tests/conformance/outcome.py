"""How one inferred output type compares with the real output of a conformance case.

- EXACT: element type and every dimension known and right;
- PARTIAL: nothing contradicts the array, but something is unknown or symbolic;
- MISSING: no type inferred;
- WRONG: the element type, the rank or a known dimension contradicts the array;
- ERROR: inference itself failed (a whole-case outcome only).
"""
from __future__ import annotations

from typing import Any

ORDER = ("EXACT", "PARTIAL", "MISSING", "WRONG", "ERROR")
RANK = {status: index for index, status in enumerate(ORDER)}


def expected_type(output: Any) -> tuple[int | None, tuple[int, ...]] | None:
    """(element type, shape) of a real tensor output (numpy value or TensorProto); else None."""
    import numpy as np
    from onnx import helper

    if isinstance(output, np.generic):
        output = np.asarray(output)
    if isinstance(output, np.ndarray):
        try:
            return helper.np_dtype_to_tensor_dtype(output.dtype), output.shape
        except (KeyError, TypeError, ValueError):
            return None, output.shape
    if hasattr(output, "data_type") and hasattr(output, "dims"):
        return output.data_type, tuple(output.dims)
    return None


def output_status(value_type: Any, output: Any) -> str:
    """Classify one inferred output type against the real output (tensor, sequence or optional)."""
    kind = value_type.WhichOneof("value")
    if kind is None:
        return "MISSING"
    if kind == "optional_type":
        return output_status(value_type.optional_type.elem_type, output) if output is not None else "EXACT"
    if isinstance(output, list):
        if kind != "sequence_type":
            return "WRONG"
        statuses = [output_status(value_type.sequence_type.elem_type, item) for item in output]
        return case_status(statuses) if statuses else "EXACT"
    expected = expected_type(output)
    if expected is None:
        return "MISSING"
    if kind != "tensor_type":
        return "WRONG"
    return tensor_status(value_type.tensor_type, *expected)


def tensor_status(tensor: Any, elem: int | None, shape: tuple[int, ...]) -> str:
    """Classify an inferred tensor type against a real element type and shape."""
    if tensor.elem_type == 0:
        return "MISSING"
    if elem is not None and tensor.elem_type != elem:
        return "WRONG"
    if not tensor.HasField("shape"):
        return "PARTIAL"
    dims = tensor.shape.dim
    if len(dims) != len(shape):
        return "WRONG"
    exact = True
    for dim, size in zip(dims, shape):
        if dim.HasField("dim_value"):
            if dim.dim_value != size:
                return "WRONG"
        else:
            exact = False
    return "EXACT" if exact else "PARTIAL"


def case_status(statuses: list[str]) -> str:
    """One outcome for a case from those of its outputs: the worst wins, all-MISSING stays MISSING."""
    if "WRONG" in statuses:
        return "WRONG"
    if all(s == "EXACT" for s in statuses):
        return "EXACT"
    if all(s == "MISSING" for s in statuses):
        return "MISSING"
    return "PARTIAL"


__all__ = ["ORDER", "RANK", "case_status", "expected_type", "output_status", "tensor_status"]
