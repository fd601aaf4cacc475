"""Will it run in onnxruntime? ``opspec check --runtime onnxruntime`` against the truth, beside two baselines.

Cases: every case of onnx's node suite as shipped; the first case of each default-domain op
re-typed to every other tensor type its schema allows for each type parameter (float16,
bfloat16, double, the integer types, ...); IR version and opset edges; onnxruntime's own
com.microsoft ops at their types, the models of onnxruntime's tools (``tests/ort_models.py``)
as they are, and float16 and bfloat16 conversions of them and of the exporter models
(``runtime_cases_wide``). Truth: onnxruntime's
default ``InferenceSession`` on CPU plus one run with the case's inputs, in worker processes
(at most ``WORKERS``; a crash counts as a failure and the worker is restarted). "Positive"
means "will fail". Baselines: ``onnx.checker.check_model(full_check=True)``, and a plain
lookup of the same kernel table on the types onnx's shape inference gives (no fallbacks).

    .venv/bin/python benchmarks/bench_runtime_support.py [--limit N] [--markdown]
"""
from __future__ import annotations

import argparse
import json
import pickle
import shutil
import subprocess
import sys
import time
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

REPO = Path(__file__).resolve().parent.parent
CASES = REPO / ".build" / "runtime_cases"
WORKER = Path(__file__).resolve().parent / "runtime_truth_worker.py"
#: Worker processes computing the truth (the machine is shared).
WORKERS = 2


@dataclass(frozen=True)
class Case:
    name: str
    family: str
    model: Any  # onnx.ModelProto
    inputs: dict[str, tuple[Any, int]] | None  # name: (array, elem type); None: load only


def _node_suite() -> list[Any]:
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [case for case in collect_testcases(None) if case.data_sets]


def _inputs(model: Any, arrays: Iterable[Any]) -> dict[str, tuple[Any, int]] | None:
    import numpy

    initialized = {tensor.name for tensor in model.graph.initializer}
    names = [value for value in model.graph.input if value.name not in initialized]
    feeds: dict[str, tuple[Any, int]] = {}
    for value, array in zip(names, arrays):
        if not isinstance(array, numpy.ndarray) or not value.type.HasField("tensor_type"):
            return None  # sequences, optionals, maps: loaded only
        feeds[value.name] = (array, value.type.tensor_type.elem_type)
    return feeds


def cases(limit: int | None) -> list[Case]:
    """Every case of the benchmark (the first ``limit`` of each family when given)."""
    suite = _node_suite()
    found = [Case(case.name, "node suite", case.model, _inputs(case.model, case.data_sets[0][0])) for case in suite]
    found += _retyped(suite)
    found += _version_edges()
    found += _wide()
    if limit is None:
        return found
    kept: Counter[str] = Counter()
    chosen = []
    for case in found:
        if kept[case.family] < limit:
            kept[case.family] += 1
            chosen.append(case)
    return chosen


def _retyped(suite: list[Any]) -> list[Case]:
    """The first suite case of each default-domain op with one node, re-typed per type parameter."""
    import numpy
    from onnx import helper

    from opspec.runtime.defs import INFERENCE
    from opspec.runtime.registry import SchemaError

    seen: set[str] = set()
    found: list[Case] = []
    for case in suite:
        graph = case.model.graph
        if len(graph.node) != 1 or case.model.functions or graph.initializer:
            continue
        node = graph.node[0]
        if node.domain not in ("", "ai.onnx") or node.op_type in seen or any(a.g.node or a.graphs for a in node.attribute):
            continue
        seen.add(node.op_type)
        opset = next((entry.version for entry in case.model.opset_import if entry.domain in ("", "ai.onnx")), None)
        try:
            schema = INFERENCE.get_schema(node.op_type, opset, "")
        except SchemaError:
            continue
        arrays = dict(zip([value.name for value in graph.input], case.data_sets[0][0]))
        for constraint in schema.type_constraints:
            param = constraint.type_param_str
            bound = _bound_names(schema, node, param)
            values = [value for value in (*graph.input, *graph.output) if value.name in bound]
            if not values or not all(value.type.HasField("tensor_type") for value in values):
                continue
            current = values[0].type.tensor_type.elem_type
            for type_text in constraint.allowed_type_strs:
                if not type_text.startswith("tensor(") or type_text == _type_text(current):
                    continue
                elem = _elem(type_text[len("tensor("):-1])
                if elem is None:
                    continue
                model = type(case.model)()
                model.CopyFrom(case.model)
                del model.graph.value_info[:]
                for value in (*model.graph.input, *model.graph.output):
                    if value.name in bound:
                        value.type.tensor_type.elem_type = elem
                feeds: dict[str, tuple[Any, int]] | None = {}
                for value in model.graph.input:
                    array = arrays.get(value.name)
                    if not isinstance(array, numpy.ndarray) or feeds is None:
                        feeds = None
                        continue
                    target = value.type.tensor_type.elem_type
                    try:
                        feeds[value.name] = (array.astype(helper.tensor_dtype_to_np_dtype(target)), target)
                    except (TypeError, ValueError, KeyError):
                        feeds = None
                found.append(Case(f"{case.name}__{param}_{type_text[7:-1]}", "re-typed", model, feeds))
    return found


