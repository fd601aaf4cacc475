"""A subgraph's scope: its own values first, the enclosing graphs' visible by name, writes kept inside."""
from __future__ import annotations

from opspec.runtime.inference.subgraphs import Scope


def test_a_scope_reads_through_to_the_graphs_around_it_and_writes_inside():
    outer = {"x": 1, "y": 2}
    middle = Scope(outer)
    middle["y"] = 3
    inner = Scope(middle)
    assert (inner.get("x"), inner.get("y"), inner.get("z"), inner.get("z", 0)) == (1, 3, None, 0)
    inner["x"] = 4
    assert inner.get("x") == 4 and outer["x"] == 1 and dict(inner) == {"x": 4}
    assert "y" in inner and "z" not in inner


def test_a_scope_is_true_when_any_enclosing_graph_holds_a_value():
    assert not Scope(Scope({}))
    assert Scope(Scope({"shape": 1}))


def test_a_branch_node_reads_data_known_only_in_the_enclosing_graph():
    from onnx import TensorProto, helper

    import opspec

    # Only the outer graph knows the shape tensor's value; the branch's Reshape must see it.
    branch = helper.make_graph(
        [helper.make_node("Reshape", ["x", "target"], ["reshaped"])], "branch", [],
        [helper.make_tensor_value_info("reshaped", TensorProto.FLOAT, None)])
    graph = helper.make_graph(
        [helper.make_node("Constant", [], ["target"], value=helper.make_tensor("t", TensorProto.INT64, [2], [3, 4])),
         helper.make_node("If", ["cond"], ["y"], then_branch=branch, else_branch=branch)], "g",
        [helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    inferred = opspec.infer_shapes(model)
    assert [d.dim_value for d in inferred.graph.output[0].type.tensor_type.shape.dim] == [3, 4]
