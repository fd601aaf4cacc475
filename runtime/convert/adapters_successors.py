"""Steps between a deprecated operator and the one that took over from it (``replaced_by``), where
the two do not share their signature: Upsample and Resize, the tree ensembles and TreeEnsemble.

Each is an adapter named by the deprecating version's ``convert: by``; it rewrites the node
whole, from the operator it leaves (``source``) to the one it becomes (``target``).
"""
from __future__ import annotations

from dataclasses import dataclass

from opspec.runtime.contract.elements import ElementType
from opspec.runtime.convert.adapters_ml import float32_exact as _float32_exact
from opspec.runtime.convert.adapters_ml import tensor_attribute, tensor_items
from opspec.runtime.convert.emitter import Emitter
from opspec.runtime.convert.values import GraphValues, Refusal, ValueType
from opspec.runtime.convert.work_node import Surrounding, WorkNode
from opspec.runtime.schema import AttrType, OpSchema



def upsample_scales(node: WorkNode, source: OpSchema, target: OpSchema, values: GraphValues) -> None:
    """Resize 10 becomes Upsample 9 (the same inputs, attributes and sampling) where its scales are a
    constant of factors of at least 1, the only ones Upsample takes."""
    if target.since_version > source.since_version:
        return
    constant = values.values_of(node.inputs[1]) if len(node.inputs) > 1 and node.inputs[1] else None
    if constant is None:
        raise Refusal("Upsample takes scales of at least 1 only, and the scales are computed at run time")
    if any(float(scale) < 1 for scale in constant[1]):
        raise Refusal("Upsample takes scales of at least 1 only, and a scale is smaller")


_MODES = ("BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ")
_AGGREGATES = ("AVERAGE", "SUM", "MIN", "MAX")
_TRANSFORMS = ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT")


@dataclass(frozen=True)
class _Branch:
    """An interior node of TreeEnsemble: its test, and its children (``leaf``: a leaf index)."""

    feature: int
    mode: int
    split: float
    missing_true: int
    true_child: tuple[bool, int]
    false_child: tuple[bool, int]


def _floats(node: WorkNode, name: str) -> list[float] | None:
    """A float list attribute of the tree ensembles 1..4, in either of its forms."""
    if f"{name}_as_tensor" in node.attributes:
        return [float(item) for item in tensor_items(node.attributes[f"{name}_as_tensor"].t)[1]]
    found = node.value(name)
    return None if found is None else [float(item) for item in found]


def tree_ensemble(node: WorkNode, source: OpSchema, target: OpSchema, values: GraphValues) -> Surrounding | None:
    """TreeEnsembleRegressor 3 becomes TreeEnsemble 5 and back, and TreeEnsembleClassifier 3 of more
    than two classes becomes TreeEnsemble 5 of its scores, ArgMax and a Gather of its labels: trees
    and leaves are listed apart, modes and aggregation become numbers, thresholds and weights float
    tensors. A leaf with weights for several targets becomes one tree per target; base values
    become a tree of one leaf (summed trees only); a SOFTMAX or LOGISTIC transform of several
    scores becomes Softmax or Sigmoid after TreeEnsemble. Refused for inputs other than float
    matrices (TreeEnsemble gives the input's type), for membership tests going down, for SOFTMAX
    or LOGISTIC going down or over one score, and for a classifier some row of which may leave a
    class unscored."""
    if target.name == "TreeEnsembleClassifier":
        raise Refusal("TreeEnsemble gives scores only, which a TreeEnsembleClassifier does not state alone")
    known = values.type_of(node.inputs[0])
    if known is None or known.elem != ElementType.FLOAT or known.rank != 2:
        raise Refusal("only a float input of rank 2 converts, which TreeEnsemble reads as the older operators do "
                      "and answers in the same type")
    if target.name != "TreeEnsemble":
        if node.value("post_transform") in _SWAPPED:
            # onnxruntime 1.31 runs the standard's SOFTMAX as LOGISTIC and LOGISTIC as SOFTMAX
            # (measured): what the model means is not known.
            raise Refusal("post_transform 1 or 2, which onnxruntime reads the other way round from the standard "
                          "(SOFTMAX, LOGISTIC)")
        _from_tree_ensemble(node)
        return None
    transform = _text(node.value("post_transform"), "NONE")
    if transform in _OUTSIDE:
        del node.attributes["post_transform"]  # written after TreeEnsemble instead
    if source.name == "TreeEnsembleClassifier":
        return _classifier_to_tree_ensemble(node, values, transform)
    count = node.value("n_targets") or 1
    if transform in _OUTSIDE and count < 2:
        raise Refusal(f"onnxruntime applies no {transform} to a single target, where the standard does")
    _to_tree_ensemble(node, "target", count)
    if transform not in _OUTSIDE:
        return None
    given = node.outputs[0]
    raw = values.fresh(f"{given}_raw")
    node.outputs = [raw]
    values.types[raw] = ValueType(ElementType.FLOAT, (None, count))
    emit = Emitter(node, values)
    emit(_OUTSIDE[transform], raw, out=given)
    return Surrounding(after=tuple(emit.nodes))


