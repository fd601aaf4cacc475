"""Shape algebra for type/shape inference, after TensorFlow's ``InferenceContext``.

Values are plain and immutable so inference stays fast in pure Python:

* a dim is an ``int >= 0`` (known), ``None`` (unknown) or a ``Sym`` (symbolic expression);
* a shape is a ``tuple`` of dims (known rank) or ``None`` (unknown rank).

Incompatible operands raise ``ShapeError`` (a ``ValueError``) quoting them.
"""
from .broadcast import broadcast_shapes, unidirectional_broadcast
from .dims import (
    Dim,
    add_dim,
    ceil_div_dim,
    div_dim,
    max_dim,
    merge_dim,
    min_dim,
    mul_dim,
    relax_dim,
    sub_dim,
)
from .errors import ShapeError
from .parse import parse_dim
from .render import format_dim, format_shape
from .shapes import (
    Shape,
    concatenate,
    merge_shapes,
    num_elements,
    rank,
    relax_shapes,
    replace_dim,
    subshape,
    with_rank,
    with_rank_at_least,
    with_rank_at_most,
)
from .sym import Sym
from .symbols import SymbolTable

__all__ = [
    "Dim", "Shape", "Sym", "ShapeError", "SymbolTable",
    "merge_dim", "relax_dim", "add_dim", "sub_dim", "mul_dim", "div_dim", "ceil_div_dim",
    "min_dim", "max_dim",
    "merge_shapes", "relax_shapes", "rank", "with_rank", "with_rank_at_least",
    "with_rank_at_most", "subshape", "concatenate", "replace_dim", "num_elements",
    "broadcast_shapes", "unidirectional_broadcast",
    "format_dim", "format_shape", "parse_dim",
]
