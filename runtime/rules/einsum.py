"""The einsum rule: output dims read off the equation's subscripts."""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext, attribute, rule
from opspec.runtime.shape import Dim, ShapeError, broadcast_shapes, format_shape


def _terms(ctx: InferenceContext, equation: str) -> tuple[list[str], str | None]:
    text = equation.replace(" ", "")
    inputs, arrow, output = text.partition("->")
    terms = inputs.split(",")
    for term in terms + ([output] if arrow else []):
        letters = term.replace("...", "")
        if not all(c.isalpha() for c in letters) or term.count("...") > 1:
            ctx.fail(f"equation {equation!r} has a malformed term {term!r}")
    return terms, output if arrow else None


def _combine(ctx: InferenceContext, letter: str, a: Dim, b: Dim) -> Dim:
    """The size of a subscript seen with sizes ``a`` and ``b`` (a size of 1 may stretch)."""
    if a == 1:
        return b
    if b == 1:
        return a
    if a is None or b is None:  # the unknown one is the known size or 1; only a size that is surely not 1 wins
        known = b if a is None else a
        return known if type(known) is int else None
    if type(a) is int and type(b) is int:
        if a != b:
            ctx.fail(f"subscript {letter!r} has sizes {a} and {b}")
        return a
    return a if a == b else None


@rule("einsum", "Each output dim is the dim its subscript letter has in the inputs; '...' broadcasts.",
      equation=attribute(required=True))
def einsum(ctx: InferenceContext) -> None:
    equation = ctx.attr("equation")
    if not isinstance(equation, str):
        ctx.fail("attribute 'equation' is required")
    terms, output = _terms(ctx, equation)
    if len(terms) != ctx.input_count:
        ctx.fail(f"equation {equation!r} has {len(terms)} inputs but the node has {ctx.input_count}")
    dims: dict[str, Dim] = {}
    ellipsis: list = []
    known = True
    for index, term in enumerate(terms):
        shape = ctx.input_shape(index)
        if shape is None:
            known = False
            continue
        letters = term.replace("...", "")
        if ("..." in term and len(shape) < len(letters)) or ("..." not in term and len(shape) != len(letters)):
            ctx.fail(f"input {index} {format_shape(shape)} does not fit the term {term!r}")
        extra = len(shape) - len(letters)
        head, _, tail = term.partition("...")
        pairs = list(zip(head, shape[:len(head)])) + list(zip(tail, shape[len(shape) - len(tail):]))
        if "..." in term:
            ellipsis.append(shape[len(head):len(head) + extra])
        for letter, dim in pairs:
            dims[letter] = _combine(ctx, letter, dims[letter], dim) if letter in dims else dim
    if output is None:
        counts: dict[str, int] = {}
        for term in terms:
            for letter in term.replace("...", ""):
                counts[letter] = counts.get(letter, 0) + 1
        output = ("..." if any("..." in term for term in terms) else "") + "".join(
            sorted(letter for letter, count in counts.items() if count == 1))
    if not known:
        ctx.set_output_shape("Output", None)
        return
    try:
        broadcast = broadcast_shapes(*ellipsis) if ellipsis else ()
    except ShapeError as error:
        ctx.fail(f"the '...' dims do not broadcast: {error}")
    if broadcast is None:
        ctx.set_output_shape("Output", None)
        return
    head, _, tail = output.partition("...")
    out = tuple(dims.get(c) for c in head) + (tuple(broadcast) if "..." in output else ()) + \
        tuple(dims.get(c) for c in tail)
    ctx.set_output_shape("Output", out)
