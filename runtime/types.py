"""Element types and type strings (``tensor(float)``, ``seq(tensor(int64))``, ...).

Element type numbers are those of the ONNX wire format (TensorProto.DataType).
"""
from __future__ import annotations

from functools import lru_cache

from opspec.runtime.contract.elements import ELEMENT_TYPES, MAP_KEY_TYPES

_WRAPPERS = ("tensor", "sparse_tensor", "seq", "optional", "map")


class TypeStringError(ValueError):
    """A type string that is not well formed."""


@lru_cache(maxsize=None)
def normalize_type_string(text: str) -> str:
    """Check a type string and return its canonical spelling (``map(int64, float)``).

    Raises :class:`TypeStringError` when it is not well formed.
    """
    compact = text.replace(" ", "")
    _parse(compact)
    return compact.replace(",", ", ")


@lru_cache(maxsize=None)
def formal_type_string(text: str) -> str:
    """onnx's normalised spelling of a well-formed type string, as ``FormalParameter.types`` holds it.

    No spaces, and a map's bare value type becomes a tensor: ``map(int64, float)`` is
    ``map(int64,tensor(float))``.
    """
    compact = text.replace(" ", "")
    head, _, rest = compact.partition("(")
    inner = rest[:-1]
    if head == "map":
        key, _, value = inner.partition(",")
        value = f"tensor({value})" if value in ELEMENT_TYPES else formal_type_string(value)
        return f"map({key},{value})"
    if head in ("seq", "optional"):
        return f"{head}({formal_type_string(inner)})"
    return compact


def is_type_string(text: str) -> bool:
    """True for a type string such as ``tensor(float)``; False for a bare parameter name."""
    return "(" in text


def _parse(text: str) -> None:
    head, _, rest = text.partition("(")
    if head not in _WRAPPERS or not rest.endswith(")"):
        raise TypeStringError(
            f"{text!r} is not a type (expected tensor(...), sparse_tensor(...), seq(...), "
            "optional(...) or map(...))"
        )
    inner = rest[:-1]
    if head in ("tensor", "sparse_tensor"):
        if inner not in ELEMENT_TYPES:
            raise TypeStringError(f"unknown element type {inner!r} in {text!r}")
    elif head == "map":
        key, comma, value = inner.partition(",")
        if not comma or key not in MAP_KEY_TYPES:
            raise TypeStringError(f"{text!r}: a map needs a key type among {sorted(MAP_KEY_TYPES)}")
        if value not in ELEMENT_TYPES:  # a bare element type stands for a tensor of it
            _parse(value)
    else:
        _parse(inner)
