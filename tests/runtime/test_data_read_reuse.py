"""Results kept by the data of the inputs a rule read: nodes differing only in data their rule
did not look at share one result, and nodes differing in data it read each get their own."""
from __future__ import annotations

from onnx import TensorProto, helper

from opspec.runtime.contract import TensorType
from opspec.runtime.inference.api import infer

I64 = TensorProto.INT64


def _gathering(calls):
    """A rule that reads input 1's data only when input 0 has data (as Gather's does), and then
    shapes its output after the element picked."""
    def rule(ctx):
        calls.append(ctx.node_name)
        source = ctx.input_data(0)
        picks = ctx.input_data(1) if source is not None else None
        ctx.set_output_shape(0, (source.values[picks.values[0]],) if picks is not None else ctx.input_shape(0))
    return rule


def test_nodes_differing_only_in_data_their_rule_did_not_read_share_one_result(fake_rules):
    """Where input 0 has no data the rule never reads input 1's, so nodes differing only there
    share a result; where it has some, the rule reads both, and each pair of values gets its own
    run and its own answer."""
    calls: list[str] = []
    fake_rules["broadcast"] = _gathering(calls)
    picks = [helper.make_node("Constant", [], [f"I{i}"], value_ints=[i]) for i in range(3)]
    source = helper.make_node("Constant", [], ["S"], value_ints=[5, 6, 7])
    on_x = [helper.make_node("Add", ["X", f"I{i}"], [f"x{i}"], name=f"x{i}") for i in range(3)]
    on_s = [helper.make_node("Add", ["S", f"I{i}"], [f"s{n}"], name=f"s{n}") for n, i in enumerate((0, 1, 1))]
    names = [f"x{i}" for i in range(3)] + [f"s{i}" for i in range(3)]
    graph = helper.make_graph(picks + [source] + on_x + on_s, "g", [helper.make_tensor_value_info("X", I64, [3])],
                              [helper.make_tensor_value_info(name, 0, None) for name in names])
    result = infer(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    assert calls == ["x0", "s0", "s1"]  # s2 is s1 again, in all the rule read
    assert [result.values[f"x{i}"][0] for i in range(3)] == [TensorType(I64, (3,))] * 3
    assert [result.values[f"s{i}"][0] for i in range(3)] == [TensorType(I64, (n,)) for n in (5, 6, 6)]
