"""GroupQueryAttention (com.microsoft) against onnxruntime: present key/value lengths with a growing cache,
a shared (larger) cache buffer, a windowed cache and no cache, with total_sequence_length computed in the
graph as data, as exported decoders compute it."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from ort_oracle import F, I32, Case, Const, In, check, check_model

from opspec.runtime.contract import Data, InferenceError
from opspec.runtime.shape import Sym
from opspec.runtime.testing import INT32, run_rule, t, vec

MS = "com.microsoft"
HEADS = {"num_heads": 4, "kv_num_heads": 2}
B, S, P, M = Sym("B"), Sym("S"), Sym("P"), Sym("M")


def _shape_part(source: str, start: int, out: str) -> helper.NodeProto:
    return helper.make_node("Shape", [source], [out], start=start, end=start + 1)


def gqa_model(query, past, *, past_length: str = "in3", outputs: int = 3, packed: bool = True,
              key=None, attributes: dict | None = None):
    """A decoder step: total_sequence_length = past_length + seq and seqlens_k = total - 1 per batch entry,
    computed from the inputs' shapes as data (the graph's inputs are in0 query, in1/in2 key/value,
    in3/in4 past_key/past_value and, for a shared buffer, in7 whose length is the past length)."""
    inputs = [helper.make_tensor_value_info("in0", F, query)]
    names = ["in0", "", ""]
    if not packed:
        inputs += [helper.make_tensor_value_info("in1", F, key), helper.make_tensor_value_info("in2", F, key)]
        names = ["in0", "in1", "in2"]
    nodes = [_shape_part("in0", 1, "seq"), _shape_part("in0", 0, "batch")]
    if past is None:
        names += ["", ""]
        nodes.append(helper.make_node("Identity", ["seq"], ["total64"]))
    else:
        inputs += [helper.make_tensor_value_info("in3", F, past), helper.make_tensor_value_info("in4", F, past)]
        names += ["in3", "in4"]
        if past_length != "in3":
            inputs.append(helper.make_tensor_value_info(past_length, F, ("P",)))
        axis = 2 if past_length == "in3" else 0
        nodes += [_shape_part(past_length, axis, "past_len"),
                  helper.make_node("Add", ["past_len", "seq"], ["total64"])]
    nodes += [helper.make_node("Cast", ["total64"], ["total"], to=TensorProto.INT32),
              helper.make_node("Sub", ["total", "one"], ["last"]),
              helper.make_node("Expand", ["last", "batch"], ["seqlens"]),
              helper.make_node("GroupQueryAttention", names + ["seqlens", "total"],
                               [f"out{i}" for i in range(outputs)], domain=MS, **(attributes or HEADS))]
    results = [helper.make_empty_tensor_value_info(f"out{i}") for i in range(outputs)]
    graph = helper.make_graph(nodes, "gqa", inputs, results, [helper.make_tensor("one", TensorProto.INT32, (1,), [1])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid(MS, 1)],
                             ir_version=10)


def _case(query, past=None, key=None, extra=None, outputs=3) -> Case:
    """What :func:`gqa_model`'s graph inputs are fed, for ``check_model``."""
    feeds: list = [In(F, query), In(F, key) if key else None, In(F, key) if key else None]
    if past is not None:
        feeds += [In(F, past), In(F, past)]
    if extra is not None:
        feeds += [None, None, In(F, extra)]
    return Case("GroupQueryAttention", MS, feeds, outputs=outputs)


PACKED = ("B", "S", 128)  # (4 + 2 * 2) heads of 16


@pytest.mark.parametrize("settings", [[{"B": 2, "S": 1, "P": 5}, {"B": 3, "S": 1, "P": 9}, {"B": 1, "S": 1, "P": 0}],
                                      [{"B": 1, "S": 4, "P": 5}, {"B": 1, "S": 7, "P": 2}]])
def test_growing_cache_presents_past_plus_new_tokens(settings):
    past = ("B", 2, "P", 16)
    verdict = check_model(gqa_model(PACKED, past), _case(PACKED, past), settings)
    assert verdict.problems == [] and verdict.exact
    assert verdict.inferred[1][1] == (B, 2, P + S, 16) and verdict.inferred[0][1] == (B, S, 64)


