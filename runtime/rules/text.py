"""Rules for string and token ops whose shapes depend on their attributes or on the text itself:
StringNormalizer, StringSplit, TfIdfVectorizer."""
from __future__ import annotations

from opspec.runtime.contract import STRING, InferenceContext, attribute, rule
from opspec.runtime.rules._sizes import within_limits
from opspec.runtime.shape import format_shape


@rule("string_normalizer", "[C] or [1, C] strings; removing stopwords leaves a number of them only data tells.",
      stopwords=attribute())
def string_normalizer(ctx: InferenceContext) -> None:
    x = ctx.input_shape("X")
    if x is not None and (len(x) not in (1, 2) or (len(x) == 2 and type(x[0]) is int and x[0] != 1)):
        ctx.fail(f"input {format_shape(x)} must be [C] or [1, C]")
    if x is None or not ctx.attr("stopwords"):
        ctx.set_output_shape("Y", x)
        return
    ctx.set_output_shape("Y", x[:-1] + (None,))  # anything from one (an empty string) to C strings remain


@rule("string_split", "Substrings (X's shape plus an axis as long as the most substrings) and their counts (X's shape).")
def string_split(ctx: InferenceContext) -> None:
    x = ctx.input_shape("X")
    if x is None:
        ctx.set_output_shape("Y", None)
    else:
        empty = any(type(d) is int and d == 0 for d in x)  # no strings: nothing to pad to
        ctx.set_output_shape("Y", x + (0 if empty else ctx.fresh_dim(),))
    ctx.set_output_shape("Z", x)


@rule("tfidf_vectorizer", "[max(ngram_indexes) + 1] features of a [C] sequence, or [N, that] of N rows.",
      ngram_indexes=attribute(required=True), pool_int64s=attribute(), pool_strings=attribute())
def tfidf_vectorizer(ctx: InferenceContext) -> None:
    indexes = ctx.ints_attr("ngram_indexes")
    if not indexes or min(indexes) < 0:
        ctx.fail(f"ngram_indexes {list(indexes or ())} must be non-empty with no negative index")
    # onnx's text asks for exactly one pool, of the input's kind; onnxruntime (the oracle) runs a node
    # with both, or with a pool of the other kind (which matches nothing), and refuses only a node
    # with neither, so that is all that is an error here.
    if not ctx.attr("pool_int64s") and not ctx.attr("pool_strings"):
        ctx.fail("neither pool_int64s nor pool_strings holds an n-gram; the node needs one of them")
    x = ctx.input_shape("X")
    if x is not None and len(x) not in (1, 2):
        ctx.fail(f"input {format_shape(x)} must be [C] or [N, C]")
    features = max(indexes) + 1
    ctx.set_output_shape("Y", None
 if x is None else within_limits(ctx, x[:-1] + (features,)))
