"""onnxruntime's quantized building blocks (QAttention, QEmbedLayerNormalization,
DynamicQuantizeLSTM, block floating point): rules held against onnxruntime's CPU runs where a
kernel exists, and against its inference functions by hand where none does."""
from __future__ import annotations

from functools import partial

import numpy as np
import ort_cases
import pytest
from ort_cases import MS, ort_inference, scalar
from ort_oracle import F, F16, I8, I32, I64, U8, Case, Const, In

from opspec.runtime.contract import InferenceError
from opspec.runtime.shape import Sym
from opspec.runtime.testing import run_rule, t

B, S, P, T = Sym("B"), Sym("S"), Sym("P"), Sym("T")
SIZES = [{"B": 2, "S": 3, "P": 4, "T": 3, "V": 10}, {"B": 1, "S": 5, "P": 2, "T": 5, "V": 7}]
exact = partial(ort_cases.exact, settings=SIZES)


# ---------------------------------------------------------------------------------- QAttention

HIDDEN, HEADS = 8, 2


def attention_inputs(input_elem=U8, weight_elem=U8, float_elem=F, past=None, mask=None, zero_points=True,
                     weight_scale=None) -> list:
    return [In(input_elem, ("B", "S", 6)), In(weight_elem, (6, 3 * HIDDEN)), In(float_elem, (3 * HIDDEN,)),
            scalar(0.1, float_elem), weight_scale or scalar(0.2, float_elem), mask,
            scalar(1, input_elem) if zero_points else None, scalar(2, weight_elem) if zero_points else None, past]


@pytest.mark.parametrize("kwargs", [{}, {"weight_elem": I8}, {"zero_points": False}, {"float_elem": F16},
                                    {"weight_scale": Const(np.ones(3 * HIDDEN) * 0.2, F)},
                                    {"mask": In(I32, ("B",), fill=lambda s, r: np.full(s, 2, np.int32))}])
def test_qattention_output_is_batch_sequence_hidden(kwargs):
    exact(Case("QAttention", MS, attention_inputs(**kwargs), {"num_heads": HEADS}))