#: Transforms of several scores written after TreeEnsemble (whose numbers for them onnxruntime
#: reads swapped): the standard operator computing each.
_OUTSIDE = {"SOFTMAX": "Softmax", "LOGISTIC": "Sigmoid"}
#: TreeEnsemble's numbers of those transforms (1 and 2).
_SWAPPED = frozenset(_TRANSFORMS.index(name) for name in _OUTSIDE)


def _text(value: object, default: str) -> str:
    if value is None:
        return default
    return value.decode() if isinstance(value, bytes) else str(value)


def _classifier_to_tree_ensemble(node: WorkNode, values: GraphValues, transform: str) -> Surrounding:
    """The classifier's scores from TreeEnsemble; its labels as the label of the first best score.

    onnxruntime labels a row by the best score among the classes some leaf of the row weighs,
    and gives two classes rules of their own: only more than two classes, each scored in every row
    (given a base value, or weighed by every leaf of some tree), and no transform or SOFTMAX or
    LOGISTIC convert; the label is chosen among the scores before the transform."""
    integers = node.value("classlabels_int64s")
    labels = list(integers) if integers else [_text(label, "") for label in node.value("classlabels_strings") or []]
    if len(labels) < 3:
        raise Refusal("two classes are scored and labelled by rules of their own, which TreeEnsemble and ArgMax "
                      "do not follow")
    if transform != "NONE" and transform not in _OUTSIDE:
        raise Refusal(f"post_transform {transform}, which onnxruntime applies by rules of its own")
    tree_ids, node_ids = node.value("nodes_treeids") or [], node.value("nodes_nodeids") or []
    modes = [_text(mode, "") for mode in node.value("nodes_modes") or []]
    weighed = {(tree, nid, class_id) for tree, nid, class_id in zip(node.value("class_treeids") or [],
                                                                    node.value("class_nodeids") or [],
                                                                    node.value("class_ids") or [])}
    leaves: dict[int, list[int]] = {}
    for tree, nid, mode in zip(tree_ids, node_ids, modes):
        if mode == "LEAF":
            leaves.setdefault(tree, []).append(nid)
    scored_by_base = len(_floats(node, "base_values") or []) == len(labels)  # onnxruntime then scores every class
    for class_id in range(0 if scored_by_base else len(labels)):
        if not any(all((tree, nid, class_id) in weighed for nid in found) for tree, found in leaves.items()):
            raise Refusal(f"class {class_id} is weighed in no tree by every leaf, so some row may leave it "
                          f"unscored, which onnxruntime labels otherwise")
    _to_tree_ensemble(node, "class", len(labels))
    label = node.outputs[0]
    given = node.outputs[1] if len(node.outputs) > 1 and node.outputs[1] else ""
    scores = given if given and transform == "NONE" else values.fresh(f"{label}_scores")
    node.outputs = [scores]
    values.types[scores] = ValueType(ElementType.FLOAT, (None, len(labels)))
    emit = Emitter(node, values)
    if given and transform != "NONE":
        emit(_OUTSIDE[transform], scores, out=given)
    best = emit("ArgMax", scores, axis=1, keepdims=0)
    table_elem = ElementType.INT64 if integers else ElementType.STRING
    table = values.add_constant(f"{label}_labels", table_elem, (len(labels),), labels)
    emit("Gather", table, best, out=label, axis=0)
    return Surrounding(after=tuple(emit.nodes))


