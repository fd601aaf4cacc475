"""``opspec convert`` of ai.onnx.ml versions, and of operators that took over from deprecated ones
(Upsample and Resize, Scatter and ScatterElements, the tree ensembles and TreeEnsemble).

Every conversion is judged by ``convert_cases.judge``: at the target opset, accepted by the
full checker, equal outputs in onnxruntime, and opspec's inference agreeing with the run.
"""
from __future__ import annotations

import numpy as np
import pytest
from convert_cases import OK, REFUSED, Case, baseline, judge, opspec_convert, seeded_inputs
from onnx import TensorProto, helper, numpy_helper

import opspec
from opspec.runtime.convert import convert

F, I64, S = TensorProto.FLOAT, TensorProto.INT64, TensorProto.STRING
ML = "ai.onnx.ml"


def _ml_model(node, x_type, y_type, ml, x_shape=(4,), y_shape=(4,)):
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", x_type, list(x_shape))],
                              [helper.make_tensor_value_info("y", y_type, list(y_shape))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, ml)])
    model.ir_version = 8
    return model


def _to_ml(version):
    return lambda model, _target: opspec.convert_version(model, 17, {ML: version})


def _expected(case):
    expected = baseline(case)
    assert expected is not None, "the original must pass the checker and run"
    return expected


def _proven(case, ml):
    return judge(case, 17, _to_ml(ml), _expected(case))


def _ml_opset(model):
    return next(entry.version for entry in model.opset_import if entry.domain == ML)


_WORDS = np.array(["b", "z", "a", "c"], dtype=object)
_CODES = np.array([2, 0, 7, 1], dtype=np.int64)


@pytest.mark.parametrize("x_type, y_type, x", [(S, I64, _WORDS), (I64, S, _CODES)])
def test_label_encoder_1_converts_up_to_every_ml_opset_and_back(x_type, y_type, x):
    node = helper.make_node("LabelEncoder", ["x"], ["y"], domain=ML, classes_strings=["a", "b", "c"], default_int64=-5)
    case = Case("label", _ml_model(node, x_type, y_type, 1), {"x": x})
    for target in (2, 3, 4, 5):
        assert _proven(case, target).verdict == OK, target
    up = opspec.convert_version(case.model, 17, {ML: 4})
    assert _ml_opset(up) == 4 and not [a for a in up.graph.node[0].attribute if a.name == "classes_strings"]
    expected = _expected(case)
    assert judge(Case("back", up, {"x": x}), 17, _to_ml(1), expected).verdict == OK


def test_label_encoder_tables_other_than_positions_stay_above_1():
    node = helper.make_node("LabelEncoder", ["x"], ["y"], domain=ML, keys_strings=["a", "b"], values_int64s=[5, 6])
    (refusal,) = convert(_ml_model(node, S, I64, 2), 17, {ML: 1}).refusals
    assert "positions" in refusal.reason


def test_label_encoder_4_tensors_become_lists_of_their_type_going_down():
    node = helper.make_node("LabelEncoder", ["x"], ["y"], domain=ML,
                            keys_tensor=helper.make_tensor("k", I64, [3], [7, 1, 2]),
                            values_tensor=helper.make_tensor("v", F, [3], [0.5, 1.5, 2.5]),
                            default_tensor=helper.make_tensor("d", F, [1], [9.0]))
    case = Case("tensors", _ml_model(node, I64, F, 4), {"x": _CODES})
    for target in (3, 2):
        assert _proven(case, target).verdict == OK, target
    down = opspec.convert_version(case.model, 17, {ML: 2})
    assert {a.name for a in down.graph.node[0].attribute} == {"keys_int64s", "values_floats", "default_float"}
    assert _proven(case, 1).verdict == REFUSED
    int16 = helper.make_node("LabelEncoder", ["x"], ["y"], domain=ML,
                             keys_tensor=helper.make_tensor("k", I64, [2], [7, 1]),
                             values_tensor=helper.make_tensor("v", TensorProto.INT16, [2], [5, 1]))
    assert not convert(_ml_model(int16, I64, TensorProto.INT16, 4), 17, {ML: 2}).ok


