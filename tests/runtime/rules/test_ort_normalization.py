"""onnxruntime's normalizations: SkipLayerNormalization, SkipSimplifiedLayerNormalization,
EmbedLayerNormalization, the default-domain LayerNormalization-1 and SimplifiedLayerNormalization-1,
and the ops that keep their input's shape (GroupNorm, SkipGroupNorm, BranchwiseRMSNorm, GatedRMSNorm).

Ops the CPU execution provider runs are held against onnxruntime; GroupNorm and SkipGroupNorm
have no CPU kernel and are checked against the rule alone."""
from __future__ import annotations

from functools import partial

import ort_cases
import pytest
from ort_cases import MS
from ort_oracle import F, F16, I32, Case, In, check

from opspec.runtime.contract import InferenceError
from opspec.runtime.shape import Sym
from opspec.runtime.testing import FLOAT, INT32, run_rule, t

B, S, T, H = Sym("B"), Sym("S"), Sym("T"), Sym("H")
SETTINGS = [{"B": 2, "S": 3, "T": 5}, {"B": 1, "S": 4, "T": 2}]
exact = partial(ort_cases.exact, settings=SETTINGS)
#: Opset imports where the default domain has no standard LayerNormalization (it came in 17).
OPSET_16 = {"": 16, "com.microsoft": 1}


# ---------------------------------------------------------------------------------- SkipLayerNormalization

SKIPS = [("B", "S", 8), ("S", 8), (1, "S", 8)]


@pytest.mark.parametrize("op", ["SkipLayerNormalization", "SkipSimplifiedLayerNormalization"])
@pytest.mark.parametrize("skip", SKIPS)
def test_skip_layer_norm_against_onnxruntime(op, skip):
    inferred = exact(Case(op, MS, [In(F16, ("B", "S", 8)), In(F16, skip), In(F16, (8,))], outputs=4))
    assert inferred == [(10, (B, S, 8)), (1, (B, S, 1)), (1, (B, S, 1)), (10, (B, S, 8))]


def test_skip_layer_norm_optional_inputs_and_fewer_outputs():
    beta_and_bias = [In(F, ("B", "S", 8)), In(F, ("B", "S", 8)), In(F, (8,)), In(F, (8,)), In(F, (8,))]
    assert exact(Case("SkipLayerNormalization", MS, beta_and_bias, outputs=2)) == [(1, (B, S, 8)), (1, (B, S, 1))]
    bias_only = [In(F, ("B", "S", 8)), In(F, ("B", "S", 8)), In(F, (8,)), None, In(F, (8,))]
    assert exact(Case("SkipLayerNormalization", MS, bias_only, outputs=4))[3] == (1, (B, S, 8))
    rms_bias = [In(F, ("B", "S", 8)), In(F, ("S", 8)), In(F, (8,)), In(F, (8,))]
    assert exact(Case("SkipSimplifiedLayerNormalization", MS, rms_bias))[0] == (1, (B, S, 8))


@pytest.mark.parametrize("op", ["SkipLayerNormalization", "SkipSimplifiedLayerNormalization"])
def test_skip_layer_norm_token_major_input(op):
    inferred = exact(Case(op, MS, [In(F, ("T", 8)), In(F, ("T", 8)), In(F, (8,))], outputs=4))
    assert inferred == [(1, (T, 8)), (1, (T, 1)), (1, (T, 1)), (1, (T, 8))]


def test_skip_layer_norm_refines_from_skip_and_gamma():
    ctx = run_rule("SkipLayerNormalization", 1, [t(B, None, None), t(S, None), t(8)], domain=MS, output_count=4)
    assert ctx.output_type(0) == t(B, S, 8) and ctx.output_type(1) == t(B, S, 1)
    ctx = run_rule("SkipLayerNormalization", 1, [None, t(2, S, H), t(H)], domain=MS, names=["x", "s", "g"])
    assert ctx.output_type(0) == t(None, S, H)  # a 3-D skip needs a 3-D input
    ctx = run_rule("SkipLayerNormalization", 1, [None, t(S, H), t(H)], domain=MS, names=["x", "s", "g"])
    assert ctx.output_type(0) == t(None)  # a 2-D skip goes with a 2-D or a 3-D input


@pytest.mark.parametrize("inputs, message", [
    ([t(2, 2, 3, 8), t(3, 8), t(8)], "input .* must be 2-D .* or 3-D"),
    ([t(2, 3, 8), t(8), t(8)], "skip .* must be 2-D .* or 3-D"),
    ([t(2, 3, 8), t(2, 1, 8), t(8)], "last two dims"),
    ([t(3, 8), t(1, 3, 8), t(8)], "a 2-D input needs skip of its own shape"),
    ([t(3, 8), t(4, 8), t(8)], "last two dims"),
    ([t(2, 3, 8), t(3, 8), t(1, 8)], "gamma .* must be 1-D"),
    ([t(2, 3, 8), t(3, 8), t(4)], "gamma .* must match the hidden size"),
    ([t(2, 3, 8), t(3, 8), t(8), t(8), t(6)], "bias .* must match the hidden size"),
])
def test_skip_layer_norm_refuses_what_every_kernel_refuses(inputs, message):
    with pytest.raises(InferenceError, match=message):
        run_rule("SkipLayerNormalization", 1, inputs, domain=MS, output_count=4)