def _wide() -> list[Case]:
    from runtime_cases_wide import contrib_ops, converted_and_tool_models

    return [Case(name, family, model, inputs) for name, family, model, inputs in (*contrib_ops(),
                                                                                 *converted_and_tool_models())]


def _bound_names(schema: Any, node: Any, param: str) -> set[str]:
    names: set[str] = set()
    for formals, actual in ((schema.inputs, node.input), (schema.outputs, node.output)):
        for position, name in enumerate(actual):
            if formals and formals[min(position, len(formals) - 1)].type_str == param and name:
                names.add(name)
    return names


def _type_text(elem: int) -> str:
    from onnx import helper

    return f"tensor({helper.tensor_dtype_to_string(elem)[len('TensorProto.'):].lower()})"


def _elem(name: str) -> int | None:
    from onnx import TensorProto

    return getattr(TensorProto, {"bool": "BOOL", "float": "FLOAT"}.get(name, name.upper()), None)


def _version_edges() -> list[Case]:
    import numpy
    from onnx import TensorProto, helper

    found = []
    for ir_version, domain, version in [(12, "", 21), (13, "", 21), (14, "", 21), (15, "", 21), (10, "", 25),
                                        (10, "", 26), (10, "", 27), (10, "", 28), (10, "ai.onnx.ml", 5),
                                        (10, "ai.onnx.ml", 6), (10, "com.microsoft", 1), (10, "com.microsoft", 2),
                                        (10, "", 6), (10, "", 7)]:
        node = helper.make_node("Add", ["a", "b"], ["c"])
        graph = helper.make_graph([node], "edge", [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2])
                                                   for n in "ab"], [helper.make_tensor_value_info("c", TensorProto.FLOAT, [2])])
        imports = [helper.make_opsetid("", version if domain == "" else 17)]
        if domain:
            imports.append(helper.make_opsetid(domain, version))
        model = helper.make_model(graph, opset_imports=imports)
        model.ir_version = ir_version
        data = numpy.ones(2, numpy.float32)
        found.append(Case(f"edge_ir{ir_version}_{domain or 'ai.onnx'}{version}", "IR and opset edges", model,
                          {"a": (data, TensorProto.FLOAT), "b": (data, TensorProto.FLOAT)}))
    return found


def write_cases(found: list[Case]) -> list[Path]:
    shutil.rmtree(CASES, ignore_errors=True)
    folders = []
    for case in found:
        folder = CASES / case.name
        folder.mkdir(parents=True)
        (folder / "model.onnx").write_bytes(case.model.SerializeToString())
        if case.inputs is not None:
            (folder / "inputs.pkl").write_bytes(pickle.dumps(case.inputs))
        folders.append(folder)
    return folders


def digest(folder: Path) -> str:
    """What a case's truth depends on: its model's and inputs' bytes."""
    import hashlib

    found = hashlib.sha256((folder / "model.onnx").read_bytes())
    if (folder / "inputs.pkl").is_file():
        found.update((folder / "inputs.pkl").read_bytes())
    return found.hexdigest()


