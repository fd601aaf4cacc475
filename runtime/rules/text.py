"""Rules for string ops whose shape depends on their attributes: StringNormalizer."""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext, attribute, rule
from opspec.runtime.shape import format_shape


@rule("string_normalizer", "[C] or [1, C] strings; removing stopwords leaves a number of them only data tells.",
      stopwords=attribute())
def string_normalizer(ctx: InferenceContext) -> None:
    x = ctx.input_shape(0)
    if x is not None and (len(x) not in (1, 2) or (len(x) == 2 and type(x[0]) is int and x[0] != 1)):
        ctx.fail(f"input {format_shape(x)} must be [C] or [1, C]")
    if x is None or not ctx.attr("stopwords"):
        ctx.set_output_shape(0, x)
        return
    ctx.set_output_shape(0, x[:-1] + (None,))  # anything from one (an empty string) to C strings remain
