"""`opspec cost`: node costs against hand counts, parameters against the initializers, activation
bytes against onnxruntime's own outputs, control flow, and the command line."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import opspec
from opspec.cli import main
from opspec.runtime.shape import Sym

B, S = Sym("B"), Sym("S")
RNG = np.random.default_rng(0)


def _model(nodes: list[Any], inputs: list[Any], outputs: list[Any], initializers: Sequence[Any] = (),
           opset: int = 21) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def _weight(name: str, *shape: int) -> onnx.TensorProto:
    return numpy_helper.from_array(RNG.standard_normal(shape).astype(np.float32), name)


def _by_name(report: Any) -> dict[str, Any]:
    return {node.name: node.cost for node in report.nodes}


def test_matmul_and_gemm_macs_are_the_hand_count() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "S", 64])
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [32, 10])
    y = helper.make_tensor_value_info("g", TensorProto.FLOAT, None)
    model = _model([helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
                    helper.make_node("Gemm", ["a", "v", "c"], ["g"], name="gemm", transA=1)],
                   [x, a], [y, helper.make_tensor_value_info("m", TensorProto.FLOAT, None)],
                   [_weight("w", 64, 48), _weight("v", 32, 7), _weight("c", 7)])
    costs = _by_name(opspec.cost(model))
    assert costs["mm"].macs == B * S * 48 * 64            # each of B*S*48 outputs sums 64 products
    assert costs["mm"].total_flops == 2 * B * S * 48 * 64  # one MAC is two FLOPs
    assert costs["gemm"].macs == 10 * 7 * 32               # A is (K, M) = (32, 10) transposed
    assert costs["gemm"].flops == 10 * 7                   # the bias added to each output


def test_conv_macs_are_the_hand_count_with_groups_and_strides() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8, 32, 32])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    conv = helper.make_node("Conv", ["x", "w", "b"], ["y"], name="conv", group=2, strides=[2, 2], pads=[1, 1, 1, 1])
    report = opspec.cost(_model([conv], [x], [y], [_weight("w", 16, 4, 3, 3), _weight("b", 16)]), {"N": 3})
    out_hw = (32 + 2 - 3) // 2 + 1
    hand = 3 * 16 * out_hw * out_hw * (8 // 2) * 3 * 3    # every output: C/group * kH * kW products
    assert report.nodes[0].cost.macs == hand
    assert report.nodes[0].cost.flops == 3 * 16 * out_hw * out_hw


def test_one_formula_gives_every_sequence_length() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "S", 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    model = _model([helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Tanh", ["h"], ["y"])],
                   [x], [y], [_weight("w", 64, 16)])
    symbolic = opspec.cost(model)
    assert symbolic.symbols == ("B", "S")
    for length in (1, 7, 128):
        concrete = opspec.cost(model, {"B": 2, "S": length})
        assert concrete.total.macs == 2 * length * 16 * 64 == symbolic.total.macs.evaluate({"B": 2, "S": length})
        assert concrete.total.transcendental == 2 * length * 16
        assert concrete.symbols == ()


def test_parameters_are_the_initializers_element_counts_and_external_data_is_not_read(tmp_path: Path) -> None:
    weights = [_weight("w1", 300, 200), _weight("w2", 200), _weight("w3", 200, 10)]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 300])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    model = _model([helper.make_node("Gemm", ["x", "w1", "w2"], ["h"]), helper.make_node("MatMul", ["h", "w3"], ["y"])],
                   [x], [y], weights)
    expected = sum(numpy_helper.to_array(t).size for t in weights)
    report = opspec.cost(model)
    assert report.parameters == expected
    assert report.weight_bytes == 4 * expected and report.external_weight_bytes == 0

    path = tmp_path / "m.onnx"
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True, location="w.bin",
                    size_threshold=0)
    (tmp_path / "w.bin").write_bytes(b"")  # never read: counts come from the tensors' dims
    external = opspec.cost(str(path))
    assert external.parameters == expected
    assert external.external_weight_bytes == external.weight_bytes == 4 * expected


def test_activation_bytes_are_what_onnxruntime_returns_for_every_value() -> None:
    ort = pytest.importorskip("onnxruntime")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 16, 16])
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Shape", ["p"], ["s"]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Cast", ["f"], ["h"], to=TensorProto.FLOAT16),
        helper.make_node("ReduceMax", ["f"], ["m"], keepdims=0),
        helper.make_node("Greater", ["m", "zero"], ["g"]),
    ]
    model = _model(nodes, [x], [], [_weight("w", 4, 3, 3, 3), numpy_helper.from_array(np.array(0, dtype=np.float32), "zero")])
    report = opspec.cost(model, {"N": 2})
    model.graph.output.extend(helper.make_empty_tensor_value_info(v.name) for v in report.activations[1:])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {"x": RNG.standard_normal((2, 3, 16, 16)).astype(np.float32)}
    produced = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))
    produced["x"] = feeds["x"]
    sizes = {v.name: v.bytes for v in report.activations}
    assert sizes == {name: array.nbytes for name, array in produced.items()}
    assert report.activation_bytes == sum(array.nbytes for array in produced.values())
    # alive at once: the Relu's input and output is the most (x is freed after the Conv reads it)
    assert report.peak_activation_bytes == produced["c"].nbytes + produced["r"].nbytes > \
        produced["x"].nbytes + produced["c"].nbytes


def test_a_value_of_unknown_size_says_so_and_is_not_guessed() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])
    y = helper.make_tensor_value_info("y", TensorProto.INT64, None)
    model = _model([helper.make_node("NonZero", ["x"], ["nz"]), helper.make_node("NonMaxSuppression", ["b", "s"], ["y"])],
                   [x, helper.make_tensor_value_info("b", TensorProto.FLOAT, [1, "K", 4]),
                    helper.make_tensor_value_info("s", TensorProto.FLOAT, [1, 1, "K"])], [y])
    report = opspec.cost(model, {"N": 5, "K": 3})
    nms = report.nodes[1]
    assert nms.cost.macs is None and "depends on the data" in nms.note
    assert report.unknown_nodes["macs"] == 1
    assert {v.name: v.bytes for v in report.activations}["nz"] is not None  # (1, unk) ... known rank only
    assert report.total.bytes_read is not None


def _loop_model(trips: Any) -> onnx.ModelProto:
    body = helper.make_graph(
        [helper.make_node("MatMul", ["h", "w"], ["h2"]), helper.make_node("Identity", ["cond"], ["cond_out"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
                 helper.make_tensor_value_info("h", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h2", TensorProto.FLOAT, [4, 8])])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])
    inputs = [x] if trips is not None else [x, helper.make_tensor_value_info("n", TensorProto.INT64, [])]
    initializers = [_weight("w", 8, 8), numpy_helper.from_array(np.array(True), "t")]
    if trips is not None:
        initializers.append(numpy_helper.from_array(np.array(trips, dtype=np.int64), "n"))
    loop = helper.make_node("Loop", ["n", "t", "x"], ["y"], name="loop", body=body)
    return _model([loop], inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializers)


def test_loop_is_its_body_times_the_trip_count_or_a_symbol_for_it() -> None:
    assert opspec.cost(_loop_model(5)).nodes[0].cost.macs == 5 * 4 * 8 * 8
    report = opspec.cost(_loop_model(None))
    assert report.nodes[0].cost.macs == Sym("trips_loop") * 256 and "trips_loop" in report.symbols
    assert opspec.cost(_loop_model(None), {"trips_loop": 3}).total.macs == 3 * 256


def test_if_costs_its_larger_branch_and_einsum_its_index_space() -> None:
    def branch(size: int) -> onnx.GraphProto:
        return helper.make_graph([helper.make_node("MatMul", ["x", f"w{size}"], [f"o{size}"])], f"b{size}", [],
                                 [helper.make_tensor_value_info(f"o{size}", TensorProto.FLOAT, [2, size])])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])
    c = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    nodes = [helper.make_node("If", ["c"], ["y"], name="if", then_branch=branch(3), else_branch=branch(5)),
             helper.make_node("Einsum", ["x", "e"], ["z"], name="einsum", equation="bi,ij->bj")]
    model = _model(nodes, [x, c], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                                   helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
                   [_weight("w3", 8, 3), _weight("w5", 8, 5), _weight("e", 8, 6)])
    costs = _by_name(opspec.cost(model))
    assert costs["if"].macs == 2 * 5 * 8
    assert costs["einsum"].macs == 2 * 8 * 6


def test_kv_cache_bytes_are_formulas_of_the_past_length() -> None:
    past = helper.make_tensor_value_info("past_key", TensorProto.FLOAT16, ["B", 4, "past_S", 16])
    new = helper.make_tensor_value_info("key", TensorProto.FLOAT16, ["B", 4, "S", 16])
    present = helper.make_tensor_value_info("present_key", TensorProto.FLOAT16, None)
    model = _model([helper.make_node("Concat", ["past_key", "key"], ["present_key"], axis=2)], [past, new], [present])
    kv = opspec.cost(model).kv_cache
    assert kv.past_inputs == ("past_key",) and kv.present_outputs == ("present_key",)
    assert kv.past_bytes == 128 * B * Sym("past_S")
    assert kv.present_bytes == 128 * B * Sym("past_S") + 128 * B * S


def test_the_input_model_is_not_changed() -> None:
    model = _loop_model(2)
    before = model.SerializeToString()
    opspec.cost(model)
    assert model.SerializeToString() == before


def test_command_line_json_and_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.onnx"
    onnx.save_model(_loop_model(None), path)
    assert main(["cost", str(path), "--format", "json", "--set", "trips_loop=2"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["nodes"][0]["name"] == "loop" and document["nodes"][0]["op_type"] == "Loop"
    assert document["nodes"][0]["macs"] == 512 and document["nodes"][0]["flops"] == 1024
    assert document["total"]["macs"] == 512 and document["total"]["parameters"] == 65
    assert main(["cost", str(path)]) == 0
    text = capsys.readouterr().out
    assert "256*trips_loop" in text and "FLOPs = 2 x MACs" in text and "parameters: 65" in text
    assert main(["cost", str(path), "--set", "S=x"]) == 2
    assert "expected NAME=N" in capsys.readouterr().err
    assert main(["cost", str(tmp_path / "missing.onnx")]) == 2


def test_every_op_declares_a_cost_or_why_not_onnxruntimes_too() -> None:
    from opspec.runtime.defs import INFERENCE

    missing = [f"{s.domain}:{s.name}-{s.since_version}" for s in INFERENCE.get_all_schemas_with_history() if not s.cost]
    assert missing == []
    reasons = {s.cost["unknown"] for s in INFERENCE.get_all_schemas_with_history() if "unknown" in s.cost}
    assert all(reason.strip() and not reason.lower().startswith("todo") for reason in reasons)


def test_onnxruntime_ops_cost_as_declared() -> None:
    """MatMulNBits reads K from its attribute; GroupQueryAttention attends over the present cache."""
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, ["B", "S", 64])
    q = helper.make_tensor_value_info("q", TensorProto.FLOAT, [1, 3, 64])
    kv = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 3, 32]) for n in ("k", "v")]
    past = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 2, 5, 16]) for n in ("pk", "pv")]
    extra = [helper.make_tensor_value_info("seqlens", TensorProto.INT32, [1])]
    nodes = [helper.make_node("MatMulNBits", ["a", "wq", "scales"], ["y"], name="nbits", domain="com.microsoft",
                              K=64, N=96, bits=4, block_size=32),
             helper.make_node("GroupQueryAttention", ["q", "k", "v", "pk", "pv", "seqlens", "total"],
                              ["o", "present_k", "present_v"], name="gqa", domain="com.microsoft",
                              num_heads=4, kv_num_heads=2)]
    packed = numpy_helper.from_array(np.zeros((96, 2, 16), np.uint8), "wq")
    model = helper.make_model(helper.make_graph(nodes, "g", [a, q, *kv, *past, *extra],
                                                [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                                                 helper.make_tensor_value_info("o", TensorProto.FLOAT, None)],
                                                [packed, _weight("scales", 96, 2),
                                                 numpy_helper.from_array(np.array(8, np.int32), "total")]),
                              opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])
    costs = _by_name(opspec.cost(model))
    assert costs["nbits"].macs == 96 * 64 * B * S
    # each of the 3*64 outputs: a product over the 8 cached positions for the weights, one for V
    assert costs["gqa"].macs == 2 * 3 * 64 * 8


def test_nested_branches_cost_their_larger_side_at_every_level() -> None:
    inner = helper.make_graph([helper.make_node("Neg", ["x"], ["o0"])], "g0", [],
                              [helper.make_tensor_value_info("o0", TensorProto.FLOAT, [2])])
    for level in range(1, 25):
        chain = [helper.make_node("Identity", ["x"], [f"e{level}"])] if level % 3 == 0 else \
            [helper.make_node("Neg", ["x"], [f"e{level}"])] if level % 3 == 1 else \
            [helper.make_node("Neg", ["x"], [f"t{level}"]), helper.make_node("Neg", [f"t{level}"], [f"e{level}"])]
        other = helper.make_graph(chain, f"e{level}", [],
                                  [helper.make_tensor_value_info(f"e{level}", TensorProto.FLOAT, [2])])
        inner = helper.make_graph([helper.make_node("If", ["c"], [f"o{level}"], then_branch=inner, else_branch=other)],
                                  f"g{level}", [], [helper.make_tensor_value_info(f"o{level}", TensorProto.FLOAT, [2])])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    c = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    model = helper.make_model(inner, opset_imports=[helper.make_opsetid("", 21)])
    model.graph.input.extend([x, c])
    report = opspec.cost(model)
    assert report.nodes[0].cost.flops == 4  # two Negs of 2 elements: the largest branch anywhere


def test_a_symbol_set_that_the_model_does_not_name_is_noted() -> None:
    report = opspec.cost(_loop_model(None), {"trips_loop": 2, "S": 3})
    assert report.total.macs == 512
    assert report.notes == ("no count names S (the model's symbols: trips_loop)",)


def test_no_op_leaves_its_cost_for_later() -> None:
    from opspec.runtime.defs import INFERENCE

    pending = sorted({f"{s.domain}:{s.name}" for s in INFERENCE.get_all_schemas_with_history()
                      if "not declared" in s.cost.get("unknown", "") or " yet" in s.cost.get("unknown", "")})
    assert pending == []


def _ms_model(node: Any, inputs: list[Any]) -> onnx.ModelProto:
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info(node.output[0], TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])


@pytest.mark.parametrize("rule, macs, flops, transcendental", [
    # 3 tokens; 4 query heads each read a (d_k 8, d_v 16) state: 3*4*128; the 2 key/value heads each add
    # k v^T (3*2*128) and, with a delta rule, read S^T k first (3*2*128 more)
    ("gated_delta", 3 * 4 * 128 + 3 * 2 * 2 * 128,
     3 * 2 * 128 + 3 * 2 * 16 * 2 + 3 * 64,  # the decay of each state, v - S^T k and beta per value, the scale
     3 * 2),                                 # one exp per decay value (per token and head)
    ("linear", 3 * 4 * 128 + 3 * 2 * 128, 3 * 64, 0),
])
def test_linear_attention_costs_are_the_hand_count_of_its_update_rule(
        rule: str, macs: int, flops: int, transcendental: int) -> None:
    shapes = {"q": [1, 3, 4 * 8], "k": [1, 3, 2 * 8], "v": [1, 3, 2 * 16], "g": [1, 3, 2], "b": [1, 3, 2]}
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n, shape in shapes.items()]
    node = helper.make_node("LinearAttention", ["q", "k", "v", "", "g", "b"], ["o", "state"], name="la",
                            domain="com.microsoft", q_num_heads=4, kv_num_heads=2, update_rule=rule)
    cost = _by_name(opspec.cost(_ms_model(node, inputs)))["la"]
    assert (cost.macs, cost.flops, cost.transcendental) == (macs, flops, transcendental)


def test_causal_conv_with_state_costs_a_product_per_tap_and_a_sigmoid_with_silu() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", 4, "S"])
    inputs = [x, helper.make_tensor_value_info("w", TensorProto.FLOAT, [4, 1, 3]),
              helper.make_tensor_value_info("bias", TensorProto.FLOAT, [4])]
    for activation, extra in (("silu", 1), ("none", 0)):
        node = helper.make_node("CausalConvWithState", ["x", "w", "bias"], ["y", "state"], name="conv",
                                domain="com.microsoft", activation=activation)
        cost = _by_name(opspec.cost(_ms_model(node, inputs)))["conv"]
        assert cost.macs == B * 4 * S * 3                 # three taps per output value
        assert cost.flops == (1 + extra) * B * 4 * S      # the bias, and SiLU's product
        assert cost.transcendental == extra * B * 4 * S   # SiLU's sigmoid