@pytest.mark.parametrize("settings", [[{"B": 2, "S": 1, "P": 5, "M": 16}, {"B": 1, "S": 1, "P": 0, "M": 8}],
                                      [{"B": 1, "S": 3, "P": 5, "M": 16}, {"B": 1, "S": 6, "P": 2, "M": 8}]])
def test_shared_buffer_larger_than_the_total_keeps_its_length(settings):
    past = ("B", 2, "M", 16)
    model = gqa_model(PACKED, past, past_length="in7")
    verdict = check_model(model, _case(PACKED, past, extra=("P",)), settings)
    assert verdict.problems == [] and verdict.exact
    assert verdict.inferred[1][1] == (B, 2, Sym.max(P + S, M), 16)


def test_without_a_cache_the_present_is_the_new_tokens():
    settings = [{"B": 2, "S": 4}, {"B": 1, "S": 1}]
    verdict = check_model(gqa_model(PACKED, None), _case(PACKED), settings)
    assert verdict.problems == [] and verdict.exact
    assert verdict.inferred[1][1] == (B, 2, S, 16)


def test_separate_key_and_value_with_output_qk():
    query, key, past = ("B", "S", 64), ("B", "S", 32), ("B", 2, "P", 16)
    model = gqa_model(query, past, packed=False, key=key, outputs=4, attributes={**HEADS, "qk_output": 1})
    settings = [{"B": 2, "S": 1, "P": 5}, {"B": 1, "S": 3, "P": 4}]
    verdict = check_model(model, _case(query, past, key, outputs=4), settings)
    assert verdict.problems == [] and verdict.exact
    assert verdict.inferred[3][1] == (B, 4, S, P + S)


def _one_node(inputs, attributes=None, outputs=3) -> Case:
    return Case("GroupQueryAttention", MS, inputs, {**HEADS, **(attributes or {})}, outputs=outputs)


def test_constant_total_sequence_length_with_a_shared_buffer():
    seqlens = In(I32, ("B",), lambda shape, rng: np.full(shape, 5, np.int32))
    case = _one_node([In(F, ("B", 1, 128)), None, None, In(F, ("B", 2, 16, 16)), In(F, ("B", 2, 16, 16)),
                      seqlens, Const(6, I32)], outputs=4, attributes={"qk_output": 2})
    verdict = check(case, [{"B": 2}, {"B": 3}])
    assert verdict.problems == [] and verdict.exact
    assert verdict.inferred[1][1] == (B, 2, 16, 16) and verdict.inferred[3][1] == (B, 4, 1, 6)


def test_windowed_cache_keeps_its_capacity():
    fill = lambda shape, rng: np.full(shape, 19, np.int32)  # noqa: E731
    case = _one_node([In(F, (1, "S", 128)), None, None, In(F, (1, 2, "C", 16)), In(F, (1, 2, "C", 16)),
                      In(I32, (1,), fill), In(I32, (), lambda shape, rng: np.array(20, np.int32))],
                     {"sliding_window_cache": 1, "local_window_size": 4})
    verdict = check(case, [{"S": 1, "C": 8}, {"S": 3, "C": 4}])
    assert verdict.problems == [] and verdict.exact


def test_unknown_total_leaves_the_present_length_unknown():
    # past 5 with total 6 grows to 6; past 16 with total 6 stays 16: no single answer without the data
    case = _one_node([In(F, ("B", 1, 128)), None, None, In(F, ("B", 2, "P", 16)), In(F, ("B", 2, "P", 16)),
                      In(I32, ("B",), lambda shape, rng: np.full(shape, 5, np.int32)),
                      In(I32, (), lambda shape, rng: np.array(6, np.int32))])
    verdict = check(case, [{"B": 2, "P": 5}, {"B": 1, "P": 16}])
    assert verdict.problems == []
    assert verdict.inferred[1][1] == (B, 2, None, 16)
    assert verdict.runs[0][1][1] == (2, 2, 6, 16) and verdict.runs[1][1][1] == (1, 2, 16, 16)


def gqa(inputs, attributes=None, outputs=3, data=None, names=None):
    ctx = run_rule("GroupQueryAttention", 1, inputs, {**HEADS, **(attributes or {})}, domain=MS, output_count=outputs,
              data=data, names=names)
    return [ctx.output_type(i) for i in range(ctx.output_count)]


