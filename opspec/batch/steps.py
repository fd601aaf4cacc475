"""What a scan asks of each model, as a list of named steps.

Every step reads the :class:`Analysis` of one model (what earlier steps left there) and gives
the members it adds to the model's line; each is timed under its name. A new question is one
more :class:`Step` in :data:`STEPS`.
"""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from opspec.batch.records import Failure, ScanOptions, Status, Task, failed_record


@dataclass
class Analysis:
    """One model's analysis in progress: the task, the scan's options and what the steps found."""

    task: Task
    options: ScanOptions
    model: Any = None
    #: The checker's :class:`~opspec.runtime.checker.whole.CheckResult` (its inference included).
    checked: Any = None
    found: dict[str, Any] = field(default_factory=dict)


def always(options: ScanOptions) -> bool:
    """Every scan wants the step."""
    return True


@dataclass(frozen=True)
class Step:
    """A named part of the analysis: ``run`` gives the line's members it finds; ``wanted`` says
    whether the scan's options ask for it."""

    name: str
    run: Callable[[Analysis], dict[str, Any]]
    wanted: Callable[[ScanOptions], bool] = always


def _runtime_asked(options: ScanOptions) -> bool:
    return options.runtime is not None


def _cost_asked(options: ScanOptions) -> bool:
    return options.cost


def _load(analysis: Analysis) -> dict[str, Any]:
    from opspec.runtime.ir import load_model

    model = analysis.model = load_model(analysis.task.path).model
    return {"ir_version": model.ir_version, "producer": model.producer_name or None,
            "opsets": {entry.domain or "ai.onnx": entry.version for entry in model.opset_import}}


def _check(analysis: Analysis) -> dict[str, Any]:
    from opspec.runtime.checker.whole import check_model

    checked = analysis.checked = check_model(analysis.model, analysis.task.path,
                                             read_external=analysis.options.read_external)
    return {"problems": code_counts([*checked.structure, *checked.nodes]), "notes": len(checked.notes)}


def _infer(analysis: Analysis) -> dict[str, Any]:
    """What the inference the check ran found: unknown ops, ops without a rule, value counts."""
    from opspec.cli_infer import ops_without_rule

    inference, graph = analysis.checked.inference, analysis.model.graph
    names = {value.name for value in graph.input} | {tensor.name for tensor in graph.initializer}
    names |= {output for node in graph.node for output in node.output if output}
    return {"nodes": inference.node_count, "values": len(names),
            "typed_values": sum(1 for name in names if inference.type_of(name) is not None),
            "unknown_ops": sorted(f"{domain or 'ai.onnx'}:{op_type}" for domain, op_type in inference.unknown_reasons),
            "ops_without_rule": [f"{domain}:{op_type}@{version}"
                                 for domain, op_type, version in ops_without_rule(analysis.model.opset_import,
                                                                                  inference.op_types)],
            "implied_opsets": dict(sorted(inference.implied_opsets.items()))}


def _runtime(analysis: Analysis) -> dict[str, Any]:
    """The prediction ``check --runtime`` makes, from the types the check's inference found."""
    from opspec.runtime.checker.runtime_support import parse_target
    from opspec.runtime.checker.whole import for_runtime

    target = parse_target(analysis.options.runtime or "")
    checked = for_runtime(analysis.checked, analysis.model, target)
    return {"runtime": {"target": str(target), "will_run": checked.will_run,
                        "problems": code_counts(checked.verdict.problems)}}


def _cost(analysis: Analysis) -> dict[str, Any]:
    """The model's totals as ``opspec cost`` gives them: numbers, formula strings of the input
    symbols, or null where a size is unknown."""
    from opspec.runtime.cost import cost

    total = cost(analysis.model).to_json()["total"]
    return {"cost": {"macs": total["macs"], "flops": total["flops"], "parameters": total["parameters"],
                     "weight_bytes": total["weight_bytes"], "activation_bytes": total["activation_bytes"],
                     "peak_activation_bytes": total["peak_activation_bytes"],
                     "kv_cache_bytes": total["kv_cache"]["present_bytes"],
                     "nodes_of_unknown_macs": total["unknown_nodes"].get("macs", 0)}}


#: The analysis, in order (functions of a module, so that a step can be sent to a worker by name).
STEPS: tuple[Step, ...] = (
    Step("load", _load),
    Step("check", _check),
    Step("infer", _infer),
    Step("runtime", _runtime, _runtime_asked),
    Step("cost", _cost, _cost_asked),
)


def analyse(task: Task, options: ScanOptions) -> dict[str, Any]:
    """The line of one model: every step of the options (:data:`STEPS` unless they say otherwise)
    that they want, run in turn and timed (seconds of wall time)."""
    from opspec.runtime.ir import ModelLoadError

    analysis = Analysis(task, options)
    timings: dict[str, float] = {}
    for step in options.steps or STEPS:
        if not step.wanted(options):
            continue
        started = time.perf_counter()
        try:
            analysis.found.update(step.run(analysis))
        except ModelLoadError as error:
            return failed_record(task, Failure.UNREADABLE, str(error), timings)
        finally:
            timings[step.name] = round(time.perf_counter() - started, 6)
    found = analysis.found
    runtime = found.get("runtime")
    clean = not found.get("problems") and (runtime is None or (runtime["will_run"] and not runtime["problems"]))
    status = Status.OK if clean else Status.PROBLEMS
    return {"path": task.path, "sha256": task.sha256, "bytes": task.size, "status": status.value,
            "problem_count": sum(found.get("problems", {}).values()), **found, "timings": timings}


def code_counts(problems: Iterable[Any]) -> dict[str, int]:
    """How many of ``problems`` there are of each code, the codes in order."""
    return dict(sorted(Counter(problem_code(problem) for problem in problems).items()))


def problem_code(problem: Any) -> str:
    """The stable code of any problem the checker reports (a node's from its message)."""
    code = getattr(problem, "code", None)
    if isinstance(code, str):
        return code
    from opspec.runtime.checker.codes import node_code

    return node_code(problem)


__all__ = ["Analysis", "STEPS", "Step", "always", "analyse", "code_counts", "problem_code"]
