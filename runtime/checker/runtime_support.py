"""Will a model load and run in onnxruntime? A prediction from the inferred types and the kernel tables.

Every node of the main graph needs a kernel of the chosen execution provider for its op
version (resolved from the model's opset imports) that accepts the type bound to each of
its type parameters. Where onnxruntime does something else than failing, as measured on
its CPU provider, so does the prediction:

- an op version with no kernel that the runtime may take apart has a function body, which
  onnxruntime expands at load time (its nodes are not followed further);
- float16 values of an op with no float16 kernel on CPU run through casts onnxruntime inserts
  to float32, when a float32 kernel exists and the op's schema allows float32 there;
  bfloat16 gets no such casts;
- a model-local function is expanded where it is called.

A type inference could not find is never held against a node: the prediction may miss a
failure, it does not invent one. Nodes inside subgraphs (If, Loop, Scan bodies) are not
followed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from opspec.runtime.checker.problems import ModelProblem

#: The runtime the tables describe, and its default provider.
RUNTIME = "onnxruntime"
DEFAULT_PROVIDER = "cpu"
FLOAT16, FLOAT = "tensor(float16)", "tensor(float)"

@dataclass(frozen=True)
class Target:
    """A runtime and one of its execution providers (``onnxruntime:cpu``)."""

    runtime: str = RUNTIME
    provider: str = DEFAULT_PROVIDER

    def __str__(self) -> str:
        return f"{self.runtime}:{self.provider}"


def parse_target(text: str) -> Target:
    """``onnxruntime`` or ``onnxruntime:PROVIDER``; raises ValueError naming what is known."""
    from opspec.runtime.kernels import providers

    runtime, _, provider = text.partition(":")
    provider = provider or DEFAULT_PROVIDER
    if runtime != RUNTIME:
        raise ValueError(f"unknown runtime {runtime!r} (known: {RUNTIME})")
    if provider not in providers():
        raise ValueError(f"no kernel table for provider {provider!r} of {RUNTIME} (tables: {', '.join(providers())})")
    return Target(runtime, provider)


@dataclass(frozen=True)
class NoKernel:
    """Why a node has no kernel: the type parameter whose type none accepts (empty: no kernel at all
    for the version), the type found and the types the kernels accept there."""

    param: str
    found: str
    accepted: tuple[str, ...]


@dataclass(frozen=True)
class RuntimeProblem(ModelProblem):
    """A problem of the prediction; for a node, its position, op, domain and version too."""

    index: int | None = None
    op: str = ""
    domain: str = ""
    version: int | None = None
    missing: NoKernel | None = None


@dataclass(frozen=True)
class Verdict:
    """The prediction for one model and target: the problems that stop it (``will_run`` when none)."""

    target: Target
    problems: tuple[RuntimeProblem, ...] = field(default=())

    @property
    def will_run(self) -> bool:
        return not self.problems


def predict(model: Any, type_of: Any, target: Target = Target()) -> Verdict:
    """The verdict for ``model`` (a ``ModelProto``), whose values' inferred types ``type_of(name)``
    gives (None when unknown)."""
    from opspec.runtime.kernels import limits

    ir_limit, opset_limits = limits(target.provider)
    problems: list[RuntimeProblem] = []
    if ir_limit is not None and model.ir_version > ir_limit:
        problems.append(RuntimeProblem("model", f"IR version {model.ir_version} is newer than {target} loads "
                                                f"({ir_limit} at most)", "runtime-version"))
    for entry in model.opset_import:
        domain = entry.domain or "ai.onnx"
        limit = opset_limits.get(domain)
        if limit is not None and entry.version > limit:
            problems.append(RuntimeProblem("model", f"opset {entry.version} of domain '{domain}' is newer than "
                                                    f"{target} loads ({limit} at most)", "runtime-version"))
    problems += _node_problems(model, type_of, target)
    return Verdict(target, tuple(problems))


#: Codes of the check's own problems that onnxruntime refuses a model for as well.
LOAD_BLOCKING = frozenset({"unknown-op", "input-type", "node-arity", "attribute-missing", "attribute-type",
                           "opset-import", "undefined-value", "topological-order", "duplicate-name",
                           "graph-output", "node-form"})


def blocks_loading(problem: Any) -> bool:
    """Whether one of the check's own problems (a graph problem or a node error) stops onnxruntime too."""
    from opspec.runtime.checker.codes import node_code

    code = node_code(problem) if hasattr(problem, "op_type") else getattr(problem, "code", "")
    return code in LOAD_BLOCKING