def test_total_known_or_unknown_is_sound():
    inputs = [t(B, 1, 128), None, None, t(B, 2, 16, 16), t(B, 2, 16, 16), t(B, elem=INT32), t(elem=INT32)]
    names = ["q", "", "", "pk", "pv", "sk", "total"]
    known = gqa(inputs, names=names, data=[None] * 6 + [vec(7)])
    unknown = gqa(inputs, names=names)
    assert known[1] == t(B, 2, 16, 16) and unknown[1] == t(B, 2, None, 16)
    # a scalar total given as data of shape ()
    assert gqa(inputs, names=names, data=[None] * 6 + [Data((), (20,))])[1] == t(B, 2, 20, 16)


def test_key_present_but_unknown_is_not_read_as_packed():
    inputs = [t(B, S, 64), t(None), t(None), None, None, t(B, elem=INT32), t(elem=INT32)]
    y, key, _ = gqa(inputs, names=["q", "k", "v", "", "", "sk", "total"])
    assert y == t(B, S, 64) and key == t(B, 2, S, 16)
    y, key, _ = gqa([t(B, S, 64), None, None] + inputs[3:], names=["q", "", "", "", "", "sk", "total"])
    assert y == t(B, S, 32) and key == t(B, 2, S, 8)


def test_present_takes_the_cache_element_type_or_else_the_query_type():
    i8 = 3
    with_cache = gqa([t(1, 1, 128), None, None, t(1, 2, 8, 16, elem=i8), t(1, 2, 8, 16, elem=i8),
                      t(1, elem=INT32), t(elem=INT32)], names=["q", "", "", "pk", "pv", "sk", "total"])
    assert with_cache[1].elem == i8
    without = gqa([t(1, 4, 128), None, None, None, None, t(1, elem=INT32), t(elem=INT32)],
                  names=["q", "", "", "", "", "sk", "total"])
    assert without[1] == t(1, 2, 4, 16)


@pytest.mark.parametrize("inputs, attributes, outputs, message", [
    ([t(2, 128)], {}, 1, "rank"),
    ([t(2, 1, 128)], {"num_heads": 3}, 1, "do not split evenly"),
    ([t(2, 1, 128)], {"kv_num_heads": 0}, 1, "positive"),
    ([t(2, 1, 128), None, None, t(2, 2, 8, 16), t(2, 2, 8, 16)], {}, 4, "qk_output"),
    ([t(2, 1, 128), None, None, t(3, 2, 8, 16), t(3, 2, 8, 16)], {}, 3, "batch sizes"),
    ([t(2, 1, 128), None, None, t(2, 2, 8, 16), t(2, 2, 9, 16)], {}, 3, "cache lengths"),
])
def test_invalid_nodes(inputs, attributes, outputs, message):
    names = ["q", "", "", "pk", "pv"][:len(inputs)]
    names = [n if inputs[i] is not None else "" for i, n in enumerate(names)]
    inputs = inputs + [None] * (5 - len(inputs)) + [t(2, elem=INT32), t(elem=INT32)]
    names = names + [""] * (5 - len(names)) + ["sk", "total"]
    with pytest.raises(InferenceError, match=message):
        gqa(inputs, attributes, outputs, names=names)


@pytest.mark.parametrize("extra", [{"smooth_softmax": 1}, {"rotary_interleaved": 1}, {"local_window_size": 2},
                                   {"softcap": 30.0}])
def test_fused_rotary_and_softmax_variants_keep_the_shapes(extra):
    past = ("B", 2, "P", 16)
    attributes = {**HEADS, "do_rotary": 1, **extra}
    model = gqa_model(PACKED, past, outputs=4, attributes={**attributes, "qk_output": 2})
    # cos/sin caches (64, 8) as initializers after the graph's own inputs
    node = model.graph.node[-1]
    node.input.extend(["cos", "sin"])
    model.graph.initializer.extend([helper.make_tensor(name, TensorProto.FLOAT, (64, 8), [0.5] * 512)
                                    for name in ("cos", "sin")])
    verdict = check_model(model, _case(PACKED, past, outputs=4), [{"B": 2, "S": 1, "P": 5}, {"B": 1, "S": 4, "P": 3}])
    assert verdict.problems == [] and verdict.exact
    assert verdict.inferred[3][1] == (B, 4, S, P + S)