def test_skip_layer_norm_unknown_optional_input_is_not_absent():
    # a present bias of unknown shape still constrains nothing; an absent one is skipped
    present = run_rule("SkipSimplifiedLayerNormalization", 1, [t(B, S, H), t(S, H), t(H), None], domain=MS,
                  names=["x", "s", "g", "bias"], output_count=4)
    known = run_rule("SkipSimplifiedLayerNormalization", 1, [t(B, S, None), t(S, None), t(None), t(8)], domain=MS,
                output_count=4)
    assert present.output_type(0) == t(B, S, H) and present.output_type(3) == t(B, S, H)
    assert known.output_type(0) == t(B, S, 8) and known.output_type(1) == t(B, S, 1)


# ---------------------------------------------------------------------------------- EmbedLayerNormalization

TABLES = [In(F, (10, 8)), In(F, (6, 8)), In(F, (4, 8)), In(F, (8,)), In(F, (8,))]


def embed_inputs(*extra, segments=True):
    tables = TABLES if segments else [TABLES[0], TABLES[1], None, *TABLES[3:]]
    return [In(I32, ("B", "S")), In(I32, ("B", "S")) if segments else None, *tables, *extra]


def test_embed_layer_norm_against_onnxruntime():
    inferred = exact(Case("EmbedLayerNormalization", MS, embed_inputs(), outputs=3))
    assert inferred == [(1, (B, S, 8)), (6, (B,)), (1, (B, S, 8))]


def test_embed_layer_norm_with_mask_and_position_ids():
    mask = exact(Case("EmbedLayerNormalization", MS, embed_inputs(In(I32, ("B", "S"))), outputs=3))
    assert mask[1] == (6, (B,))
    positions = exact(Case("EmbedLayerNormalization", MS, embed_inputs(None, In(I32, (1, "S")), segments=False),
                           outputs=2))
    assert positions == [(1, (B, S, 8)), (6, (B,))]


def test_embed_layer_norm_float16_and_mask_index_type_zero():
    half = [In(I32, ("B", "S")), None, In(F16, (10, 8)), In(F16, (6, 8)), None, In(F16, (8,)), In(F16, (8,))]
    assert exact(Case("EmbedLayerNormalization", MS, half, outputs=2)) == [(10, (B, S, 8)), (6, (B,))]
    verdict = check(Case("EmbedLayerNormalization", MS, embed_inputs(), {"mask_index_type": 0}, outputs=3), SETTINGS)
    assert verdict.problems == []
    # onnxruntime's own inference leaves the mask index unstated then, but its kernel writes (B,) all the same
    assert verdict.inferred[1] == (6, (B,))
    with_mask = check(Case("EmbedLayerNormalization", MS, embed_inputs(In(I32, ("B", "S"))), {"mask_index_type": 0},
                           outputs=3), SETTINGS)
    assert with_mask.problems == [] and with_mask.inferred[1] == (6, (B,))


def test_embed_layer_norm_refines_from_every_operand():
    ctx = run_rule("EmbedLayerNormalization", 1, [t(None, None, elem=INT32), t(B, S, elem=INT32), t(None, None),
                                              t(None, H), None, t(None), t(None)], domain=MS,
              names=["ids", "seg", "w", "p", "", "g", "b"], output_count=3)
    assert ctx.output_type(0) == t(B, S, H) and ctx.output_type(1) == t(B, elem=INT32)
    ctx = run_rule("EmbedLayerNormalization", 1, [None, None, t(10, None), t(6, None), None, t(8), t(8)], domain=MS,
              names=["ids", "", "w", "p", "", "g", "b"], output_count=3)
    assert ctx.output_type(0) == t(None, None, 8) and ctx.output_type(2) == t(None, None, 8)


@pytest.mark.parametrize("inputs, message", [
    ([t(2, 3, 1, elem=INT32), None, t(10, 8), t(6, 8), None, t(8), t(8)], "input_ids .* must be 2-D"),
    ([t(2, 3, elem=INT32), t(1, 3, elem=INT32), t(10, 8), t(6, 8), t(4, 8), t(8), t(8)], "segment_ids .* must match"),
    ([t(2, 3, elem=INT32), None, t(10, 8), t(6, 4), None, t(8), t(8)], "widths"),
    ([t(2, 3, elem=INT32), None, t(10, 8), t(6, 8), t(4, 5), t(8), t(8)], "widths"),  # checked without segment_ids too
    ([t(2, 3, elem=INT32), None, t(10, 8), t(6, 8), None, t(8), t(1, 8)], "beta .* must be 1-D"),
    ([t(2, 3, elem=INT32), None, t(10, 8), t(6, 8), None, t(4), t(8)], "gamma .* must match"),
    ([t(2, 3, elem=INT32), None, t(80), t(6, 8), None, t(8), t(8)], "word_embedding .* must be 2-D"),
    ([t(2, 3, elem=INT32), None, t(10, 8), t(6, 8), None, t(8), t(8), t(2, 2, elem=INT32)], "mask .* must match"),
    ([t(2, 3, elem=INT32), None, t(10, 8), t(6, 8), None, t(8), t(8), None, t(2, 2, elem=INT32)],
     "position_ids .* must match"),
])
def test_embed_layer_norm_refusals(inputs, message):
    names = ["x" if value is not None else "" for value in inputs]
    with pytest.raises(InferenceError, match=message):
        run_rule("EmbedLayerNormalization", 1, inputs, domain=MS, names=names, output_count=3)