def _node_problems(model: Any, type_of: Any, target: Target) -> Iterable[RuntimeProblem]:
    from opspec.runtime.defs import INFERENCE
    from opspec.runtime.inference.resolve import normalize_opsets
    from opspec.runtime.registry import SchemaError

    opsets = normalize_opsets(model.opset_import)
    local = {(function.domain, function.name) for function in model.functions}
    for index, node in enumerate(model.graph.node):
        where = f"node '{node.name}'" if node.name else f"node #{index}"
        where += f" ({node.op_type}, domain '{node.domain or 'ai.onnx'}')"
        if (node.domain, node.op_type) in local:
            continue
        try:
            domain = INFERENCE.canonical_domain(node.domain)
        except SchemaError:
            yield RuntimeProblem(where, f"domain '{node.domain}' is unknown to {target.runtime}", "unknown-domain",
                                 index, node.op_type, node.domain)
            continue
        try:
            schema = INFERENCE.get_schema(node.op_type, opsets.get(domain), domain)
        except SchemaError:
            continue  # no schema: the check reports the node as unknown
        missing = missing_kernel(schema, _bound_types(schema, node, type_of), target.provider)
        if missing is None:
            continue
        name = INFERENCE.domain(schema.domain).name
        if not missing.param:
            message = f"{target} has no kernel for {node.op_type} version {schema.since_version}"
        else:
            message = (f"{target} has no kernel for {node.op_type} version {schema.since_version} with "
                       f"{missing.param} = {missing.found}; its kernels take {missing.param} in "
                       f"{', '.join(missing.accepted) or 'nothing'}")
        yield RuntimeProblem(where, message, "no-kernel", index, node.op_type, name, schema.since_version, missing)


def _bound_types(schema: Any, node: Any, type_of: Any) -> dict[str, str]:
    """The type string bound to each type parameter of ``schema`` by the node's known input and
    output types (the first known value of each parameter)."""
    from opspec.runtime.contract.values import type_string
    from opspec.runtime.schema import FormalParameterOption

    params = {constraint.type_param_str for constraint in schema.type_constraints}
    bound: dict[str, str] = {}
    for formals, names in ((schema.inputs, node.input), (schema.outputs, node.output)):
        if not formals:
            continue
        for position, name in enumerate(names):
            formal = formals[min(position, len(formals) - 1)]
            if position >= len(formals) and formal.option is not FormalParameterOption.Variadic:
                break
            if not name or formal.type_str not in params or formal.type_str in bound:
                continue
            found = type_of(name)
            text = type_string(found) if found is not None else "?"
            if "?" not in text:
                bound[formal.type_str] = text
    return bound


def missing_kernel(schema: Any, bound: dict[str, str], provider: str) -> NoKernel | None:
    """Why no kernel of ``provider`` serves ``schema`` with the types ``bound`` (None: one does, or
    the runtime falls back to something that runs)."""
    from opspec.runtime.kernels import kernels_for_since

    domain = schema.domain
    candidates = kernels_for_since(schema.name, schema.since_version, domain, provider)
    if any(kernel.accepts(bound) for kernel in candidates):
        return None
    if schema.has_function or schema.has_context_dependent_function:
        return None  # expanded into its body at load time
    if candidates and provider == DEFAULT_PROVIDER and _casts_to_float(schema, bound, candidates):
        return None
    if not candidates:
        return NoKernel("", "", ())
    for param, found in sorted(bound.items()):
        accepted = set().union(*((kernel.accepted(param) or frozenset()) for kernel in candidates))
        if all(kernel.accepted(param) is not None for kernel in candidates) and found not in accepted:
            return NoKernel(param, found, tuple(sorted(accepted)))
    # every type is accepted by some kernel, but no kernel takes them together
    param, found = sorted(bound.items())[0]
    accepted = set().union(*((kernel.accepted(param) or frozenset()) for kernel in candidates))
    return NoKernel(param, found, tuple(sorted(accepted)))


def _casts_to_float(schema: Any, bound: dict[str, str], candidates: Iterable[Any]) -> bool:
    """Whether onnxruntime's CPU provider runs the node by casting its float16 values to float32."""
    if FLOAT16 not in bound.values():
        return False
    allowed = {constraint.type_param_str: constraint.allowed_type_strs for constraint in schema.type_constraints}
    if any(found == FLOAT16 and FLOAT not in allowed.get(param, ()) for param, found in bound.items()):
        return False
    widened = {param: FLOAT if found == FLOAT16 else found for param, found in bound.items()}
    return any(kernel.accepts(widened) for kernel in candidates)


__all__ = ["LOAD_BLOCKING", "blocks_loading", "DEFAULT_PROVIDER", "RUNTIME", "NoKernel", "RuntimeProblem", "Target", "Verdict",
           "missing_kernel", "parse_target", "predict"]
