"""Operations on whole shapes: a ``tuple`` of dims (known rank) or ``None`` (unknown rank)."""
from __future__ import annotations

from typing import Optional, Tuple, overload

from .dims import Dim, mul_dim, relax_dim
from .errors import ShapeError
from .render import format_shape

__all__ = [
    "Shape", "merge_shapes", "relax_shapes", "with_rank", "with_rank_at_least",
    "with_rank_at_most", "subshape", "concatenate", "replace_dim", "num_elements", "rank",
]

Shape = Optional[Tuple[Dim, ...]]


@overload
def merge_shapes(a: Tuple[Dim, ...], b: Shape) -> Tuple[Dim, ...]: ...
@overload
def merge_shapes(a: Shape, b: Shape) -> Shape: ...
def merge_shapes(a: Shape, b: Shape) -> Shape:
    """Unify two shapes that must be equal, dim by dim (see ``merge_dim``)."""
    if a is None:
        return b
    if b is None or a is b:
        return a
    if len(a) != len(b):
        raise ShapeError(
            f"cannot merge shapes {format_shape(a)} and {format_shape(b)}: "
            f"ranks {len(a)} and {len(b)} differ"
        )
    if a == b:
        return a
    out: list[Dim] = []
    append = out.append
    for x, y in zip(a, b):  # merge_dim, inlined
        if x is y or y is None:
            append(x)
        elif type(x) is int:
            if type(y) is int and x != y:
                i = len(out)
                raise ShapeError(
                    f"cannot merge shapes {format_shape(a)} and {format_shape(b)}: "
                    f"dims {x} and {y} differ at axis {i}"
                )
            append(x)
        elif x is None or type(y) is int:
            append(y)
        else:
            append(x)
    return tuple(out)


def relax_shapes(a: Shape, b: Shape) -> Shape:
    """The most specific shape covering both; unknown rank when the ranks differ."""
    if a is None or b is None or len(a) != len(b):
        return None
    if a is b or a == b:
        return a
    return tuple([relax_dim(x, y) for x, y in zip(a, b)])


def rank(s: Shape) -> Optional[int]:
    """The rank, or ``None`` when unknown."""
    return None if s is None else len(s)


def with_rank(s: Shape, r: int) -> Tuple[Dim, ...]:
    """``s`` checked to have rank ``r``; an unknown rank becomes ``r`` unknown dims."""
    if s is None:
        return (None,) * r
    if len(s) != r:
        raise ShapeError(f"shape {format_shape(s)} must have rank {r}")
    return s


def with_rank_at_least(s: Shape, r: int) -> Shape:
    """``s`` checked to have rank ``>= r`` (an unknown rank passes unchanged)."""
    if s is not None and len(s) < r:
        raise ShapeError(f"shape {format_shape(s)} must have rank at least {r}")
    return s


def with_rank_at_most(s: Shape, r: int) -> Shape:
    """``s`` checked to have rank ``<= r`` (an unknown rank passes unchanged)."""
    if s is not None and len(s) > r:
        raise ShapeError(f"shape {format_shape(s)} must have rank at most {r}")
    return s


def subshape(
    s: Shape, start: Optional[int] = 0, end: Optional[int] = None, stride: int = 1
) -> Shape:
    """``s[start:end:stride]`` with Python slicing rules; unknown rank stays unknown."""
    if s is None:
        return None
    if stride == 0:
        raise ShapeError(f"cannot take a subshape of {format_shape(s)} with stride 0")
    return s[start:end:stride]


def concatenate(a: Shape, b: Shape) -> Shape:
    """The dims of ``a`` followed by those of ``b``; unknown if either rank is."""
    if a is None or b is None:
        return None
    return a + b


def replace_dim(s: Shape, index: int, dim: Dim) -> Shape:
    """``s`` with the dim at ``index`` (negative counts from the end) set to ``dim``."""
    if s is None:
        return None
    n = len(s)
    i = index + n if index < 0 else index
    if not 0 <= i < n:
        raise ShapeError(f"axis {index} is out of range for shape {format_shape(s)}")
    return s[:i] + (dim,) + s[i + 1:]


def num_elements(s: Shape) -> Dim:
    """The product of the dims (``1`` for a scalar); symbolic when possible, else ``None``."""
    if s is None:
        return None
    total = 1
    for d in s:
        if type(d) is not int:
            break
        total *= d
    else:
        return total
    if 0 in s:
        return 0
    product: Dim = 1
    for d in s:
        product = mul_dim(product, d)
        if product is None:
            return None
    return product