def _regressor(ml, aggregate="SUM", base=(0.5, -1.0), transform="NONE", splits=None):
    """Two trees over two features and two targets; tree 0's leaves weigh both targets, tree 1 is one leaf."""
    attributes = dict(
        n_targets=2, aggregate_function=aggregate, post_transform=transform,
        nodes_treeids=[0, 0, 0, 0, 0, 1], nodes_nodeids=[0, 1, 2, 3, 4, 0], nodes_featureids=[0, 1, 0, 0, 0, 0],
        nodes_modes=["BRANCH_LEQ", "BRANCH_GT", "LEAF", "LEAF", "LEAF", "LEAF"],
        nodes_truenodeids=[1, 2, 0, 0, 0, 0], nodes_falsenodeids=[4, 3, 0, 0, 0, 0],
        nodes_missing_value_tracks_true=[1, 0, 0, 0, 0, 0],
        target_treeids=[0, 0, 0, 0, 0, 1], target_nodeids=[2, 2, 3, 4, 4, 0], target_ids=[0, 1, 0, 1, 0, 1],
        target_weights=[1.0, 2.0, 3.0, 4.0, 5.0, 0.25])
    values = [0.5, -0.25, 0.0, 0.0, 0.0, 0.0]
    if splits is None:
        attributes["nodes_values"] = values
    else:
        attributes["nodes_values_as_tensor"] = helper.make_tensor("v", splits, [6], values)
    if base:
        attributes["base_values"] = list(base)
    node = helper.make_node("TreeEnsembleRegressor", ["x"], ["y"], domain=ML, **attributes)
    return _ml_model(node, F, F, ml, ("N", 2), ("N", 2))


_FEATURES = np.array([[0.2, 0.1], [0.2, -1], [1, 0], [np.nan, 3], [0.5, -0.25]], np.float32)


@pytest.mark.parametrize("aggregate, base", [("SUM", (0.5, -1.0)), ("AVERAGE", ())])
def test_tree_ensemble_regressor_becomes_tree_ensemble_at_ml_5_and_back(aggregate, base):
    case = Case("trees", _regressor(1, aggregate, base), {"x": _FEATURES})
    for target in (3, 4, 5):
        assert _proven(case, target).verdict == OK, target
    up = opspec.convert_version(case.model, 17, {ML: 5})
    assert [node.op_type for node in up.graph.node] == ["TreeEnsemble"]
    expected = _expected(case)
    for target in (4, 3, 1):
        assert judge(Case("back", up, {"x": _FEATURES}), 17, _to_ml(target), expected).verdict == OK, target


def test_tree_tensor_forms_become_float_lists_below_ml_3():
    case = Case("tensors", _regressor(3, splits=F), {"x": _FEATURES})
    for target in (1, 2, 5):
        assert _proven(case, target).verdict == OK, target
    down = opspec.convert_version(case.model, 17, {ML: 1})
    assert "nodes_values" in {a.name for a in down.graph.node[0].attribute}


@pytest.mark.parametrize("aggregate, base, transform, reason", [
    ("MAX", (), "NONE", "several targets"), ("AVERAGE", (1.0, 2.0), "NONE", "base values")])
def test_tree_ensembles_without_a_faithful_tree_ensemble_form_are_refused(aggregate, base, transform, reason):
    model = _regressor(1, aggregate, base, transform)
    assert _proven(Case("trees", model, {"x": _FEATURES}), 3).verdict == OK
    (refusal,) = convert(model, 17, {ML: 5}).refusals
    assert reason in refusal.reason


@pytest.mark.parametrize("transform, op", [("SOFTMAX", "Softmax"), ("LOGISTIC", "Sigmoid")])
def test_softmax_and_logistic_are_written_after_tree_ensemble(transform, op):
    """onnxruntime runs TreeEnsemble's post_transform 1 as LOGISTIC and 2 as SOFTMAX, where the
    standard numbers them the other way round: the transform is written as its own operator, and a
    TreeEnsemble holding either number is refused going down."""
    case = Case("trees", _regressor(1, transform=transform), {"x": _FEATURES})
    assert _proven(case, 5).verdict == OK
    up = opspec.convert_version(case.model, 17, {ML: 5})
    assert [node.op_type for node in up.graph.node] == ["TreeEnsemble", op]
    classes = Case("classes", _classifier([4, 7, 9], transform), {"x": _FEATURES})
    assert _proven(classes, 5).verdict == OK
    for number in (1, 2):
        swapped = opspec.convert_version(_regressor(1), 17, {ML: 5})
        next(a for a in swapped.graph.node[0].attribute if a.name == "post_transform").i = number
        (refusal,) = convert(swapped, 17, {ML: 4}).refusals
        assert "the other way round" in refusal.reason


