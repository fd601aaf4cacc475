"""Many values and deep scopes: graphs with more distinct symbolic dims than the symbol cache
holds, and subgraphs nested many levels deep reading values from every level around them,
inferred as onnx infers them."""
from __future__ import annotations

import onnx
from onnx import TensorProto, helper

import opspec
from opspec.runtime.shape import Sym, parse_dim

F = TensorProto.FLOAT


def _dims(value_info: onnx.ValueInfoProto) -> list[object]:
    return [d.dim_value if d.HasField("dim_value") else d.dim_param or None
            for d in value_info.type.tensor_type.shape.dim]


def test_70000_distinct_symbolic_dims_are_inferred_as_onnx_infers_them():
    count, rank = 7_000, 10  # 70,000 names: more than the plain-symbol cache keeps
    inputs = [helper.make_tensor_value_info(f"x{i}", F, [f"s{i}_{j}" for j in range(rank)]) for i in range(count)]
    nodes = [helper.make_node("Relu", [f"x{i}"], [f"y{i}"]) for i in range(count)]
    outputs = [helper.make_tensor_value_info(f"y{i}", F, None) for i in range(count)]
    model = helper.make_model(helper.make_graph(nodes, "g", inputs, outputs), opset_imports=[helper.make_opsetid("", 17)])
    ours = opspec.infer_shapes(model)
    theirs = onnx.shape_inference.infer_shapes(model)
    assert [_dims(v) for v in ours.graph.output] == [_dims(v) for v in theirs.graph.output]
    assert _dims(ours.graph.output[-1]) == [f"s{count - 1}_{j}" for j in range(rank)]


def test_plain_symbols_made_again_past_the_cache_are_equal_and_compute_alike():
    names = [f"plain_symbol_{i}" for i in range(70_000)]
    first = [Sym(name) for name in names]
    again = [Sym(name) for name in names]
    assert first == again and {hash(a) == hash(b) for a, b in zip(first, again)} == {True}
    late = again[-1]
    assert late.name == str(late) == names[-1] and late.is_symbol
    assert late + late == 2 * first[-1] and str(late * 3 + 1) == f"3*{names[-1]}+1"
    parsed = parse_dim(f"{names[-1]}+1")
    assert late - first[-1] == 0 and parsed is not None and parsed - late == 1
    assert late != Sym(names[0]) and (late + 1) // 1 == late + 1


def _nested_ifs(depth: int) -> onnx.ModelProto:
    """``depth`` Ifs, each branch holding the next; the innermost adds the outermost input to a
    value of every level's own (``v0`` ... ``v{depth-1}``)."""
    inner_out = f"y{depth}"
    body: list[onnx.NodeProto] = [helper.make_node("Add", ["x", f"v{depth - 1}"], [inner_out])]
    for level in reversed(range(depth)):
        out = f"y{level}"
        branch = helper.make_graph(body, f"b{level}", [], [helper.make_tensor_value_info(f"y{level + 1}", F, None)])
        body = [helper.make_node("Relu", ["x" if level == 0 else f"v{level - 1}"], [f"v{level}"]),
                helper.make_node("If", ["c"], [out], then_branch=branch, else_branch=branch)]
    graph = helper.make_graph(body, "nested", [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                                                helper.make_tensor_value_info("x", F, ["N", 4])],
                              [helper.make_tensor_value_info("y0", F, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_values_of_every_enclosing_graph_are_visible_many_levels_down():
    model = _nested_ifs(8)
    ours = opspec.infer(model)
    theirs = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    inferred = ours.model if isinstance(ours.model, onnx.ModelProto) else onnx.ModelProto.FromString(ours.model)
    assert not ours.errors
    assert _dims(inferred.graph.output[0]) == _dims(theirs.graph.output[0]) == ["N", 4]
