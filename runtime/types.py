"""Element types and type strings (``tensor(float)``, ``seq(tensor(int64))``, ...).

Element type numbers are those of the ONNX wire format (TensorProto.DataType). Every
reader of a type string goes through :func:`parse_type_string` (or, for the one step of
telling a wrapper from its content, :func:`split_type_string`).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from opspec.runtime.contract.elements import ELEMENT_TYPES, MAP_KEY_TYPES

_WRAPPERS = ("tensor", "sparse_tensor", "seq", "optional", "map")
#: The ``head`` of a term that is a bare element type (a map's value written ``map(int64, float)``).
BARE = ""


class TypeStringError(ValueError):
    """A type string that is not well formed."""


@dataclass(frozen=True)
class TypeTerm:
    """A parsed type string.

    ``head`` is ``tensor``, ``sparse_tensor``, ``seq``, ``optional``, ``map`` or :data:`BARE`;
    ``elem`` names the element type of a tensor (or bare term) and the key type of a map;
    ``inner`` is the element of a ``seq``/``optional`` and the value of a ``map``.
    """

    head: str
    elem: str = ""
    inner: TypeTerm | None = None

    def spelling(self, formal: bool = False) -> str:
        """The canonical spelling (``map(int64, float)``); ``formal`` gives onnx's
        (``map(int64,tensor(float))``: no spaces, a map's bare value as a tensor)."""
        if self.head == BARE:
            return f"tensor({self.elem})" if formal else self.elem
        if self.inner is None:
            return f"{self.head}({self.elem})"
        inner = self.inner.spelling(formal)
        if self.head == "map":
            return f"map({self.elem},{inner})" if formal else f"map({self.elem}, {inner})"
        return f"{self.head}({inner})"


def split_type_string(text: str) -> tuple[str, str] | None:
    """``("seq", "tensor(float)")`` for ``seq(tensor(float))``: a wrapper and its content, or
    None when ``text`` is not of the form ``head(...)`` (spaces are not removed)."""
    head, bracket, rest = text.partition("(")
    if not bracket or not rest.endswith(")"):
        return None
    return head, rest[:-1]


@lru_cache(maxsize=None)
def parse_type_string(text: str) -> TypeTerm:
    """The term a type string denotes; :class:`TypeStringError` when it is not well formed."""
    return _parse(text.replace(" ", ""), text)


def _parse(compact: str, text: str) -> TypeTerm:
    split = split_type_string(compact)
    if split is None or split[0] not in _WRAPPERS:
        raise TypeStringError(
            f"{compact!r} is not a type (expected tensor(...), sparse_tensor(...), seq(...), "
            "optional(...) or map(...))"
        )
    head, inner = split
    if head in ("tensor", "sparse_tensor"):
        if inner not in ELEMENT_TYPES:
            raise TypeStringError(f"unknown element type {inner!r} in {compact!r}")
        return TypeTerm(head, inner)
    if head == "map":
        key, comma, value = inner.partition(",")
        if not comma or key not in MAP_KEY_TYPES:
            raise TypeStringError(f"{compact!r}: a map needs a key type among {sorted(MAP_KEY_TYPES)}")
        # a bare element type stands for a tensor of it
        return TypeTerm(head, key, TypeTerm(BARE, value) if value in ELEMENT_TYPES else _parse(value, text))
    return TypeTerm(head, "", _parse(inner, text))


def normalize_type_string(text: str) -> str:
    """Check a type string and return its canonical spelling (``map(int64, float)``).

    Raises :class:`TypeStringError` when it is not well formed.
    """
    return parse_type_string(text).spelling()


def formal_type_string(text: str) -> str:
    """onnx's normalised spelling of a type string, as ``FormalParameter.types`` holds it.

    No spaces, and a map's bare value type becomes a tensor: ``map(int64, float)`` is
    ``map(int64,tensor(float))``. Text that is not well formed is returned without spaces.
    """
    try:
        return parse_type_string(text).spelling(formal=True)
    except TypeStringError:
        return text.replace(" ", "")


def is_type_string(text: str) -> bool:
    """True for a type string such as ``tensor(float)``; False for a bare parameter name."""
    return "(" in text
