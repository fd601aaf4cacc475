"""onnxruntime's GatherBlockQuantized held against its CPU kernel (uint8 packed 2, 4 and 8 bits, int4,
uint4, FP8 and FP4 tables), and its checks against the rule, as onnxruntime's inference function
states them."""
from __future__ import annotations

import numpy as np
import onnxruntime
import pytest
from onnx import helper
from ort_oracle import F, F16, I32, I64, U8, Case, Const, In, check, inferred_outputs, model_of

from opspec.runtime.contract import InferenceError
from opspec.runtime.shape import Sym
from opspec.runtime.testing import run_rule, t

MS = "com.microsoft"
B, S, V, H = Sym("B"), Sym("S"), Sym("V"), Sym("H")
SETTINGS = [{"B": 2, "S": 3}, {"B": 1, "S": 5}]
UINT8, INT4, UINT4, E4M3, E5M2, E2M1 = 2, 22, 21, 17, 19, 23


def indices(shape, elem=I64, rows=16):
    return In(elem, shape, lambda s, rng: rng.integers(-rows, rows, s).astype(np.int64 if elem == I64 else np.int32))


def gbq(*inputs, outputs=1, **attributes):
    return Case("GatherBlockQuantized", MS, list(inputs), attributes, outputs=outputs)


@pytest.mark.parametrize("bits, per_byte", [(2, 4), (4, 2), (8, 1)])
@pytest.mark.parametrize("block_size", [16, 32, 128])
def test_uint8_tables_unpack_the_last_axis(bits, per_byte, block_size):
    values = 128
    table = Const(np.random.default_rng(bits).integers(0, 256, (16, values // per_byte)), U8)
    scales = Const(np.ones((16, -(-values // block_size))), F)
    verdict = check(gbq(table, indices(("B", "S")), scales, bits=bits, block_size=block_size), SETTINGS)
    assert verdict.problems == []
    assert verdict.inferred == [(F, (B, S, values))]


@pytest.mark.parametrize("bits", [2, 4, 8])
def test_uint8_zero_points_packed_like_the_table(bits):
    """The CPU kernel takes packed zero points (8 / bits per byte along the quantized axis)."""
    per_byte = 8 // bits
    table = Const(np.zeros((16, 64 // per_byte)), U8)
    blocks = 64 // 16
    for zp_columns in (-(-blocks * bits // 8),):
        case = gbq(table, indices(("B",)), Const(np.ones((16, blocks)), F16), Const(np.zeros((16, zp_columns)), U8),
                   bits=bits, block_size=16)
        verdict = check(case, [{"B": 2}, {"B": 7}])
        assert verdict.problems == []
        assert verdict.inferred == [(10, (B, 64))]


def test_uint8_rank3_table_scalar_and_int32_indices():
    table = Const(np.zeros((3, 16, 16)), U8)
    case = gbq(table, indices(("B", "S"), I32, rows=3), Const(np.ones((3, 16, 1)), F), block_size=32,
               quantize_axis=-1)
    verdict = check(case, SETTINGS)
    assert verdict.problems == [] and verdict.inferred == [(F, (B, S, 16, 32))]
    scalar = check(gbq(Const(np.zeros((16, 16)), U8), In(I64, (), lambda s, rng: np.array(3)),
                       Const(np.ones((16, 1)), F), block_size=32), [{}])
    assert scalar.problems == [] and scalar.inferred == [(F, (32,))]


def table_case(elem, data_shape, scales_shape, attributes):
    """A model whose table is an initializer of ``elem`` (int4, float8, float4 values onnx packs itself)."""
    model = model_of(gbq(Const(np.zeros(1), F), indices(("B", "S"), rows=4), Const(np.ones(scales_shape), F),
                         **attributes))
    count = int(np.prod(data_shape))
    values = (np.arange(count) % 7).tolist() if elem in (INT4, UINT4) else np.linspace(-1, 1, count).tolist()
    model.graph.initializer[0].CopyFrom(helper.make_tensor("in0", elem, data_shape, values))
    return model


def run_model(model, setting):
    shape = tuple(setting[d] for d in ("B", "S"))
    feeds = {"in1": np.random.default_rng(0).integers(-4, 4, shape)}
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0].shape


@pytest.mark.parametrize("elem", [INT4, UINT4, E4M3, E5M2, E2M1])
@pytest.mark.parametrize("attributes, data_shape, scales_shape, expected", [
    ({"block_size": 32}, (4, 64), (4, 2), (B, S, 64)),
    ({"block_size": 16, "gather_axis": 1, "quantize_axis": 0}, (64, 4), (4, 4), (64, B, S)),
])
def test_one_value_per_element_tables(elem, attributes, data_shape, scales_shape, expected):
    model = table_case(elem, data_shape, scales_shape, attributes)
    [(out_elem, shape)] = inferred_outputs(model, 1)
    assert (out_elem, shape) == (F, expected)
    for setting in SETTINGS:
        assert run_model(model, setting) == tuple(d if type(d) is int else d.evaluate(setting) for d in expected)


@pytest.mark.parametrize("elem", [E4M3, E2M1])
def test_fp_tables_share_scales_and_take_one_block_per_row(elem):
    for attributes, scales_shape in (({"block_size": 0}, (4, 1)), ({"block_size": 16}, (1, 4)),
                                     ({"block_size": 0}, (1, 1))):
        model = table_case(elem, (4, 64), scales_shape, attributes)
        assert inferred_outputs(model, 1) == [(F, (B, S, 64))]
        assert run_model(model, SETTINGS[0]) == (2, 3, 64)


def ms(inputs, attributes=None, **kwargs):
    return run_rule("GatherBlockQuantized", 1, inputs, attributes, domain=MS, **kwargs)


def test_symbolic_tables_multiply_the_packed_axis():
    assert ms([t(V, H, elem=UINT8), t(B, S, elem=7), t(V, 2)], {"block_size": 32}).output_type(0) == t(B, S, 2 * H)
    assert ms([t(V, H, elem=E4M3), t(B, elem=7), t(V, 2)], {"block_size": 32}).output_type(0) == t(B, H)
    # uint8 blocks along another axis than the packed last one: neither size is stated
    ctx = ms([t(4, 100, 32, elem=UINT8), t(B, elem=7), t(4, 7, 32)], {"block_size": 32, "quantize_axis": 1})
    assert ctx.output_type(0) == t(B, None, None)


@pytest.mark.parametrize("inputs, attributes, message", [
    ([t(32, elem=UINT8), t(B, elem=7), t(2)], {}, "rank 2 or more"),
    ([t(16, 32, elem=UINT8), t(B, elem=7), t(16, 2)], {"gather_axis": 2}, "must lie in"),
    ([t(16, 32, elem=UINT8), t(B, elem=7), t(16, 2)], {"block_size": 48}, "power of 2"),
    ([t(16, 32, elem=UINT8), t(B, elem=7), t(16, 2)], {"block_size": 0}, "power of 2"),
    ([t(16, 32, elem=INT4), t(B, elem=7), t(16, 1)], {"block_size": 0}, "power of 2"),
    ([t(16, 32, elem=UINT8), t(B, elem=7), t(16, 2)], {"bits": 3}, "bits 3"),
    ([t(16, 32, elem=INT4), t(B, elem=7), t(16, 1)], {"bits": 8, "block_size": 32}, "bits 8"),
    ([t(16, 32, elem=UINT8), t(B, elem=7), t(16, 2)], {"gather_axis": 1}, "gather_axis 1"),
    ([t(16, 32, elem=UINT8), t(B, elem=7), t(7, 32)], {"quantize_axis": 0}, "must differ"),
    ([t(16, 32, elem=UINT8), t(B, elem=7), t(16,)], {}, "rank of data"),
    ([t(16, 32, elem=UINT8), t(B, elem=7), t(16, 3)], {"block_size": 32}, "do not fit data"),
    ([t(16, 32, elem=UINT8), t(B, elem=7), t(8, 2)], {"block_size": 32}, "do not fit data"),
    ([t(16, 64, elem=INT4), t(B, elem=7), t(1, 2)], {"block_size": 32}, "do not fit data"),
    ([t(16, 64, elem=E4M3), t(B, elem=7), t(3, 2)], {"block_size": 32}, "do not fit data"),
    ([t(16, 64, elem=E4M3), t(B, elem=7), t(16, 2)], {"block_size": 0}, "do not fit data"),
    ([t(16, 64, elem=E4M3), t(B, elem=7), t(16, 2), t(16, 2, elem=E4M3)], {"block_size": 32}, "symmetric"),
    ([t(16, 32, elem=UINT8), t(B, elem=7), t(16, 2), t(16, elem=UINT8)], {"block_size": 32}, "rank of scales"),
    ([t(16, 32, elem=UINT8), t(B, elem=7), t(16, 4), t(16, 3, elem=UINT8)], {"bits": 2, "block_size": 32},
     "do not fit scales"),
    ([t(16, 64, elem=INT4), t(B, elem=7), t(16, 2), t(16, 1, elem=INT4)], {"block_size": 32}, "do not fit scales"),
])
def test_checks_like_onnxruntime(inputs, attributes, message):
    with pytest.raises(InferenceError, match=message):
        ms(inputs, attributes)


def test_checks_wait_for_every_operand_and_unknown_shapes_are_sound():
    # without scales' shape onnxruntime checks nothing; the output follows from data and indices
    names = ["d", "i", "s"]
    assert ms([t(16, 32, elem=UINT8), t(B, elem=7), None], {"bits": 3}, names=names).output_type(0).shape == \
        (B, None)
    assert ms([t(16, 32, elem=UINT8), t(B, elem=7), None], {"block_size": 48}, names=names).output_type(0).shape \
        == (B, 64)
    known = ms([t(16, 32, elem=UINT8), t(B, elem=7), t(16, 2)], {"block_size": 32}).output_type(0)
    unknown_scales = ms([t(16, 32, elem=UINT8), t(B, elem=7), None], {"block_size": 32}, names=names).output_type(0)
    assert known.shape == unknown_scales.shape == (B, 64)
    zp_names = names + ["z"]
    for zero_points in (None, t(16, Sym("z"), elem=UINT8), t(16, 1, elem=UINT8)):
        ctx = ms([t(16, 32, elem=UINT8), t(B, elem=7), t(16, 2), zero_points], {"block_size": 32}, names=zp_names)
        assert ctx.output_type(0) == t(B, 64)
    assert ms([None, t(B, elem=7), t(16, 2)], names=names).output_type(0).shape is None
    assert ms([t(16, 32, elem=UINT8), None, t(16, 2)], names=names).output_type(0).shape is None


def test_output_takes_the_scales_element_type():
    ctx = ms([t(16, 32, elem=UINT8), t(B, elem=7), t(16, 2, elem=16)], {"block_size": 32})
    assert ctx.output_type(0) == t(B, 64, elem=16)



def test_an_unknown_table_type_allows_what_any_type_would():
    names = ["d", "i", "s", "z"]
    shared_scale = ms([t(16, 64, elem=0), t(B, elem=7), t(1, 2)], {"block_size": 32}, names=names[:3])
    assert shared_scale.output_type(0).shape == (B, None)  # the unpacked size depends on the type
    one_block = ms([t(16, 64, elem=0), t(B, elem=7), t(16, 1)], {"block_size": 0}, names=names[:3])
    assert one_block.output_type(0).shape == (B, None)
    packed_zero_points = ms([t(16, 64, elem=0), t(B, elem=7), t(16, 4), t(16, 2, elem=0)], {"block_size": 16},
                            names=names)
    assert packed_zero_points.output_type(0).shape == (B, None)
