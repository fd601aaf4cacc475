"""Rules for the classical machine-learning ops of ai.onnx.ml (scikit-learn style pipelines).

Batch dims are carried through; element types come from which attribute a node sets
(class labels as strings or integers, the values of a label encoder); class and feature
counts come from attribute lengths where they say them.
"""
from __future__ import annotations

from typing import Any

from opspec.runtime.contract import (
    FLOAT,
    INT64,
    STRING,
    UNDEFINED,
    InferenceContext,
    MapType,
    SequenceType,
    TensorType,
    attribute,
    option,
    rule,
)
from opspec.runtime.contract.elements import DOUBLE
from opspec.runtime.shape import Dim, add_dim, format_shape


def _batch(ctx: InferenceContext):
    """The row count of a feature input: ``(N, F)`` gives N, ``(F,)`` is one row."""
    x = ctx.input_shape("X")
    if x is None:
        return None
    if len(x) not in (1, 2):
        ctx.fail(f"input {format_shape(x)} must be (N, F) or (F,)")
    return x[0] if len(x) == 2 else 1


def _labels(ctx: InferenceContext) -> tuple[int, Any]:
    """The labels' element type (strings when the string list is set, else integers) and the labels."""
    strings = ctx.attr("labels_strings")
    return (STRING, strings) if strings else (INT64, ctx.attr("labels_ints"))


@rule("classifier", "Labels (N,) of the label attribute's type and scores (N, classes) in float.",
      labels_strings=attribute("classlabels_strings"), labels_ints=attribute("classlabels_ints"),
      score_per_label=option("bool", False, doc="whether there is always one score column per class label "
                                               "(some classifiers score a binary problem in one column)"))
def classifier(ctx: InferenceContext) -> None:
    batch = _batch(ctx)
    elem, labels = _labels(ctx)
    ctx.set_output_shape("Y", (batch,), elem)
    if ctx.has_output("Z"):
        columns = len(labels) if labels and ctx.option("score_per_label") else None
        ctx.set_output_shape("Z", (batch, columns), FLOAT)


@rule("svm_classifier", "Labels (N,) of the label attribute's type; scores (N, columns) in float, one column per "
      "class unless support vectors without Platt coefficients give one per class pair (two for two classes).",
      labels_strings=attribute("classlabels_strings"), labels_ints=attribute("classlabels_ints"),
      vectors_per_class=attribute(), prob_a=attribute())
def svm_classifier(ctx: InferenceContext) -> None:
    """onnxruntime's kernel allocates the score columns so: a linear model (no support vectors)
    or one with Platt coefficients scores each class; otherwise each pair of classes gets its
    decision value, and a two-class problem two columns."""
    batch = _batch(ctx)
    elem, labels = _labels(ctx)
    ctx.set_output_shape("Y", (batch,), elem)
    if not ctx.has_output("Z"):
        return
    classes = len(labels) if isinstance(labels, (list, tuple)) and labels else None
    per_class = ctx.ints_attr("vectors_per_class") or ()
    pairwise = sum(per_class) > 0 and not ctx.attr("prob_a")
    if classes is None:
        columns = None
    elif not pairwise:
        columns = classes
    else:
        columns = classes * (classes - 1) // 2 if classes > 2 else 2
    ctx.set_output_shape("Z", (batch, columns), FLOAT)


@rule("regressor", "(N, targets) float predictions; the target count from an attribute when it gives one.",
      targets=attribute(None), fixed_targets=option("int", 0, doc="the target count when the op always has it"))
def regressor(ctx: InferenceContext) -> None:
    targets = ctx.attr("targets") or ctx.option("fixed_targets") or None
    ctx.set_output_shape("Y", (_batch(ctx), targets))


#: LabelEncoder's families of exclusive attributes: from version 2 a node sets exactly one of each
#: (of those its version declares).
_LABEL_ENCODER_FAMILIES = (("keys_strings", "keys_int64s", "keys_floats", "keys_tensor"),
                           ("values_strings", "values_int64s", "values_floats", "values_tensor"))


@rule("label_encoder", "Input shape; the element type of whichever values attribute is set (exactly one keys "
      "and one values attribute from version 2).",
      keys_strings=attribute(), keys_int64s=attribute(), keys_floats=attribute(), keys_tensor=attribute(),
      values_strings=attribute(), values_int64s=attribute(), values_floats=attribute(), values_tensor=attribute())