def known_truths(saved: Path) -> dict[str, tuple[bool, str]]:
    """The truths of the last run by digest (from a run that did not record digests, computed from
    its case folders, which must be read before they are rewritten)."""
    if not saved.is_file():
        return {}
    stored = json.loads(saved.read_text(encoding="utf-8"))
    answers = {name: tuple(answer) for name, answer in stored["answers"].items()}
    digests = stored.get("digests") or {name: digest(CASES / name) for name in answers if (CASES / name).is_dir()}
    return {digests[name]: answer for name, answer in answers.items() if name in digests}


def truths(folders: list[Path]) -> dict[str, tuple[bool, str]]:
    """Each case's truth, from ``WORKERS`` worker processes fed one case at a time."""
    pending = list(reversed(folders))
    answers: dict[str, tuple[bool, str]] = {}

    def start() -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, bufsize=1)

    workers: list[list[Any]] = [[start(), None] for _ in range(WORKERS)]
    import selectors

    selector = selectors.DefaultSelector()

    def feed(slot: list[Any]) -> None:
        if pending:
            slot[1] = pending.pop()
            slot[0].stdin.write(f"{slot[1]}\n")
            slot[0].stdin.flush()
            selector.register(slot[0].stdout, selectors.EVENT_READ, slot)
        else:
            slot[1] = None
            slot[0].stdin.close()

    for slot in workers:
        feed(slot)
    while any(slot[1] is not None for slot in workers):
        for key, _ in selector.select():
            slot = key.data
            selector.unregister(slot[0].stdout)
            line = slot[0].stdout.readline()
            if line:
                answer = json.loads(line)
                answers[answer["case"]] = (answer["ok"], answer["why"])
            else:  # the worker crashed on this case
                answers[slot[1].name] = (False, f"crash (exit {slot[0].wait()})")
                slot[0] = start()
            feed(slot)
    for slot in workers:
        slot[0].wait()
    return answers


def predict_opspec(folder: Path) -> bool:
    """Ours: will it fail?"""
    from opspec.runtime.checker.runtime_support import Target
    from opspec.runtime.checker.whole import check_model
    from opspec.runtime.ir import load_model

    path = folder / "model.onnx"
    return not check_model(load_model(str(path)).model, str(path), Target()).will_run


def predict_checker(folder: Path) -> bool:
    import onnx

    try:
        onnx.checker.check_model(onnx.load(str(folder / "model.onnx")), full_check=True)
    except Exception:  # noqa: BLE001
        return True
    return False


def predict_lookup(folder: Path) -> bool:
    """The kernel table looked up on onnx's inferred types, with no fallback."""
    import onnx
    import onnx.defs

    from opspec.runtime.kernels import kernels_for_since

    model = onnx.load(str(folder / "model.onnx"))
    try:
        model = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001
        pass
    graph = model.graph
    types = {}
    for value in (*graph.input, *graph.output, *graph.value_info):
        if value.type.HasField("tensor_type") and value.type.tensor_type.elem_type:
            types[value.name] = _type_text(value.type.tensor_type.elem_type)
    for tensor in graph.initializer:
        types[tensor.name] = _type_text(tensor.data_type)
    opsets = {entry.domain or "": entry.version for entry in model.opset_import}
    for node in graph.node:
        domain = node.domain if node.domain != "ai.onnx" else ""
        try:
            schema = onnx.defs.get_schema(node.op_type, opsets.get(domain, 1), domain)
        except Exception:  # noqa: BLE001 - unknown to onnx: nothing to look up
            continue
        params = {constraint.type_param_str for constraint in schema.type_constraints}
        bound: dict[str, str] = {}
        for formals, names in ((schema.inputs, node.input), (schema.outputs, node.output)):
            for position, name in enumerate(names):
                if formals and name:
                    formal = formals[min(position, len(formals) - 1)]
                    if formal.type_str in params and name in types:
                        bound.setdefault(formal.type_str, types[name])
        found = kernels_for_since(node.op_type, schema.since_version, domain)
        if not any(kernel.accepts(bound) for kernel in found):
            return True
    return False