@pytest.mark.parametrize("attrs", [{}, {"unidirectional": 1}, {"unidirectional": 1, "do_rotary": 1}])
def test_qattention_present_grows_the_past_by_the_sequence(attrs):
    past = In(F, (2, "B", HEADS, "P", HIDDEN // HEADS))
    exact(Case("QAttention", MS, attention_inputs(past=past), dict(attrs, num_heads=HEADS), outputs=2))


def test_qattention_present_without_past_holds_this_sequence():
    exact(Case("QAttention", MS, attention_inputs(), {"num_heads": HEADS, "unidirectional": 1}, outputs=2))


def qattention(shapes: dict, attrs: dict | None = None, outputs: int = 1, names=None):
    inputs = [shapes.get("input", t(B, S, 6, elem=U8)), shapes.get("weight", t(6, 24, elem=U8)),
              shapes.get("bias", t(24)), t(), t(), None, None, None, shapes.get("past")]
    if names is None:
        names = ["i", "w", "b", "s", "s", "", "", "", "p" if "past" in shapes else ""]
    return run_rule("QAttention", 1, inputs, dict({"num_heads": 2}, **(attrs or {})), names=names, domain=MS,
               output_count=outputs)


def test_qattention_refuses_sizes_the_kernel_refuses():
    with pytest.raises(InferenceError, match="does not divide by 3"):
        qattention({"bias": t(25), "weight": t(6, 25, elem=U8)})
    with pytest.raises(InferenceError, match=r"weight \(6, 27\) gives 27 but bias \(24,\) gives 24"):
        qattention({"bias": t(24), "weight": t(6, 27, elem=U8)})
    with pytest.raises(InferenceError, match="input hidden size"):
        qattention({"weight": t(5, 24, elem=U8)})
    with pytest.raises(InferenceError, match="3 heads"):
        qattention({}, {"num_heads": 3}, outputs=2)
    with pytest.raises(InferenceError, match="past axis 2"):
        qattention({"past": t(2, B, 4, P, 4)}, outputs=2)
    with pytest.raises(InferenceError, match="rank"):
        qattention({"past": t(2, B, 2, P)}, outputs=2)


def test_qattention_soundness_of_an_unknown_past_and_a_shared_buffer():
    names = ["i", "w", "b", "s", "s", "", "", "", "p"]
    ctx = run_rule("QAttention", 1, [t(B, S, 6, elem=U8), t(6, 24, elem=U8), t(24), t(), t(), None, None, None, None],
              {"num_heads": 2}, names=names, domain=MS)
    assert [ctx.output_type(i) for i in range(2)] == [t(B, S, 8), t(2, B, 2, None, 4)]
    ctx = qattention({"past": t(2, B, 2, P, 4)}, {"past_present_share_buffer": 1}, outputs=2)
    assert ctx.output_type(1) == t(2, B, 2, None, 4)  # the buffer's length is the maximum, not P + S
    assert qattention({"past": t(2, B, 2, P, 4)}, outputs=2).output_type(1) == t(2, B, 2, P + S, 4)


# ---------------------------------------------------------------------------------- QEmbedLayerNormalization

def ids(shape=("B", "S")) -> In:
    return In(I32, shape, fill=lambda s, r: r.integers(0, 3, s).astype(np.int32))


def embed_inputs(segments=True, mask=False, elem=U8) -> list:
    return [ids(), ids() if segments else None, In(elem, ("V", 8)), In(elem, (16, 8)),
            In(elem, (3, 8)) if segments else None, In(elem, (8,)), In(elem, (8,)),
            In(I32, ("B", "S"), fill=lambda s, r: np.ones(s, np.int32)) if mask else None,
            scalar(0.1, F), scalar(0.1, F), scalar(0.1, F) if segments else None, scalar(0.1, F), scalar(0.1, F),
            scalar(1, elem), scalar(1, elem), scalar(1, elem) if segments else None, scalar(1, elem), scalar(1, elem)]


@pytest.mark.parametrize("kwargs", [{}, {"mask": True}, {"segments": False}, {"elem": I8}])
def test_qembed_layer_norm_gives_embeddings_and_a_mask_index(kwargs):
    exact(Case("QEmbedLayerNormalization", MS, embed_inputs(**kwargs), outputs=2))


def qembed(changes: dict, names=None):
    inputs = [t(B, S, elem=I32), None, t(100, 8, elem=U8), t(16, 8, elem=U8), None, t(8, elem=U8), t(8, elem=U8),
              None, t(), t(), None, t(), t(), t(elem=U8), t(elem=U8), None, t(elem=U8), t(elem=U8)]
    for index, value in changes.items():
        inputs[index] = value
    if names is None:
        names = ["x" if value is not None else "" for value in inputs]
    return run_rule("QEmbedLayerNormalization", 1, inputs, names=names, domain=MS)


def test_qembed_layer_norm_merges_ids_and_widths():
    ctx = qembed({1: t(2, S, elem=I32), 4: t(2, 8, elem=U8), 7: t(B, 5, elem=I32), 2: t(100, None, elem=U8)})
    assert [ctx.output_type(i) for i in range(2)] == [t(2, 5, 8), t(2, elem=I32)]
    with pytest.raises(InferenceError, match="hidden size: gamma_quant"):
        qembed({5: t(6, elem=U8)})
    with pytest.raises(InferenceError, match="batch: input_ids gives 2 but segment_ids gives 3|batch: segment_ids"):
        qembed({0: t(2, S, elem=I32), 1: t(3, S, elem=I32), 4: t(2, 8, elem=U8)})
    with pytest.raises(InferenceError, match="rank"):
        qembed({0: t(B, elem=I32)})


def test_qembed_layer_norm_soundness_of_unknown_segments_and_mask():
    names = ["x", "s", "x", "x", "e", "x", "x", "m"] + ["x"] * 10
    inputs = [t(B, S, elem=I32), None, t(100, None, elem=U8), t(16, None, elem=U8), None, t(None, elem=U8),
              t(None, elem=U8), None] + [t()] * 5 + [t(elem=U8)] * 5
    ctx = run_rule("QEmbedLayerNormalization", 1, inputs, names=names, domain=MS)
    assert [ctx.output_type(i) for i in range(2)] == [t(B, S, None), t(B, elem=I32)]


# ---------------------------------------------------------------------------------- DynamicQuantizeLSTM

HIDDEN_UNITS, INPUT = 4, 6


def lstm_inputs(directions=1, elem=U8, extras=False, per_column=False) -> list:
    params = (directions, 4 * HIDDEN_UNITS) if per_column else (directions,)
    zero = 0 if elem == I8 else 1  # int8 weights need zero points of 0
    scale = lambda: In(F, params, fill=lambda s, r: np.full(s, 0.1, np.float32))  # noqa: E731
    return [In(F, ("T", "B", INPUT)), In(elem, (directions, INPUT, 4 * HIDDEN_UNITS)),
            In(elem, (directions, HIDDEN_UNITS, 4 * HIDDEN_UNITS)),
            In(F, (directions, 8 * HIDDEN_UNITS)) if extras else None, None,
            In(F, (directions, "B", HIDDEN_UNITS)) if extras else None,
            In(F, (directions, "B", HIDDEN_UNITS)) if extras else None, None,
            scale(), Const(np.full(params, zero), elem), scale(), Const(np.full(params, zero), elem)]


@pytest.mark.parametrize("direction, directions", [("forward", 1), ("reverse", 1), ("bidirectional", 2)])
@pytest.mark.parametrize("elem, extras, per_column", [(U8, False, False), (I8, True, True)])
def test_dynamic_quantize_lstm_has_lstm_shapes(direction, directions, elem, extras, per_column):
    exact(Case("DynamicQuantizeLSTM", MS, lstm_inputs(directions, elem, extras, per_column),
               {"hidden_size": HIDDEN_UNITS, "direction": direction}, outputs=3))


def test_dynamic_quantize_lstm_with_fewer_outputs():
    exact(Case("DynamicQuantizeLSTM", MS, lstm_inputs(), {"hidden_size": HIDDEN_UNITS}, outputs=2))


def lstm(x, w, r, attrs=None):
    inputs = [x, w, r, None, None, None, None, None, t(1), t(1, elem=U8), t(1), t(1, elem=U8)]
    return run_rule("DynamicQuantizeLSTM", 1, inputs, attrs or {}, domain=MS)


def test_dynamic_quantize_lstm_reads_the_hidden_size_from_the_transposed_weights():
    ctx = lstm(t(T, B, 6), t(1, 6, 20, elem=U8), t(None, elem=U8))
    assert [ctx.output_type(i) for i in range(3)] == [t(T, 1, B, 5), t(1, B, 5), t(1, B, 5)]
    assert lstm(t(T, B, 6), t(1, 6, None, elem=U8), t(1, 7, None, elem=U8)).output_type(0) == t(T, 1, B, 7)


def test_dynamic_quantize_lstm_refuses_what_the_kernel_refuses():
    with pytest.raises(InferenceError, match="directions"):
        lstm(t(T, B, 6), t(1, 6, 16, elem=U8), t(1, 4, 16, elem=U8), {"direction": "bidirectional"})
    with pytest.raises(InferenceError, match="hidden size"):
        lstm(t(T, B, 6), t(1, 6, 16, elem=U8), t(1, 4, 16, elem=U8), {"hidden_size": 5})
    with pytest.raises(InferenceError, match="does not divide by 4"):
        lstm(t(T, B, 6), t(1, 6, 18, elem=U8), t(1, 4, 16, elem=U8))
    with pytest.raises(InferenceError, match="input size"):
        lstm(t(T, B, 5), t(1, 6, 16, elem=U8), t(1, 4, 16, elem=U8))
    with pytest.raises(InferenceError, match="sideways"):
        lstm(t(T, B, 6), t(1, 6, 16, elem=U8), t(1, 4, 16, elem=U8), {"direction": "sideways"})


# ---------------------------------------------------------------------------------- block floating point

@pytest.mark.parametrize("output", [0, 1, 2])
@pytest.mark.parametrize("elem, shape", [(F, (2, 3)), (F16, (4, 2, 5))])
def test_quantize_bfp_agrees_with_onnxruntimes_inference(capfd, output, elem, shape):
    theirs = ort_inference(capfd, Case("QuantizeBFP", MS, [In(elem, shape)], {"bfp_type": 0}, outputs=3), output)
    ours = run_rule("QuantizeBFP", 1, [t(*shape, elem=elem)], {"bfp_type": 0}, domain=MS).output_type(output)
    assert (ours.elem, ours.shape) == theirs


@pytest.mark.parametrize("dtype", [None, 1, 10])
def test_dequantize_bfp_agrees_with_onnxruntimes_inference(capfd, dtype):
    attrs = {"bfp_type": 0} if dtype is None else {"bfp_type": 0, "dtype": dtype}
    theirs = ort_inference(capfd, Case("DequantizeBFP", MS, [In(U8, (7,)), In(I64, (2,)), In(I64, (2,))], attrs))
    ours = run_rule("DequantizeBFP", 1, [t(7, elem=U8), t(2, elem=I64), t(2, elem=I64)], attrs, domain=MS).output_type(0)
    assert (ours.elem, ours.shape) == theirs


def test_quantize_bfp_gives_bytes_and_one_int64_per_axis():
    ctx = run_rule("QuantizeBFP", 1, [t(B, S, 4)], {"bfp_type": 0}, domain=MS)
    assert [ctx.output_type(i) for i in range(3)] == [t(None, elem=U8), t(3, elem=I64), t(3, elem=I64)]
    ctx = run_rule("QuantizeBFP", 1, [t(None, elem=F16)], {"bfp_type": 0}, domain=MS)
    assert (ctx.output_type(1).elem, ctx.output_type(1).shape) == (I64, (None,))  # one dim, of unknown length


@pytest.mark.parametrize("attrs, elem", [({}, F), ({"dtype": 10}, F16), ({"dtype": 16}, 16)])
def test_dequantize_bfp_takes_the_type_dtype_names(attrs, elem):
    ctx = run_rule("DequantizeBFP", 1, [t(7, elem=U8), t(2, elem=I64), t(2, elem=I64)], dict(attrs, bfp_type=0),
              domain=MS)
    assert ctx.output_type(0) == t(None, elem=elem)