def test_embed_layer_norm_unknown_optional_input_is_not_absent():
    # segment_ids present but unknown: nothing is learnt from it, and nothing is refused
    unknown = run_rule("EmbedLayerNormalization", 1, [t(B, S, elem=INT32), None, t(10, 8), t(6, 8), t(4, 8), t(8), t(8)],
                  domain=MS, names=["ids", "seg", "w", "p", "s", "g", "b"], output_count=3)
    known = run_rule("EmbedLayerNormalization", 1, [t(None, None, elem=INT32), t(B, S, elem=INT32), t(10, 8), t(6, 8),
                                                t(4, 8), t(8), t(8)], domain=MS, output_count=3)
    assert unknown.output_type(0) == t(B, S, 8) and known.output_type(0) == t(B, S, 8)


# ---------------------------------------------------------------------------------- LayerNormalization-1

@pytest.mark.parametrize("axis, stats", [(-1, (B, S, 1)), (1, (B, 1, 1)), (0, (1, 1, 1))])
def test_layer_norm_v1_against_onnxruntime(axis, stats):
    scale = {-1: (8,), 1: ("S", 8), 0: ("B", "S", 8)}[axis]
    inferred = exact(Case("LayerNormalization", "", [In(F, ("B", "S", 8)), In(F, scale), In(F, scale)],
                          {"axis": axis}, outputs=3, opsets=OPSET_16))
    assert inferred == [(1, (B, S, 8)), (1, stats), (1, stats)]


def test_layer_norm_v1_types_follow_scale_and_stash_type():
    inferred = exact(Case("LayerNormalization", "", [In(F16, ("B", "S", 8)), In(F16, (8,))], {"stash_type": 11},
                          outputs=3, opsets=OPSET_16))
    assert inferred == [(10, (B, S, 8)), (11, (B, S, 1)), (11, (B, S, 1))]
    inferred = exact(Case("LayerNormalization", "", [In(F, ("B", "S", 8)), In(F16, (8,))], outputs=2,
                          opsets=OPSET_16))
    assert inferred == [(10, (B, S, 8)), (1, (B, S, 1))]


@pytest.mark.parametrize("axis, stats", [(-1, (B, S, 1)), (1, (B, 1, 1))])
def test_simplified_layer_norm_v1_against_onnxruntime(axis, stats):
    # inv_std_var keeps the axes before 'axis' and sets every later one to 1, as the kernel writes it
    scale = (8,) if axis == -1 else ("S", 8)
    inferred = exact(Case("SimplifiedLayerNormalization", "", [In(F16, ("B", "S", 8)), In(F16, scale)],
                          {"axis": axis}, outputs=2, opsets=OPSET_16))
    assert inferred == [(10, (B, S, 8)), (1, stats)]


def test_layer_norm_v1_refuses_an_axis_out_of_range():
    with pytest.raises(InferenceError, match="axis 3 is out of range"):
        run_rule("LayerNormalization", 16, [t(2, 3, 4), t(4)], {"axis": 3}, output_count=3)


# ---------------------------------------------------------------------------------- shape-keeping ops

@pytest.mark.parametrize("op, inputs, attributes", [
    ("BranchwiseRMSNorm", [In(F, ("B", "S", 8)), In(F, (8,))], {}),
    ("BranchwiseRMSNorm", [In(F16, ("B", "T", 12)), In(F, (3, 4))], {"num_branches": 3}),
    ("BranchwiseRMSNorm", [In(F, ("B", "S", 8))], {}),
    ("GatedRMSNorm", [In(F, ("B", "S", 8)), In(F, (4,)), In(F, ("B", "S", 8))], {}),
])
def test_shape_keeping_normalizations_against_onnxruntime(op, inputs, attributes):
    inferred = exact(Case(op, MS, inputs, attributes))
    assert inferred[0][1] == tuple(Sym(d) if isinstance(d, str) else d for d in inputs[0].shape)


@pytest.mark.parametrize("op, inputs, outputs", [
    ("GroupNorm", [t(B, H, 4, 32), t(32), t(32)], 1),
    ("SkipGroupNorm", [t(B, H, 4, 32), t(32), t(32), t(B, 32), t(32)], 2),
])
def test_group_norms_keep_the_input_shape(op, inputs, outputs):
    # no CPU kernel: onnxruntime's inference gives Y (and S) X's shape and type
    ctx = run_rule(op, 1, inputs, {"groups": 4, "activation": 0}, domain=MS, output_count=outputs)
    assert [ctx.output_type(i) for i in range(outputs)] == [t(B, H, 4, 32, elem=FLOAT)] * outputs
