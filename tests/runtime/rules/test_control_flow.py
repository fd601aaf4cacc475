"""Tests for If, Loop and Scan, through whole models (their rules read inferred subgraphs)."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import opspec
from opspec.runtime.contract import TensorType
from opspec.runtime.shape import Sym

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
N = Sym("N")


def _model(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_value_info(o, helper.TypeProto()) for o in outputs],
                              list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def _infer(model):
    result = opspec.infer(model, data_prop=True)
    assert result.errors == [] and not result.unknown_ops, result.errors
    return {name: value for name, (value, _) in result.values.items()}


def _branch(name, node, output):
    return helper.make_graph([node], name, [], [helper.make_value_info(output, helper.TypeProto())])


def test_if_keeps_what_both_branches_agree_on():
    then = _branch("then", helper.make_node("Concat", ["X", "X"], ["a"], axis=1), "a")  # (N, 6)
    other = _branch("else", helper.make_node("Concat", ["X", "X"], ["b"], axis=0), "b")  # (2N, 3)
    node = helper.make_node("If", ["c"], ["Y"], then_branch=then, else_branch=other)
    typed = _infer(_model([node], [helper.make_tensor_value_info("c", B, []),
                                   helper.make_tensor_value_info("X", F, ["N", 3])], ["Y"]))
    assert typed["Y"] == TensorType(F, (None, None))


def test_if_branches_of_different_ranks_give_an_unknown_rank():
    then = _branch("then", helper.make_node("Identity", ["X"], ["a"]), "a")
    other = _branch("else", helper.make_node("Flatten", ["X"], ["b"], axis=0), "b")
    node = helper.make_node("If", ["c"], ["Y"], then_branch=then, else_branch=other)
    typed = _infer(_model([node], [helper.make_tensor_value_info("c", B, []),
                                   helper.make_tensor_value_info("X", F, ["N", 3, 2])], ["Y"]))
    assert typed["Y"] == TensorType(F, None)


def _loop_body(condition_out="cond_in"):
    """Body: carried s (N, 3) += X (an outer value); scan output the running s."""
    nodes = [helper.make_node("Add", ["s_in", "X"], ["s_out"]),
             helper.make_node("Identity", [condition_out], ["cond_out"]),
             helper.make_node("Identity", ["s_out"], ["scan"])]
    return helper.make_graph(nodes, "body", [helper.make_tensor_value_info("i", I64, []),
                                             helper.make_tensor_value_info("cond_in", B, []),
                                             helper.make_value_info("s_in", helper.TypeProto())],
                             [helper.make_value_info(o, helper.TypeProto()) for o in ("cond_out", "s_out", "scan")])


def test_a_for_loop_stacks_scan_outputs_by_its_trip_count():
    m = numpy_helper.from_array(np.array(5, dtype=np.int64), "M")
    node = helper.make_node("Loop", ["M", "", "s0"], ["s_final", "stacked"], body=_loop_body())
    typed = _infer(_model([node], [helper.make_tensor_value_info("s0", F, ["N", 3]),
                                   helper.make_tensor_value_info("X", F, ["N", 3])], ["s_final", "stacked"], [m]))
    assert typed["s_final"] == TensorType(F, (N, 3))
    assert typed["stacked"] == TensorType(F, (5, N, 3))


def test_a_while_loop_stacks_along_a_fresh_dim():
    node = helper.make_node("Loop", ["", "c", "s0"], ["s_final", "stacked"], body=_loop_body())
    typed = _infer(_model([node], [helper.make_tensor_value_info("c", B, []),
                                   helper.make_tensor_value_info("s0", F, ["N", 3]),
                                   helper.make_tensor_value_info("X", F, ["N", 3])], ["s_final", "stacked"]))
    count = typed["stacked"].shape[0]
    assert type(count) is Sym and count not in (N,) and typed["stacked"].shape[1:] == (N, 3)


def test_loop_carried_values_that_grow_are_relaxed():
    body = helper.make_graph(
        [helper.make_node("Concat", ["s_in", "X"], ["s_out"], axis=0), helper.make_node("Identity", ["c"], ["co"])],
        "body", [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("c", B, []),
                 helper.make_value_info("s_in", helper.TypeProto())],
        [helper.make_value_info(o, helper.TypeProto()) for o in ("co", "s_out")])
    m = numpy_helper.from_array(np.array(3, dtype=np.int64), "M")
    node = helper.make_node("Loop", ["M", "", "s0"], ["s_final"], body=body)
    typed = _infer(_model([node], [helper.make_tensor_value_info("s0", F, [1, 3]),
                                   helper.make_tensor_value_info("X", F, [1, 3])], ["s_final"], [m]))
    assert typed["s_final"] == TensorType(F, (None, 3))  # 1 row at first, more after each step


def test_scan_walks_an_axis_and_stacks_the_outputs():
    body = helper.make_graph(
        [helper.make_node("Add", ["acc_in", "x"], ["acc_out"]), helper.make_node("Identity", ["acc_out"], ["y"])],
        "body", [helper.make_value_info("acc_in", helper.TypeProto()), helper.make_value_info("x", helper.TypeProto())],
        [helper.make_value_info(o, helper.TypeProto()) for o in ("acc_out", "y")])
    node = helper.make_node("Scan", ["acc0", "xs"], ["acc", "ys"], body=body, num_scan_inputs=1,
                            scan_input_axes=[1], scan_output_axes=[1])
    typed = _infer(_model([node], [helper.make_tensor_value_info("acc0", F, [2]),
                                   helper.make_tensor_value_info("xs", F, [2, "T"])], ["acc", "ys"]))
    assert typed["acc"] == TensorType(F, (2,))
    assert typed["ys"] == TensorType(F, (2, Sym("T")))


def test_sequence_map_runs_the_body_on_one_element():
    body = helper.make_graph([helper.make_node("Shape", ["x"], ["shape"])], "body",
                             [helper.make_value_info("x", helper.TypeProto())],
                             [helper.make_value_info("shape", helper.TypeProto())])
    nodes = [helper.make_node("SequenceConstruct", ["a", "b"], ["s"]),
             helper.make_node("SequenceMap", ["s"], ["shapes"], body=body)]
    typed = _infer(_model(nodes, [helper.make_tensor_value_info("a", F, ["N", 3]),
                                  helper.make_tensor_value_info("b", F, ["M", 3])], ["shapes"]))
    from opspec.runtime.contract import SequenceType

    assert typed["shapes"] == SequenceType(TensorType(I64, (2,)))


def test_a_scripted_model_with_a_sequence_building_loop_and_a_data_dependent_if():
    """As scripting exporters write it: a Loop appends each step's row to a sequence, then an If
    on a condition computed from the data picks one of two results; every value gets a type."""
    one = numpy_helper.from_array(np.array([1], dtype=np.int64), "one")
    body = helper.make_graph(
        [helper.make_node("Unsqueeze", ["i", "axes0"], ["i1"]),
         helper.make_node("Add", ["i1", "one"], ["end"]),
         helper.make_node("Slice", ["X", "i1", "end"], ["row"]),
         helper.make_node("SequenceInsert", ["rows_in", "row"], ["rows_out"]),
         helper.make_node("Identity", ["c_in"], ["c_out"])],
        "body", [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("c_in", B, []),
                 helper.make_value_info("rows_in", helper.TypeProto())],
        [helper.make_value_info(o, helper.TypeProto()) for o in ("c_out", "rows_out")])
    then = _branch("then", helper.make_node("ConcatFromSequence", ["rows"], ["joined"], axis=0), "joined")
    other = _branch("else", helper.make_node("Identity", ["X"], ["same"]), "same")
    nodes = [
        helper.make_node("Shape", ["X"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["n"], axis=0),
        helper.make_node("SequenceEmpty", [], ["empty"], dtype=F),
        helper.make_node("Loop", ["n", "", "empty"], ["rows"], body=body),
        helper.make_node("ReduceSum", ["X"], ["total"], keepdims=0),
        helper.make_node("Greater", ["total", "threshold"], ["big"]),
        helper.make_node("If", ["big"], ["Y"], then_branch=then, else_branch=other),
    ]
    inits = [one, numpy_helper.from_array(np.array([0], dtype=np.int64), "axes0"),
             numpy_helper.from_array(np.array(0, dtype=np.int64), "zero"),
             numpy_helper.from_array(np.array(0.0, dtype=np.float32), "threshold")]
    typed = _infer(_model(nodes, [helper.make_tensor_value_info("X", F, ["N", 4])],
                          ["shape", "n", "empty", "rows", "total", "big", "Y"], inits))
    from opspec.runtime.contract import SequenceType

    assert typed["n"] == TensorType(I64, ()) and typed["total"] == TensorType(F, ())
    assert typed["rows"] == SequenceType(TensorType(F, None))  # rows of (1, 4) appended to an empty sequence
    assert typed["big"] == TensorType(TensorProto.BOOL, ())
    assert typed["Y"].elem == F and typed["Y"].shape in (None, (None, 4))
    assert all(value is not None for value in typed.values())


def test_a_loop_that_starts_from_no_sequence_carries_the_sequence_it_builds():
    """A carried optional sequence, empty at first, that the body hands on as a plain sequence
    (optional ops take either from opset 18); the body's output declares scalar elements
    although it appends vectors, and that loose declaration must not make the result wrong."""
    from opspec.runtime.contract import SequenceType

    scalars = helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, []))
    body = helper.make_graph(
        [helper.make_node("OptionalGetElement", ["opt_in"], ["seq"]),
         helper.make_node("SequenceInsert", ["seq", "row"], ["seq_out"]),
         helper.make_node("Identity", ["c_in"], ["c_out"])],
        "body", [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("c_in", B, []),
                 helper.make_value_info("opt_in", helper.make_optional_type_proto(scalars))],
        [helper.make_tensor_value_info("c_out", B, []), helper.make_value_info("seq_out", scalars)])
    node = helper.make_node("Loop", ["M", "", "opt"], ["built"], body=body)
    model = helper.make_model(helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("M", I64, []),
                      helper.make_value_info("opt", helper.make_optional_type_proto(scalars)),
                      helper.make_tensor_value_info("row", F, [3])],
        [helper.make_value_info("built", helper.TypeProto())]), opset_imports=[helper.make_opsetid("", 18)])
    assert _infer(model)["built"] == SequenceType(TensorType(F, None))  # scalars at first, then vectors


def test_a_body_output_that_contradicts_its_declaration_is_reported_against_the_node():
    body = helper.make_graph([helper.make_node("Identity", ["X"], ["a"])], "then",
                             [], [helper.make_tensor_value_info("a", I64, None)])
    other = _branch("else", helper.make_node("Identity", ["X"], ["b"]), "b")
    node = helper.make_node("If", ["c"], ["Y"], then_branch=body, else_branch=other, name="choose")
    result = opspec.infer(_model([node], [helper.make_tensor_value_info("c", B, []),
                                          helper.make_tensor_value_info("X", F, [2])], ["Y"]))
    assert len(result.errors) == 1
    assert "choose" in str(result.errors[0]) and "subgraph 'then'" in str(result.errors[0])


def test_a_body_the_rule_never_reaches_is_still_inferred_and_its_problems_reported():
    """A Scan that fails before its rule infers the body: the body is inferred with its declared
    types all the same, so the problem inside it is reported beside the node's own."""
    body = helper.make_graph(
        [helper.make_node("MatMul", ["s", "s"], ["s2"]), helper.make_node("Identity", ["x"], ["y"])], "body",
        [helper.make_tensor_value_info("s", F, [2, 3]), helper.make_tensor_value_info("x", F, [4])],
        [helper.make_tensor_value_info("s2", F, None), helper.make_tensor_value_info("y", F, None)])
    node = helper.make_node("Scan", ["s0", "xs"], ["sf", "ys"], body=body, num_scan_inputs=5)
    result = opspec.infer(_model([node], [helper.make_tensor_value_info("s0", F, [2, 3]),
                                          helper.make_tensor_value_info("xs", F, [7, 4])], ["sf", "ys"]))
    messages = [str(error) for error in result.errors]
    assert len(messages) == 2, messages
    assert "num_scan_inputs 5" in messages[0]
    assert "subgraph 'body'" in messages[1] and "cannot multiply (2, 3) by (2, 3)" in messages[1]