def test_a_domain_opspec_does_not_hold_or_a_target_outside_it_is_an_error():
    model = _regressor(1)
    with pytest.raises(opspec.ConversionError):
        convert(model, 17, {ML: 9})
    with pytest.raises(opspec.ConversionError):
        convert(model, 17, {"com.example": 1})


def _std_model(nodes, inputs, outputs, opset, initializers=()):
    from opspec.runtime.convert.api import IR_FOR_OPSET

    model = helper.make_model(helper.make_graph(nodes, "g", inputs, outputs, list(initializers)),
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = IR_FOR_OPSET[opset]
    return model


def _resize(scales, mode):
    extra = {"nearest_mode": "floor"} if mode == "nearest" else {}
    return _std_model([helper.make_node("Resize", ["x", "", "s"], ["y"], coordinate_transformation_mode="asymmetric",
                                        mode=mode, **extra)],
                      [helper.make_tensor_value_info("x", F, [1, 2, 4, 4])],
                      [helper.make_tensor_value_info("y", F, list("NCHW"))], 13,
                      [numpy_helper.from_array(np.array(scales, np.float32), "s")])


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_resize_becomes_upsample_below_10_where_its_scales_enlarge(mode):
    case = Case("resize", _resize([1, 1, 2, 1.5], mode), {})
    case = Case("resize", case.model, seeded_inputs(case.model))
    for target in (9, 8, 7):
        assert judge(case, target, opspec_convert, _expected(case)).verdict == OK, target
    assert [node.op_type for node in opspec.convert_version(case.model, 9).graph.node] == ["Upsample"]
    (refusal,) = convert(_resize([1, 1, 0.5, 2], "linear"), 9).refusals
    assert "at least 1" in refusal.reason


def _scatter(indices):
    return _std_model([helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1)],
                      [helper.make_tensor_value_info("x", F, [2, 5]), helper.make_tensor_value_info("u", F, [2, 2])],
                      [helper.make_tensor_value_info("y", F, [2, 5])], 18,
                      [numpy_helper.from_array(np.array(indices, np.int64), "i")])


def test_scatter_elements_becomes_scatter_below_11_where_no_index_is_negative():
    model = _scatter([[1, 3], [0, 4]])
    case = Case("scatter", model, seeded_inputs(model))
    for target in (10, 9):
        assert judge(case, target, opspec_convert, _expected(case)).verdict == OK, target
    assert [node.op_type for node in opspec.convert_version(model, 9).graph.node] == ["Scatter"]
    (refusal,) = convert(_scatter([[1, -1], [0, 4]]), 10).refusals
    assert "-1" in refusal.reason
    assert "no Scatter" in convert(model, 8).refusals[0].reason


def test_the_command_line_converts_another_domain_and_says_so(tmp_path, capsys):
    import onnx

    from opspec.cli import main

    node = helper.make_node("LabelEncoder", ["x"], ["y"], domain=ML, classes_strings=["a", "b", "c"])
    source, written = tmp_path / "m.onnx", tmp_path / "out.onnx"
    onnx.save(_ml_model(node, S, I64, 1), source)
    assert main(["convert", str(source), "-o", str(written), "--domain-opset", f"{ML}=4"]) == 0
    assert "ai.onnx.ml 1 to 4" in capsys.readouterr().out
    assert _ml_opset(onnx.load(written)) == 4
    assert main(["convert", str(source), "-o", str(written), "--domain-opset", f"{ML}=four"]) == 2