def label_encoder(ctx: InferenceContext) -> None:
    x = ctx.input_shape("X")

    def given(key: str) -> bool:  # set by the node itself (a schema default says nothing)
        name = ctx.named(key)
        return name is not None and ctx.has_attribute(name)

    for family in _LABEL_ENCODER_FAMILIES:
        declared = [key for key in family if ctx.declares(key)]
        chosen = [key for key in declared if given(key)]
        if declared and len(chosen) != 1:
            ctx.fail(f"exactly one of {', '.join(declared)} must be set, "
                     f"got {', '.join(chosen) if chosen else 'none'}")
    if given("values_tensor"):
        tensor = ctx.attr("values_tensor")
        if tensor is None:
            ctx.fail(f"attribute '{ctx.named('values_tensor')}' holds no readable tensor")
        elem = tensor.elem
    elif given("values_strings"):
        elem = STRING
    elif given("values_int64s"):
        elem = INT64
    elif given("values_floats"):
        elem = FLOAT
    elif not ctx.declares("values_strings"):  # the first version maps strings to codes and back
        elem = STRING if ctx.input_elem("X") == INT64 else INT64 if ctx.input_elem("X") == STRING else UNDEFINED
    else:
        elem = ctx.output_elem("Y")
    ctx.set_output_shape("Y", x, elem)


@rule("category_mapper", "Input shape; strings become integers and integers strings.")
def category_mapper(ctx: InferenceContext) -> None:
    elem = {STRING: INT64, INT64: STRING}.get(ctx.input_elem("X"), UNDEFINED)
    ctx.set_output_shape("Y", ctx.input_shape("X"), elem)


@rule("zip_map", "A sequence of maps from class label to score, one map per row.",
      classlabels_strings=attribute(), classlabels_int64s=attribute())
def zip_map(ctx: InferenceContext) -> None:
    x = ctx.input_shape("X")
    if x is not None and len(x) not in (1, 2):
        ctx.fail(f"input {format_shape(x)} must be (N, classes) or (classes,)")
    key = STRING if ctx.attr("classlabels_strings") else INT64
    ctx.set_output("Z", SequenceType(MapType(key, TensorType(FLOAT, None))))


_CAST_TO = {"TO_FLOAT": FLOAT, "TO_STRING": STRING, "TO_INT64": INT64}


@rule("cast_map", "(1, values) of the element type 'cast_to' names.",
      cast_to=attribute(), map_form=attribute(), max_map=attribute())
def cast_map(ctx: InferenceContext) -> None:
    target = ctx.attr("cast_to", "TO_FLOAT")
    if target not in _CAST_TO:
        ctx.fail(f"cast_to {target!r} is not one of {', '.join(_CAST_TO)}")
    dense = ctx.attr("map_form", "DENSE") == "DENSE"
    ctx.set_output_shape("Y", (1, None if dense else ctx.attr("max_map")), _CAST_TO[target])


@rule("dict_vectorizer", "The map's values laid out by the vocabulary, of the map's value type.",
      string_vocabulary=attribute(), int64_vocabulary=attribute())
def dict_vectorizer(ctx: InferenceContext) -> None:
    source = ctx.input_type("X")
    elem = UNDEFINED

    if type(source) is MapType and type(source.value) is TensorType:
        elem = source.value.elem
    if elem not in (INT64, FLOAT, DOUBLE, STRING):
        elem = ctx.output_elem("Y")
    ctx.set_output_shape("Y", None, elem)  # one map gives a vector, a batch of maps a matrix


@rule("one_hot_encoder", "The input's shape plus an axis of one flag per category.",
      cats_strings=attribute(), cats_int64s=attribute())
def one_hot_encoder(ctx: InferenceContext) -> None:
    x = ctx.input_shape("X")
    categories = ctx.attr("cats_strings") or ctx.attr("cats_int64s")
    if not categories:
        ctx.fail("one of cats_strings and cats_int64s must be set")
    ctx.set_output_shape("Y", None if x is None else tuple(x) + (len(categories),), FLOAT)


@rule("feature_vectorizer", "(N, sum of inputdimensions): the inputs' features side by side.",
      inputdimensions=attribute())
def feature_vectorizer(ctx: InferenceContext) -> None:
    widths = ctx.ints_attr("inputdimensions")
    batch = None
    for index in range(ctx.input_count):
        shape = ctx.input_shape(index)
        if shape is not None and len(shape) == 2 and batch is None:
            batch = shape[0]
    total: Dim = None
    if widths is not None:
        if len(widths) != ctx.input_count:
            ctx.fail(f"inputdimensions {list(widths)} has {len(widths)} entries for {ctx.input_count} inputs")
        total = 0
        for width in widths:
            total = add_dim(total, width)
    ctx.set_output_shape("Y", (batch, total), FLOAT)


@rule("array_feature_extractor", "The selected columns of the last axis, as many as there are indices.")
def array_feature_extractor(ctx: InferenceContext) -> None:
    x, indices = ctx.input_shape("X"), ctx.input_shape("Y")
    if x is None or len(x) < 2:
        ctx.set_output_shape("Z", None)  # a 1-D input gives a row, whose layout varies
        return
    count = None
    sizes = [d for d in indices if type(d) is int] if indices is not None else []
    if indices is not None and len(sizes) == len(indices):
        count = 1
        for size in sizes:
            count *= size
    ctx.set_output_shape("Z", tuple(x[:-1]) + (count,))