def test_nested_graphs_with_outer_values_and_a_model_local_function():
    """An If whose branch runs a Loop whose body calls a model-local function on an outer value."""
    function = helper.make_function("local", "Scale2", ["x"], ["y"],
                                    [helper.make_node("Add", ["x", "x"], ["y"])],
                                    [helper.make_opsetid("", 17)])
    body = helper.make_graph(
        [helper.make_node("Scale2", ["X"], ["scaled"], domain="local"),  # X: two graphs out
         helper.make_node("Add", ["s_in", "scaled"], ["s_out"]),
         helper.make_node("Identity", ["c_in"], ["c_out"])],
        "body", [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("c_in", B, []),
                 helper.make_value_info("s_in", helper.TypeProto())],
        [helper.make_value_info(o, helper.TypeProto()) for o in ("c_out", "s_out", "scaled")])
    then = _branch("then", helper.make_node("Loop", ["M", "", "X"], ["total", "each"], body=body), "total")
    other = _branch("else", helper.make_node("Neg", ["X"], ["negated"]), "negated")
    node = helper.make_node("If", ["c"], ["Y"], then_branch=then, else_branch=other)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("c", B, []),
                                            helper.make_tensor_value_info("X", F, ["N", 3])],
                              [helper.make_value_info("Y", helper.TypeProto())],
                              [numpy_helper.from_array(np.array(2, dtype=np.int64), "M")])
    model = helper.make_model(graph, functions=[function],
                              opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)])
    assert _infer(model)["Y"] == TensorType(F, (N, 3))
    inferred = opspec.infer_shapes(model)
    then_graph = next(a.g for a in inferred.graph.node[0].attribute if a.name == "then_branch")
    each = next(v for v in then_graph.node[0].attribute[0].g.output if v.name == "scaled")
    assert [d.dim_param or d.dim_value for d in each.type.tensor_type.shape.dim] == ["N", 3]


def test_a_trip_count_computed_from_a_shape_stacks_scan_outputs_symbolically():
    nodes = [helper.make_node("Shape", ["X"], ["shape"]),
             helper.make_node("Gather", ["shape", "zero"], ["n"], axis=0),
             helper.make_node("Loop", ["n", "", "s0"], ["s_final", "stacked"], body=_loop_body())]
    zero = numpy_helper.from_array(np.array(0, dtype=np.int64), "zero")
    typed = _infer(_model(nodes, [helper.make_tensor_value_info("s0", F, ["N", 3]),
                                  helper.make_tensor_value_info("X", F, ["N", 3])], ["s_final", "stacked"], [zero]))
    assert typed["stacked"] == TensorType(F, (N, N, 3))  # N steps of an (N, 3) value