def _classifier(labels, transform="NONE", every_leaf=True, base=True):
    """One tree over two features whose three leaves weigh every class (or, not ``every_leaf``, leave
    class 2 to one leaf), with base values or without."""
    count = len(labels)
    leaves = [2, 3, 4]
    weights = [[0.5, 0.25, 0.25], [0.1, 0.7, 0.2], [0.2, 0.2, 0.6]]
    entries = [(leaf, class_id, weight[class_id]) for leaf, weight in zip(leaves, weights) for class_id in range(count)
               if every_leaf or class_id < 2 or leaf == 4]
    label_attribute: dict = {"classlabels_int64s": labels} if isinstance(labels[0], int) else {"classlabels_strings": labels}
    if base:
        label_attribute["base_values"] = [0.0, 0.125, 0.0]
    node = helper.make_node(
        "TreeEnsembleClassifier", ["x"], ["y", "z"], domain=ML, post_transform=transform,
        nodes_treeids=[0] * 5, nodes_nodeids=[0, 1, 2, 3, 4], nodes_featureids=[0, 1, 0, 0, 0],
        nodes_modes=["BRANCH_LEQ", "BRANCH_GT", "LEAF", "LEAF", "LEAF"], nodes_values=[0.5, -0.25, 0, 0, 0],
        nodes_truenodeids=[1, 2, 0, 0, 0], nodes_falsenodeids=[4, 3, 0, 0, 0],
        class_treeids=[0] * len(entries), class_nodeids=[e[0] for e in entries], class_ids=[e[1] for e in entries],
        class_weights=[e[2] for e in entries], **label_attribute)
    y_type = I64 if isinstance(labels[0], int) else S
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", F, ["N", 2])],
                              [helper.make_tensor_value_info("y", y_type, ["N"]),
                               helper.make_tensor_value_info("z", F, ["N", 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, 1)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize("labels", [[4, 7, 9], ["cat", "dog", "eel"]])
def test_tree_ensemble_classifier_of_three_classes_becomes_tree_ensemble_argmax_and_gather(labels):
    """onnxruntime labels a row among the classes it scored: every class is, by a base value or by
    every leaf of a tree weighing it."""
    for every_leaf, base in ((True, False), (False, True)):
        classes = Case("classes", _classifier(labels, every_leaf=every_leaf, base=base), {"x": _FEATURES})
        assert _proven(classes, 5).verdict == OK, (every_leaf, base)
    case = Case("classes", _classifier(labels), {"x": _FEATURES})
    for target in (3, 5):
        assert _proven(case, target).verdict == OK, target
    up = opspec.convert_version(case.model, 17, {ML: 5})
    assert [node.op_type for node in up.graph.node] == ["TreeEnsemble", "ArgMax", "Gather"]
    back = opspec.convert_version(up, 17, {ML: 3})  # the scores alone are a regressor's
    assert [node.op_type for node in back.graph.node] == ["TreeEnsembleRegressor", "ArgMax", "Gather"]
    assert judge(Case("back", up, {"x": _FEATURES}), 17, _to_ml(3), _expected(case)).verdict == OK


@pytest.mark.parametrize("labels, transform, every_leaf, reason", [
    ([4, 7], "NONE", True, "two classes"), ([4, 7, 9], "PROBIT", True, "post_transform"),
    ([4, 7, 9], "NONE", False, "unscored")])
def test_tree_ensemble_classifiers_onnxruntime_labels_by_rules_of_its_own_are_refused(labels, transform, every_leaf,
                                                                                      reason):
    (refusal,) = convert(_classifier(labels, transform, every_leaf, base=False), 17, {ML: 5}).refusals
    assert reason in refusal.reason


_SIZES = {"b": 2, "h": 3, "i": 4, "j": 5, "k": 6, "q": 2, "d": 3}


def _einsum(equation, symbolic=False):
    left, arrow, right = equation.partition("->")
    terms = left.split(",")
    if not arrow:
        right = "".join(sorted(letter for letter in set(left) - {","} if left.count(letter) == 1))
    shape = (lambda term: [letter if symbolic else _SIZES[letter] for letter in term])
    return _std_model([helper.make_node("Einsum", [f"x{n}" for n in range(len(terms))], ["y"], equation=equation)],
                      [helper.make_tensor_value_info(f"x{n}", F, shape(term)) for n, term in enumerate(terms)],
                      [helper.make_tensor_value_info("y", F, shape(right))], 13)


@pytest.mark.parametrize("equation, ops", [
    ("ij,jk->ik", {"MatMul"}), ("bhqd,bhkd->bhqk", {"MatMul"}), ("ij,kj", {"MatMul"}), ("i,i->", {"MatMul"}),
    ("ik,k->i", {"MatMul"}), ("ij->ji", {"Transpose"}), ("ij->i", {"ReduceSum"}), ("ij,ij->ij", {"Mul"}),
    ("ij,jk,kq->iq", {"Mul", "ReduceSum"}), ("bij,jk->bik", {"MatMul"}), ("bij,hjk->hbik", {"MatMul"}),
    ("ijk,jk->i", {"Mul", "ReduceSum"})])
def test_einsum_is_written_in_older_operators_below_12(equation, ops):
    rng = np.random.default_rng(0)
    terms = equation.partition("->")[0].split(",")
    inputs = {f"x{n}": rng.standard_normal([_SIZES[letter] for letter in term]).astype(np.float32)
              for n, term in enumerate(terms)}
    for symbolic in (False, True):  # dims known, or named only
        model = _einsum(equation, symbolic)
        case = Case(equation, model, inputs)
        for target in (11, 9, 7):
            assert judge(case, target, opspec_convert, _expected(case)).verdict == OK, (target, symbolic)
    assert ops <= {node.op_type for node in opspec.convert_version(model, 11).graph.node}


def test_einsum_taking_a_diagonal_is_refused_below_12():
    model = _std_model([helper.make_node("Einsum", ["x"], ["y"], equation="ii->i")],
                       [helper.make_tensor_value_info("x", F, [3, 3])], [helper.make_tensor_value_info("y", F, [3])], 13)
    (refusal,) = convert(model, 11).refusals
    assert "diagonal" in refusal.reason


def _range(start, limit, delta, elem, constant=True):
    dtype = helper.tensor_dtype_to_np_dtype(elem)
    bounds = [numpy_helper.from_array(np.array(value, dtype), name) for name, value in zip("sld", (start, limit, delta))]
    inputs = [] if constant else [helper.make_tensor_value_info("l", elem, [])]
    return _std_model([helper.make_node("Range", ["s", "l", "d"], ["y"])], inputs,
                      [helper.make_tensor_value_info("y", elem, ["n"])], 13,
                      bounds if constant else [bounds[0], bounds[2]])


@pytest.mark.parametrize("start, limit, delta, elem", [(0, 10, 3, I64), (1.0, 2.0, 0.1, F), (5, 1, -2, TensorProto.INT32),
                                                      (0.0, -1.0, 0.5, TensorProto.DOUBLE), (3, 3, 1, I64)])
def test_range_of_constants_is_folded_below_11(start, limit, delta, elem):
    case = Case("range", _range(start, limit, delta, elem), {})
    for target in (10, 9):
        assert judge(case, target, opspec_convert, _expected(case)).verdict == OK, target


def test_range_computed_at_run_time_is_refused_below_11():
    (refusal,) = convert(_range(0, 10, 1, I64, constant=False), 10).refusals
    assert "constant" in refusal.reason


def _grid_sample(opset, rank=4, symbolic=False, **attributes):
    x_shape: list = [2, 3, 4, 5]
    grid_shape: list = [2, 6, 7, 2]
    y_shape: list = [2, 3, 6, 7]
    if rank == 5:
        x_shape, grid_shape, y_shape = [2, 3, 4, 5, 2], [2, 6, 7, 2, 3], [2, 3, 6, 7, 2]
    if symbolic:
        x_shape, grid_shape, y_shape = ["N", 3, "H", "W"], ["N", "h", "w", 2], ["N", 3, "h", "w"]
    return _std_model([helper.make_node("GridSample", ["x", "g"], ["y"], **attributes)],
                      [helper.make_tensor_value_info("x", F, x_shape), helper.make_tensor_value_info("g", F, grid_shape)],
                      [helper.make_tensor_value_info("y", F, y_shape)], opset)


def _grid_inputs():
    rng = np.random.default_rng(1)
    grid = rng.uniform(-1.3, 1.3, (2, 6, 7, 2)).astype(np.float32)
    grid[0, 0, :4] = np.array([[1, -1], [-0.75, 0.25], [-1, 1], [0.5, -0.5]])  # edges, halfway between pixels
    return {"x": rng.standard_normal((2, 3, 4, 5)).astype(np.float32), "g": grid}


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border"])
@pytest.mark.parametrize("align_corners", [0, 1])
def test_grid_sample_is_written_in_older_operators_down_to_11(mode, padding_mode, align_corners):
    attributes = {"mode": mode, "padding_mode": padding_mode, "align_corners": align_corners}
    for symbolic in (False, True):
        case = Case("grid", _grid_sample(16, symbolic=symbolic, **attributes), _grid_inputs())
        for target in (15, 11):
            assert judge(case, target, opspec_convert, _expected(case)).verdict == OK, (target, symbolic)
    renamed = {"bilinear": "linear"}.get(mode, mode)
    newer = Case("grid", _grid_sample(20, mode=renamed, padding_mode=padding_mode, align_corners=align_corners),
                 _grid_inputs())
    assert judge(newer, 13, opspec_convert, _expected(newer)).verdict == OK


@pytest.mark.parametrize("attributes, target, reason", [
    ({"mode": "bicubic"}, 15, "mode"), ({"padding_mode": "reflection"}, 15, "padding"),
    ({}, 10, "run time"), ({"rank": 5, "mode": "linear"}, 15, "rank 4")])
def test_grid_sample_below_16_is_refused_where_no_body_is_written(attributes, target, reason):
    """Bicubic and reflecting samples have no body; below 11 the body's Clip bounds, computed from the
    input's shape, cannot be attributes; a volume is sampled only from 20."""
    rank = attributes.pop("rank", 4)
    (refusal,) = convert(_grid_sample(20 if rank == 5 else 16, rank, **attributes), target).refusals
    assert "no GridSample" in refusal.reason and reason in refusal.reason


def test_a_classifier_in_a_model_importing_only_ai_onnx_ml_gets_the_standard_domain_it_now_uses():
    model = _classifier([4, 7, 9], "SOFTMAX")
    del model.opset_import[0]
    case = Case("classes", model, {"x": _FEATURES})
    assert judge(case, 1, lambda m, _t: opspec.convert_version(m, 1, {ML: 5}), _expected(case)).verdict == OK
    converted = opspec.convert_version(model, 1, {ML: 5})
    assert {(entry.domain, entry.version) for entry in converted.opset_import} == {("", 1), (ML, 5)}


def test_indices_argmax_gives_are_known_not_negative_below_11():
    """Gather before 11 rejects negative indices; ArgMax gives none, so its indices convert down."""
    model = _std_model([helper.make_node("ArgMax", ["x"], ["i"], axis=1, keepdims=0),
                        helper.make_node("Gather", ["t", "i"], ["y"], axis=0)],
                       [helper.make_tensor_value_info("x", F, [4, 3])], [helper.make_tensor_value_info("y", F, [4])],
                       13, [numpy_helper.from_array(np.array([0.5, 1.5, 2.5], np.float32), "t")])
    case = Case("argmax", model, seeded_inputs(model))
    for target in (10, 9, 7):
        assert judge(case, target, opspec_convert, _expected(case)).verdict == OK, target


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_upsample_and_scatter_become_resize_and_scatter_elements_going_up(mode):
    """The way back up: onnx's converter gives linear Upsample another sampling from 11 (measured)."""
    upsample = _std_model([helper.make_node("Upsample", ["x", "s"], ["y"], mode=mode)],
                          [helper.make_tensor_value_info("x", F, [1, 2, 3, 4])],
                          [helper.make_tensor_value_info("y", F, [1, 2, 6, 6])], 9,
                          [numpy_helper.from_array(np.array([1, 1, 2, 1.5], np.float32), "s")])
    scatter = _std_model([helper.make_node("Scatter", ["x", "i", "u"], ["y"], axis=1)],
                         [helper.make_tensor_value_info("x", F, [2, 5]), helper.make_tensor_value_info("u", F, [2, 2])],
                         [helper.make_tensor_value_info("y", F, [2, 5])], 9, [_indices([[1, 3], [0, 4]])])
    for model in (upsample, scatter):
        case = Case("up", model, seeded_inputs(model))
        for target in (10, 11, 13, 19):
            assert judge(case, target, opspec_convert, _expected(case)).verdict == OK, target


def _indices(values):
    return numpy_helper.from_array(np.array(values, np.int64), "i")
