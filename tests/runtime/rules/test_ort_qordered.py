"""onnxruntime's int8 ops in cuBLASLt layouts (QuantizeWithOrder, DequantizeWithOrder, QOrderedMatMul,
QOrderedGelu, QOrderedLayerNormalization, QOrderedAttention, QOrderedLongformerAttention): CUDA-only, so
held against the rules onnxruntime's inference functions state."""
from __future__ import annotations

import pytest

from opspec.runtime.contract import InferenceError
from opspec.runtime.shape import Sym
from opspec.runtime.testing import run_rule, t

MS = "com.microsoft"
B, S, D = Sym("B"), Sym("S"), Sym("D")
I8, F16 = 3, 10
ORDERS = {"order_input": 1, "order_output": 1}


def ms(op, inputs, attributes=None, **kwargs):
    return run_rule(op, 1, inputs, attributes, domain=MS, **kwargs)


def test_quantize_with_order_keeps_the_shape_in_int8():
    assert ms("QuantizeWithOrder", [t(B, S, D, elem=F16), t()], ORDERS).output_type(0) == t(B, S, D, elem=I8)
    assert ms("QuantizeWithOrder", [t(None), t()], ORDERS).output_type(0) == t(None, elem=I8)


def test_dequantize_with_order_takes_the_type_to_names():
    for to in (1, F16):
        ctx = ms("DequantizeWithOrder", [t(B, S, D, elem=I8), t()], {**ORDERS, "to": to})
        assert ctx.output_type(0) == t(B, S, D, elem=to)


def test_qordered_matmul_has_matmul_shapes():
    inputs = [t(B, S, 64, elem=I8), t(), t(64, 32, elem=I8), t(), t()]
    attributes = {"order_A": 1, "order_B": 0, "order_Y": 1}
    assert ms("QOrderedMatMul", inputs, attributes).output_type(0) == t(B, S, 32, elem=I8)
    with_bias_and_c = inputs + [t(32), t(B, S, 32, elem=I8), t()]
    assert ms("QOrderedMatMul", with_bias_and_c, attributes).output_type(0) == t(B, S, 32, elem=I8)
    with pytest.raises(InferenceError, match="inner dims"):
        ms("QOrderedMatMul", [t(B, S, 64, elem=I8), t(), t(65, 32, elem=I8), t(), t()], attributes)


@pytest.mark.parametrize("op, inputs, attributes", [
    ("QOrderedGelu", [t(B, S, D, elem=I8), t(), t()], {}),
    ("QOrderedLayerNormalization", [t(B, S, D, elem=I8), t(), t(D), None, t()], {"axis": -1}),
    ("QOrderedAttention", [t(B, S, D, elem=I8), t(), t(), t(), t(), *[t(D, D, elem=I8)] * 3, t(), t(), t(),
                           t(D), t(D), t(D), None, None, t()],
     {"num_heads": 2, "order_input": 1, "order_output": 1, "order_weight": 0}),
    ("QOrderedLongformerAttention", [t(B, S, D, elem=I8), t(), t(D, 3 * D, elem=I8), t(), t(3 * D), t(), t(),
                                     t(B, S, elem=F16), t(D, 3 * D, elem=I8), t(), t(3 * D), t(), t(B, S, elem=6),
                                     t()],
     {"num_heads": 2, "window": 4, "order_input": 1, "order_output": 1, "order_weight": 0,
      "order_global_weight": 0}),
])
def test_qordered_ops_keep_the_input_shape(op, inputs, attributes):
    assert ms(op, inputs, attributes).output_type(0) == t(B, S, D, elem=I8)
    unknown = ms(op, [t(None, elem=I8), *inputs[1:]], attributes).output_type(0).shape
    # QOrderedAttention's width comes from Q_weight and its input is 3-D
    assert unknown == ((None, None, D) if op == "QOrderedAttention" else None)


def qordered_attention_inputs(width, hidden):
    return [t(B, S, width, elem=I8), t(), t(), t(), t(), *[t(width, hidden, elem=I8)] * 3, t(), t(), t(),
            t(hidden), t(hidden), t(hidden), t(), t(), t()]


def test_qordered_attention_output_is_as_wide_as_the_projections():
    # the CUDA kernel allocates (batch, sequence, qkv_hidden_sizes[0]), not the input's shape
    attributes = {"num_heads": 2, "order_input": 1, "order_output": 1, "order_weight": 0,
                  "qkv_hidden_sizes": [32, 32, 32]}
    assert ms("QOrderedAttention", qordered_attention_inputs(64, 32), attributes).output_type(0) == t(B, S, 32, elem=I8)
    unset = {key: value for key, value in attributes.items() if key != "qkv_hidden_sizes"}
    assert ms("QOrderedAttention", qordered_attention_inputs(64, 32), unset).output_type(0) == t(B, S, 32, elem=I8)
    with pytest.raises(InferenceError, match=r"qkv_hidden_sizes\[0\] = 32"):
        ms("QOrderedAttention", qordered_attention_inputs(64, 16), attributes)