def _to_tree_ensemble(node: WorkNode, prefix: str, count: int) -> None:
    tree_ids, node_ids = node.value("nodes_treeids") or [], node.value("nodes_nodeids") or []
    modes = [mode.decode() if isinstance(mode, bytes) else mode for mode in node.value("nodes_modes") or []]
    features, splits = node.value("nodes_featureids") or [], _floats(node, "nodes_values") or []
    trues, falses = node.value("nodes_truenodeids") or [], node.value("nodes_falsenodeids") or []
    missing = node.value("nodes_missing_value_tracks_true") or [0] * len(node_ids)
    weights = _floats(node, f"{prefix}_weights") or []
    targets = list(zip(node.value(f"{prefix}_treeids") or [], node.value(f"{prefix}_nodeids") or [],
                       node.value(f"{prefix}_ids") or [], weights))
    aggregate = (node.value("aggregate_function") or b"SUM")
    aggregate = aggregate.decode() if isinstance(aggregate, bytes) else aggregate
    transform = node.value("post_transform") or b"NONE"
    transform = transform.decode() if isinstance(transform, bytes) else transform
    base = _floats(node, "base_values") or []
    if not all(_float32_exact(value) for value in [*splits, *weights, *base]):
        raise Refusal("thresholds or weights are not exactly floats, which TreeEnsemble holds for a float input")
    if not len(tree_ids) == len(node_ids) == len(modes) == len(features) == len(splits) == len(trues) == len(falses):
        raise Refusal("the nodes_* attributes have different lengths")
    where = {(tree, nid): index for index, (tree, nid) in enumerate(zip(tree_ids, node_ids))}
    leaf_weights: dict[tuple[int, int], dict[int, float]] = {}
    for tree, nid, target_id, weight in targets:
        into = leaf_weights.setdefault((tree, nid), {})
        into[target_id] = into.get(target_id, 0.0) + weight
    several = any(len(found) > 1 for found in leaf_weights.values())
    copies = sorted({t for found in leaf_weights.values() for t in found}) if several else [None]
    if several and aggregate != "SUM" and aggregate != "AVERAGE":
        raise Refusal(f"leaves weigh several targets, which {aggregate} cannot take apart into trees")
    scale = float(len(copies)) if several and aggregate == "AVERAGE" else 1.0
    if any(value != 0 for value in base) and aggregate != "SUM":
        raise Refusal(f"base values with aggregate_function {aggregate} have no TreeEnsemble form")
    branches: list[_Branch] = []
    leaves: list[tuple[int, float]] = []
    roots: list[int] = []

    def leaf(key: tuple[int, int], copy: int | None) -> int:
        found = leaf_weights.get(key, {})
        if copy is None:
            target_id, weight = next(iter(found.items()), (0, 0.0))
        else:
            target_id, weight = copy, found.get(copy, 0.0) * scale
        leaves.append((target_id, weight))
        return len(leaves) - 1

    def walk(tree: int, nid: int, copy: int | None, depth: int) -> tuple[bool, int]:
        index = where.get((tree, nid))
        if index is None or depth > len(node_ids):
            raise Refusal(f"tree {tree} refers to node {nid}, which it does not hold, or loops")
        if modes[index] == "LEAF":
            return True, leaf((tree, nid), copy)
        if modes[index] not in _MODES:
            raise Refusal(f"node mode {modes[index]!r} is not one TreeEnsemble knows")
        place = len(branches)
        branches.append(_Branch(0, 0, 0.0, 0, (True, 0), (True, 0)))
        true_child = walk(tree, trues[index], copy, depth + 1)
        false_child = walk(tree, falses[index], copy, depth + 1)
        branches[place] = _Branch(features[index], _MODES.index(modes[index]), splits[index],
                                  int(missing[index]) if index < len(missing) else 0, true_child, false_child)
        return False, place

    trees = list(dict.fromkeys(tree_ids))
    children = {(tree, child) for tree, mode, true, false in zip(tree_ids, modes, trues, falses) if mode != "LEAF"
                for child in (true, false)}
    for copy in copies:
        for tree in trees:
            tops = [nid for t, nid in zip(tree_ids, node_ids) if t == tree and (tree, nid) not in children]
            if len(tops) != 1:
                raise Refusal(f"tree {tree} has no single root")
            _root(branches, roots, walk(tree, tops[0], copy, 0))
    for target_id, value in enumerate(base):
        if value:
            leaves.append((target_id, value))
            _root(branches, roots, (True, len(leaves) - 1))
    node.attributes.clear()
    node.set("n_targets", AttrType.INT, count)
    node.set("aggregate_function", AttrType.INT, _AGGREGATES.index(aggregate))
    node.set("post_transform", AttrType.INT, _TRANSFORMS.index(transform))
    node.set("tree_roots", AttrType.INTS, roots)
    node.set("nodes_featureids", AttrType.INTS, [branch.feature for branch in branches])
    node.attributes["nodes_modes"] = tensor_attribute("nodes_modes", ElementType.UINT8,
                                                      [branch.mode for branch in branches])
    node.attributes["nodes_splits"] = tensor_attribute("nodes_splits", ElementType.FLOAT,
                                                       [branch.split for branch in branches])
    node.set("nodes_missing_value_tracks_true", AttrType.INTS, [branch.missing_true for branch in branches])
    node.set("nodes_trueleafs", AttrType.INTS, [int(branch.true_child[0]) for branch in branches])
    node.set("nodes_truenodeids", AttrType.INTS, [branch.true_child[1] for branch in branches])
    node.set("nodes_falseleafs", AttrType.INTS, [int(branch.false_child[0]) for branch in branches])
    node.set("nodes_falsenodeids", AttrType.INTS, [branch.false_child[1] for branch in branches])
    node.set("leaf_targetids", AttrType.INTS, [target_id for target_id, _ in leaves])
    node.attributes["leaf_weights"] = tensor_attribute("leaf_weights", ElementType.FLOAT,
                                                       [weight for _, weight in leaves])


