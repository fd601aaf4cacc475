"""A nested graph or function body whose inference makes up fresh symbols is reused with new
fresh symbols in their place: nesting costs linear time, and two inferences never share an
unknown size."""
from __future__ import annotations

import re
from typing import Any

import onnx
import pytest
from onnx import TensorProto, helper

from opspec.runtime.contract.context import Subgraph
from opspec.runtime.contract.values import Data, SequenceType, TensorType
from opspec.runtime.inference import functions, subgraph_reuse
from opspec.runtime.inference.fresh_symbols import NotRenamable, fresh_in, renewed
from opspec.runtime.shape import parse_dim
from opspec.runtime.shape.sym import Sym
from opspec.runtime.shape.symbols import SymbolTable
from test_subgraph_reuse import counted_walks

I64, B = TensorProto.INT64, TensorProto.BOOL
LOCAL = [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)]


def nonzero_in_nested_loops(depth: int) -> onnx.ModelProto:
    """Loops nested ``depth`` deep, the innermost body applying NonZero to the carried value:
    each inference of it makes up a fresh symbol (the count of non-zero elements)."""
    inner = None
    for level in range(depth):
        step = helper.make_node("NonZero", [f"x{level}"], [f"y{level}"]) if inner is None else \
            helper.make_node("Loop", ["M", "", f"x{level}"], [f"y{level}"], body=inner)
        inner = helper.make_graph(
            [step, helper.make_node("Identity", ["c"], [f"c{level}"])], f"body{level}",
            [helper.make_tensor_value_info(f"i{level}", I64, []), helper.make_tensor_value_info("c", B, []),
             helper.make_tensor_value_info(f"x{level}", I64, None)],
            [helper.make_tensor_value_info(f"c{level}", B, []), helper.make_value_info(f"y{level}", helper.TypeProto())])
    graph = helper.make_graph([helper.make_node("Loop", ["M", "", "x"], ["y"], body=inner)], "g",
                              [helper.make_tensor_value_info("M", I64, []), helper.make_tensor_value_info("x", I64, [2, 3])],
                              [helper.make_value_info("y", helper.TypeProto())])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def twice_called_chain(depth: int) -> onnx.ModelProto:
    """Functions F0 .. F(depth-1), each calling the next twice (the last applies NonZero); the
    graph calls F0 twice."""
    functions = []
    for level in range(depth):
        if level == depth - 1:
            nodes = [helper.make_node("NonZero", ["x"], ["y"])]
        else:
            nodes = [helper.make_node(f"F{level + 1}", ["x"], [f"t{k}"], domain="local") for k in range(2)]
            nodes.append(helper.make_node("Identity", ["t0"], ["y"]))
        functions.append(helper.make_function("local", f"F{level}", ["x"], ["y"], nodes, LOCAL))
    graph = helper.make_graph([helper.make_node("F0", ["x"], ["y"], domain="local"),
                               helper.make_node("F0", ["x"], ["z"], domain="local")], "g",
                              [helper.make_tensor_value_info("x", I64, [2, 3])],
                              [helper.make_value_info(name, helper.TypeProto()) for name in ("y", "z")])
    return helper.make_model(graph, opset_imports=LOCAL, functions=functions)


def _walks(monkeypatch: pytest.MonkeyPatch, model: onnx.ModelProto) -> tuple[int, Any]:
    return counted_walks(monkeypatch, model)


def _dims(result: Any, name: str) -> list[object]:
    value = next(v for v in result.model.graph.output if v.name == name)
    return [d.dim_param or d.dim_value for d in value.type.tensor_type.shape.dim]


def test_nested_loops_making_fresh_symbols_are_walked_a_number_of_times_linear_in_their_depth(monkeypatch):
    walks, result = _walks(monkeypatch, nonzero_in_nested_loops(12))
    assert walks <= 4 * 12, walks
    assert _dims(result, "y")[0] == 2


def _numbered_in_order(model: onnx.ModelProto) -> str:
    """The model as text, its fresh symbols renumbered in the order they first appear."""
    order: dict[str, str] = {}
    return re.sub(r"unk__\d+", lambda m: order.setdefault(m.group(), f"F{len(order)}"), str(model))


@pytest.mark.parametrize("model", [nonzero_in_nested_loops(6), twice_called_chain(6)], ids=["loops", "calls"])
def test_reuse_with_fresh_symbols_gives_the_answer_inferring_every_time_gives(monkeypatch, model):
    _, reused = _walks(monkeypatch, model)
    monkeypatch.setattr(subgraph_reuse, "RESULTS_PER_GRAPH", 0)
    monkeypatch.setattr(functions, "kept_names", _never_kept)
    _, every_time = _walks(monkeypatch, model)
    assert _numbered_in_order(reused.model) == _numbered_in_order(every_time.model)


def _never_kept(value, symbols, mark):
    return None


def test_calls_reused_with_fresh_symbols_are_linear_and_never_share_an_unknown_size(monkeypatch):
    walks, result = _walks(monkeypatch, twice_called_chain(14))
    assert walks <= 3 * 14, walks
    y, z = _dims(result, "y"), _dims(result, "z")
    assert y[0] == z[0] == 2
    assert isinstance(y[1], str) and isinstance(z[1], str) and y[1] != z[1]  # two calls, two unknown counts


def test_renewed_replaces_each_made_name_by_a_new_one_in_every_kind_of_value():
    symbols = SymbolTable(["N"])
    u0, u1 = symbols.fresh(), symbols.fresh()
    expression = parse_dim(f"floor(({u0} - 1)/2) + 1")
    value = (Subgraph("g", (TensorType(1, (u0, 3)),), (SequenceType(TensorType(1, (expression, Sym("N")))),)),
             {"a": Data((2,), [u1 * 2, 5]), "b": TensorType(7, None)})
    made = fresh_in(value, [str(u0), str(u1), "unk__9"])
    assert made == (str(u0), str(u1))  # a name made and dropped again gets no new one
    renamed = renewed(value, made, symbols)
    new0, new1 = symbols.names_issued[-2:]
    subgraph, values = renamed
    assert subgraph.inputs == (TensorType(1, (Sym(new0), 3)),)
    assert subgraph.outputs[0].elem.shape == (parse_dim(f"floor(({new0} - 1)/2) + 1"), Sym("N"))
    assert values["a"] == Data((2,), [Sym(new1) * 2, 5]) and values["b"] == TensorType(7, None)
    assert value[0].inputs == (TensorType(1, (u0, 3)),)  # the kept value is left as it was


def test_a_value_of_an_unknown_kind_is_not_renamed():
    with pytest.raises(NotRenamable):
        fresh_in([TensorType(1, (Sym("unk__0"),)), object()], ["unk__0"])
    assert fresh_in([object()], []) == ()  # nothing made: nothing to rename
