"""Pipelines built the way the scikit-learn converters build them (scaler, classifier, ZipMap; ...)."""
from onnx import TensorProto, helper

F, I64, S = TensorProto.FLOAT, TensorProto.INT64, TensorProto.STRING
ML = "ai.onnx.ml"


def _model(nodes, inputs, outputs):
    graph = helper.make_graph(nodes, "pipeline", inputs, [helper.make_value_info(o, helper.TypeProto()) for o in outputs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, 3)])


def logistic():
    nodes = [
        helper.make_node("Scaler", ["X"], ["scaled"], domain=ML, offset=[0.0] * 4, scale=[1.0] * 4),
        helper.make_node("LinearClassifier", ["scaled"], ["label", "probabilities"], domain=ML,
                         classlabels_ints=[0, 1, 2], coefficients=[0.1] * 12, intercepts=[0.0] * 3,
                         multi_class=0, post_transform="SOFTMAX"),
        helper.make_node("ZipMap", ["probabilities"], ["output_probability"], domain=ML, classlabels_int64s=[0, 1, 2]),
    ]
    return _model(nodes, [helper.make_tensor_value_info("X", F, ["N", 4])], ["scaled", "label", "probabilities",
                                                                             "output_probability"])


def onehot_trees():
    nodes = [
        helper.make_node("OneHotEncoder", ["C"], ["onehot"], domain=ML, cats_strings=["a", "b", "c"], zeros=1),
        helper.make_node("Reshape", ["onehot", "shape"], ["features"]),
        helper.make_node("TreeEnsembleRegressor", ["features"], ["variable"], domain=ML, n_targets=1,
                         nodes_treeids=[0, 0, 0], nodes_nodeids=[0, 1, 2], nodes_featureids=[0, 0, 0],
                         nodes_values=[0.5, 0.0, 0.0], nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF"],
                         nodes_truenodeids=[1, 0, 0], nodes_falsenodeids=[2, 0, 0],
                         target_treeids=[0, 0], target_nodeids=[1, 2], target_ids=[0, 0], target_weights=[1.0, 2.0]),
    ]
    shape = helper.make_tensor("shape", I64, [2], [-1, 3])
    model = _model(nodes, [helper.make_tensor_value_info("C", S, ["N", 1])], ["onehot", "features", "variable"])
    model.graph.initializer.append(shape)
    return model


def impute_normalize():
    nodes = [
        helper.make_node("Imputer", ["X"], ["imputed"], domain=ML, imputed_value_floats=[0.0, 0.0, 0.0],
                         replaced_value_float=float("nan")),
        helper.make_node("Normalizer", ["imputed"], ["normalized"], domain=ML, norm="L2"),
    ]
    return _model(nodes, [helper.make_tensor_value_info("X", F, ["N", 3])], ["imputed", "normalized"])