def _root(branches: list[_Branch], roots: list[int], top: tuple[bool, int]) -> None:
    """Record a tree's root; a tree that is one leaf gets a test whose both children are that leaf."""
    if top[0]:
        branches.append(_Branch(0, 0, 0.0, 0, top, top))
        top = (False, len(branches) - 1)
    roots.append(top[1])


def _from_tree_ensemble(node: WorkNode) -> None:
    if "membership_values" in node.attributes:
        raise Refusal("membership tests (BRANCH_MEMBER) have no TreeEnsembleRegressor form")
    modes = [int(mode) for mode in tensor_items(node.attributes["nodes_modes"].t)[1]]
    if any(mode >= len(_MODES) for mode in modes):
        raise Refusal("membership tests (BRANCH_MEMBER) have no TreeEnsembleRegressor form")
    splits = [float(item) for item in tensor_items(node.attributes["nodes_splits"].t)[1]]
    leaf_weights = [float(item) for item in tensor_items(node.attributes["leaf_weights"].t)[1]]
    leaf_targets = node.value("leaf_targetids")
    features, missing = node.value("nodes_featureids"), node.value("nodes_missing_value_tracks_true")
    true_leaf, true_ids = node.value("nodes_trueleafs"), node.value("nodes_truenodeids")
    false_leaf, false_ids = node.value("nodes_falseleafs"), node.value("nodes_falsenodeids")
    columns: dict[str, list] = {name: [] for name in ("treeids", "nodeids", "featureids", "modes", "values",
                                                      "truenodeids", "falsenodeids", "missing")}
    weights: dict[str, list] = {"treeids": [], "nodeids": [], "ids": [], "weights": []}

    def add(tree: int, leaf: bool, index: int, depth: int) -> int:
        if depth > len(modes) or not 0 <= index < (len(leaf_weights) if leaf else len(modes)):
            raise Refusal("a tree refers to a node or leaf it does not hold, or loops")
        nid = sum(1 for t in columns["treeids"] if t == tree)
        for name, value in (("treeids", tree), ("nodeids", nid), ("featureids", 0 if leaf else features[index]),
                            ("modes", "LEAF" if leaf else _MODES[modes[index]]), ("values", 0.0 if leaf else splits[index]),
                            ("truenodeids", 0), ("falsenodeids", 0),
                            ("missing", 0 if leaf or not missing else missing[index])):
            columns[name].append(value)
        if leaf:
            for name, value in (("treeids", tree), ("nodeids", nid), ("ids", leaf_targets[index]),
                                ("weights", leaf_weights[index])):
                weights[name].append(value)
            return nid
        place = len(columns["treeids"]) - 1
        columns["truenodeids"][place] = add(tree, bool(true_leaf[index]), true_ids[index], depth + 1)
        columns["falsenodeids"][place] = add(tree, bool(false_leaf[index]), false_ids[index], depth + 1)
        return nid

    for tree, root in enumerate(node.value("tree_roots")):
        add(tree, False, root, 0)
    count = node.value("n_targets") or 1
    aggregate = node.value("aggregate_function")
    transform = node.value("post_transform")
    node.attributes.clear()
    node.set("n_targets", AttrType.INT, count)
    node.set("aggregate_function", AttrType.STRING,
             _AGGREGATES[aggregate] if aggregate is not None else "SUM")  # TreeEnsemble's default
    node.set("post_transform", AttrType.STRING, _TRANSFORMS[transform] if transform else "NONE")

    for name in ("treeids", "nodeids", "featureids", "truenodeids", "falsenodeids"):
        node.set(f"nodes_{name}", AttrType.INTS, columns[name])
    node.set("nodes_modes", AttrType.STRINGS, columns["modes"])
    node.set("nodes_values", AttrType.FLOATS, columns["values"])
    node.set("nodes_missing_value_tracks_true", AttrType.INTS, columns["missing"])
    for name in ("treeids", "nodeids", "ids"):
        node.set(f"target_{name}", AttrType.INTS, weights[name])
    node.set("target_weights", AttrType.FLOATS, weights["weights"])


SUCCESSOR_ADAPTERS = {"upsample_scales": upsample_scales, "tree_ensemble": tree_ensemble}