PREDICTORS: dict[str, Callable[[Path], bool]] = {
    "opspec check --runtime onnxruntime": predict_opspec,
    "onnx.checker (full_check)": predict_checker,
    "kernel table on onnx's inferred types": predict_lookup,
}


def confusion(truth: dict[str, bool], predicted: dict[str, bool]) -> dict[str, float]:
    """Counts and rates, "will fail" being positive."""
    tp = sum(1 for case, fails in truth.items() if fails and predicted[case])
    fp = sum(1 for case, fails in truth.items() if not fails and predicted[case])
    fn = sum(1 for case, fails in truth.items() if fails and not predicted[case])
    tn = sum(1 for case, fails in truth.items() if not fails and not predicted[case])
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return {"tp": tp, "fp": fp, "fn": fn, "tn": tn, "precision": precision, "recall": recall}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="at most N cases of each family")
    parser.add_argument("--report", default=None, help="write the misses of opspec to this JSON file")
    parser.add_argument("--reuse", action="store_true",
                        help="reuse the cases and truth of the last run (.build/runtime_cases, runtime_truth.json)")
    parser.add_argument("--fresh", action="store_true",
                        help="compute every truth again (by default a case whose model and inputs are unchanged "
                             "since the last run keeps its truth)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    saved = CASES.parent / "runtime_truth.json"
    if args.reuse and saved.is_file():
        stored = json.loads(saved.read_text(encoding="utf-8"))
        families, answers = stored["families"], {name: tuple(answer) for name, answer in stored["answers"].items()}
        folders = [CASES / name for name in families]
        found = list(families)
    else:
        found = cases(args.limit)
        families = {case.name: case.family for case in found}
        known = {} if args.fresh else known_truths(saved)
        folders = write_cases(found)
        digests = {folder.name: digest(folder) for folder in folders}
        answers = {name: known[value] for name, value in digests.items() if value in known}
        answers.update(truths([folder for folder in folders if folder.name not in answers]))
        saved.write_text(json.dumps({"families": families, "answers": answers, "digests": digests}), encoding="utf-8")
    truth_seconds = time.perf_counter() - started
    truth = {name: not ok for name, (ok, _) in answers.items()}
    print(f"{len(found)} cases ({dict(Counter(families.values()))}); {sum(truth.values())} fail in onnxruntime; "
          f"truth in {truth_seconds:.0f} s")
    results = {}
    for label, predictor in PREDICTORS.items():
        begun = time.perf_counter()
        predicted = {folder.name: predictor(folder) for folder in folders}
        results[label] = (confusion(truth, predicted), predicted, time.perf_counter() - begun)
    print("| predictor | fails, predicted (TP) | runs, predicted to fail (FP) | fails, missed (FN) | runs, "
          "predicted to run (TN) | precision | recall | seconds |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, (matrix, _, seconds) in results.items():
        print(f"| {label} | {matrix['tp']} | {matrix['fp']} | {matrix['fn']} | {matrix['tn']} | "
              f"{matrix['precision']:.1%} | {matrix['recall']:.1%} | {seconds:.0f} |")
    ours = results["opspec check --runtime onnxruntime"][1]
    suite_alarms = [name for name in ours if families[name] == "node suite" and ours[name] and not truth[name]]
    print(f"false alarms on unmodified node-suite models: {len(suite_alarms)} {suite_alarms[:10]}")
    for family in sorted(set(families.values())):
        subset = {name: fails for name, fails in truth.items() if families[name] == family}
        matrix = confusion(subset, {name: ours[name] for name in subset})
        print(f"  {family}: {len(subset)} cases, tp {matrix['tp']} fp {matrix['fp']} fn {matrix['fn']} tn {matrix['tn']}")
    if args.report:
        misses = {name: {"truth_fails": truth[name], "why": answers[name][1], "family": families[name]}
                  for name in ours if ours[name] != truth[name]}
        Path(args.report).write_text(json.dumps(misses, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO.parent))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    raise SystemExit(main())
