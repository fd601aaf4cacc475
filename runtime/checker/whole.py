"""Everything ``opspec check`` checks in one model, as one list of located problems."""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any

from opspec.runtime.checker.declared import declared_conflicts
from opspec.runtime.checker.negative_dims import negative_dim_problems, with_stand_ins
from opspec.runtime.checker.model import check_model_fields, repeated_imports
from opspec.runtime.inference.node_errors import NodeError
from opspec.runtime.inference.options import InferenceOptions
from opspec.runtime.op_set import OpSet


@dataclass(frozen=True)
class CheckResult:
    """The problems of the model's fields and graph structure, those of its nodes (schema,
    attribute constraints, inference, declared-vs-inferred conflicts; one per broken
    constraint), and its node count; ``notes`` are what is worth saying but no problem of the model:
    problems in graphs that may not run (an If's branch), which make the model fail only if such a
    graph runs, and opset imports written more than once at one version."""

    structure: list[Any]
    nodes: list[Any]
    node_count: int
    notes: list[Any] = field(default_factory=list)
    #: The prediction for a runtime, when one was asked for (see :mod:`.runtime_support`).
    verdict: Any = None
    #: Where each node runs, for a provider that falls back to the CPU (see :mod:`.placement`).
    placement: Any = None
    #: Each node's ``(domain, op_type)``, as inference saw them.
    op_types: list[tuple[str, str]] = field(default_factory=list)
    #: The type and shape inference the check ran (an ``InferenceResult``: types, unknown ops, counts).
    inference: Any = None

    @property
    def problems(self) -> list[Any]:
        return [*self.structure, *self.nodes, *(self.verdict.problems if self.verdict is not None else ())]

    @property
    def will_run(self) -> bool | None:
        """Whether the model will load and run on the runtime asked for (None: none was)."""
        if self.verdict is None:
            return None
        from opspec.runtime.checker.runtime_support import blocks_loading

        return self.verdict.will_run and not any(blocks_loading(problem) for problem in [*self.structure, *self.nodes])


#: How the check infers a model: every node against its schema, nothing written back; and how it
#: follows the model with stand-ins for its negative dims.
_CHECKED = InferenceOptions(check_type=True, data_prop=True, report=False, write_back=False)
_FOLLOWED = InferenceOptions(data_prop=True, report=False, write_back=False)


def check_model(model: Any, path: str | os.PathLike[str] | None = None, runtime: Any = None,
                read_external: bool = True, *, op_set: OpSet | None = None) -> CheckResult:
    """Check ``model`` (an opspec ``ModelProto``, left as it is); ``path`` is the
    file it was read from, whose folder external data must stay inside (None: not from a file);
    ``runtime`` a :class:`~.runtime_support.Target` to predict loading and running on (None: none);
    ``read_external`` False checks where external data lies without opening it (inference then
    knows less of the small tensors stored there); ``op_set`` what nodes are checked against (None:
    the installed op set). The prediction for onnxruntime reads onnxruntime's own op set, the
    installed one, whatever ``op_set`` is."""
    from opspec.runtime.inference.api import infer_in_place
    from opspec.runtime.inference.graph_checks import GraphProblem, check_graphs

    folder = os.path.dirname(os.path.abspath(path)) if path is not None else None
    fields = check_model_fields(model, folder, op_set)
    structure = [*fields, *check_graphs(model)]
    result = infer_in_place(model, path, _CHECKED, op_set=op_set, read_external=read_external)
    if model.HasField("graph"):
        structure += declared_conflicts(model.graph, result.type_of)
        negative = with_stand_ins(model)
        if negative is not None:
            followed = infer_in_place(negative[0], path, _FOLLOWED, op_set=op_set, read_external=read_external)
            structure += negative_dim_problems(model.graph, negative[1], followed.type_of, followed.errors,
                                               {str(error) for error in result.errors})
    reported = {problem.message for problem in fields}
    structure += [GraphProblem(f"graph '{model.graph.name}'", refusal, "external-data")
                  for refusal in result.external_refusals if refusal not in reported]
    unknown = [NodeError(node.index, node.name, node.op_type, node.domain, f"cannot be checked: {node.message}")
               for node in result.unknown_nodes]
    errors = [single for error in result.errors for single in _one_per_violation(error)]
    nodes = sorted([*errors, *unknown], key=lambda error: error.index)
    checked = CheckResult(structure, nodes, result.node_count, [*repeated_imports(model), *result.notes],
                          op_types=list(result.op_types), inference=result)
    return checked if runtime is None else for_runtime(checked, model, runtime)


def for_runtime(checked: CheckResult, model: Any, runtime: Any) -> CheckResult:
    """``checked`` (the check of ``model``, its inference kept) with the prediction for ``runtime``
    (a :class:`~.runtime_support.Target`) and, for a provider that falls back to the CPU, where each
    node runs."""
    from opspec.runtime.checker.runtime_support import DEFAULT_PROVIDER, predict

    type_of = checked.inference.type_of
    verdict = predict(model, type_of, runtime)
    placement = None
    if runtime.provider != DEFAULT_PROVIDER and model.HasField("graph"):
        from opspec.runtime.checker.placement import place

        placement = place(model, type_of, runtime.provider, verdict.problems)
    return replace(checked, verdict=verdict, placement=placement)


def _one_per_violation(error: NodeError) -> list[NodeError]:
    """A node error that stands for broken attribute constraints as one error per
    violation; any other as it is."""
    if not error.violations:
        return [error]
    return [NodeError(error.index, error.name, error.op_type, error.domain, str(violation), (violation,))
            for violation in error.violations]


def note_line(note: Any) -> str:
    """How ``opspec check`` prints one of :attr:`CheckResult.notes`."""
    if isinstance(note, NodeError):
        return f"note: {note} (a graph that may not run; not an error of the model)"
    return f"note: {note}"


__all__ = ["CheckResult", "check_model", "for_runtime", "note_line"]
