"""Will a model load and run in onnxruntime? A prediction from the inferred types and the kernel tables.

Every node of the main graph needs a kernel of the chosen execution provider for its op
version (resolved from the model's opset imports) that accepts the type bound to each of
its type parameters. Where onnxruntime does something else than failing, as measured on
its CPU provider, so does the prediction:

- a node no kernel accepts whose op version has a function body usable at the model's opset
  (as onnx picks bodies: none when an op the body calls changed since the body's opset) is
  expanded at load time; the body's nodes need kernels in turn, with the types that flow into
  them from the node's (a clash of two types on one type parameter fails too);
- a node no kernel accepts whose op version has a body onnx builds per node is expanded into it
  as well: the kernel table states the ops such a body calls and the types it calls them with
  (``built_bodies``), which are followed like a written body's; where the table says nothing, an
  op version with no kernel at all is taken to run, one with kernels (none for the node's types)
  to fail;
- a kernel that accepts the node's types may still refuse the node when it is created or run
  (the table's ``refusals``: RNNs with ``layout`` 1, GRU and LSTM in double);
- float16 values of an op with no float16 kernel on CPU run through casts onnxruntime inserts
  to float32, when a float32 kernel exists and the op's schema allows float32 there;
  bfloat16 gets no such casts;
- a model-local function is expanded where it is called;
- a domain onnxruntime knows but the model does not import is imported at its newest opset;
- Constant nodes become initializers, and a Shape node whose input shape is fully known is
  folded into one, before kernels are chosen.

An op version onnxruntime has no schema for (the table lists the schemas it knows) stops the
model, whatever opspec knows of it.

A type inference could not find is never held against a node: the prediction may miss a
failure, it does not invent one. Such a node is listed among the verdict's ``unbound`` nodes
when a kernel's choice depends on the type it lacks, so that a gate can refuse what it could
not tell. Nodes inside subgraphs (If, Loop, Scan bodies) are not followed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
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
    #: The node of the op's function body that has no kernel (empty: the node itself).
    inside: str = ""


@dataclass(frozen=True)
class RuntimeProblem(ModelProblem):
    """A problem of the prediction; for a node, its position, op, domain and version too."""

    index: int | None = None
    op: str = ""
    domain: str = ""
    version: int | None = None
    missing: NoKernel | None = None


@dataclass(frozen=True)
class UnboundNode:
    """A node the prediction let pass without knowing it runs: the type parameters that pick its
    kernel and whose types inference could not find."""

    where: str
    index: int
    op: str
    domain: str
    version: int
    params: tuple[str, ...]

    def __str__(self) -> str:
        return (f"{self.where}: the {'type' if len(self.params) == 1 else 'types'} of {', '.join(self.params)} "
                f"{'is' if len(self.params) == 1 else 'are'} unknown, so whether a kernel takes the node cannot be told")


@dataclass(frozen=True)
class Verdict:
    """The prediction for one model and target: the problems that stop it (``will_run`` when none),
    and the nodes whose kernel it could not tell for types it lacks (which do not stop it)."""

    target: Target
    problems: tuple[RuntimeProblem, ...] = field(default=())
    unbound: tuple[UnboundNode, ...] = field(default=())

    @property
    def will_run(self) -> bool:
        return not self.problems


#: Problem codes of one node's kernel, which another provider taking the node makes moot.
KERNEL_CODES = frozenset({"no-kernel", "kernel-refuses"})


def predict(model: Any, type_of: Any, target: Target = Target()) -> Verdict:
    """The verdict for ``model`` (a ``ModelProto``), whose values' inferred types ``type_of(name)``
    gives (None when unknown). A provider other than the CPU takes the nodes it has a kernel for and
    leaves the rest to the CPU provider, as onnxruntime partitions a graph: a node fails only when
    neither has a kernel for it."""
    from opspec.runtime.kernels import limits

    if target.provider != DEFAULT_PROVIDER:
        on_cpu = predict(model, type_of, replace(target, provider=DEFAULT_PROVIDER))
        taken = taken_by(model, type_of, target.provider)
        return Verdict(target, tuple(
            replace(problem, message=f"no {target} kernel takes the node, nor does the CPU fallback: {problem.message}")
            if problem.code in KERNEL_CODES else problem
            for problem in on_cpu.problems if not (problem.index in taken and problem.code in KERNEL_CODES)),
            on_cpu.unbound)
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
    unbound: list[UnboundNode] = []
    problems += _node_problems(model, type_of, target, unbound)
    return Verdict(target, tuple(problems), tuple(unbound))


#: Codes of the check's own problems that onnxruntime refuses a model for as well (its own
#: type and shape inference runs strictly when it loads a model; an attribute constraint, a
#: relation to a dim included, declares only what onnxruntime refuses too).
LOAD_BLOCKING = frozenset({"unknown-op", "input-type", "node-arity", "attribute-missing", "attribute-type",
                           "attribute-value", "opset-import", "undefined-value", "topological-order",
                           "duplicate-name", "graph-output", "node-form", "inference", "output-type"})
_IN_SUBGRAPH = ("in subgraph ", "in a subgraph")
#: A declared type contradicting the inferred one stops onnxruntime when the kinds or element
#: types differ (a shape that differs is only warned about).
_TYPE_CONFLICT = ("element types ", "map key types ", " is not ")


def blocks_loading(problem: Any) -> bool:
    """Whether one of the check's own problems (a graph problem or a node error) stops onnxruntime too."""
    from opspec.runtime.checker.codes import node_code

    code = node_code(problem) if hasattr(problem, "op_type") else getattr(problem, "code", "")
    if hasattr(problem, "op_type") and problem.message.startswith(_IN_SUBGRAPH):
        return False  # subgraphs are not followed (a branch may never run, onnxruntime checks them less)
    if code == "opset-import" and _imported_by_runtime(problem.message):
        return False
    if code == "declared-conflict":  # a Constant becomes an initializer first: its declared type stands
        return (problem.domain or "ai.onnx", problem.op_type) not in REPLACED_AT_LOAD and \
            any(mark in problem.message for mark in _TYPE_CONFLICT)
    return code in LOAD_BLOCKING


_MISSING_IMPORT = re.compile(r"domain '([^']*)' has no opset import")


def _imported_by_runtime(message: str) -> bool:
    """Whether a missing opset import is of a domain onnxruntime knows, whose newest opset it then
    imports itself (measured: Relu without an import of the default domain, FastGelu without
    com.microsoft, both run)."""
    from opspec.runtime.kernels import limits

    found = _MISSING_IMPORT.fullmatch(message)
    return found is not None and found.group(1) in limits(DEFAULT_PROVIDER)[1]


#: Ops onnxruntime replaces by initializers when it loads a graph (no kernel is ever needed).
REPLACED_AT_LOAD = frozenset({("ai.onnx", "Constant")})


def _node_problems(model: Any, type_of: Any, target: Target, unbound: list[UnboundNode]) -> Iterable[RuntimeProblem]:
    """The problems of the main graph's nodes; the nodes let pass for want of a type go to ``unbound``."""
    from opspec.runtime.defs import INFERENCE
    from opspec.runtime.inference.resolve import normalize_opsets
    from opspec.runtime.kernels import known_versions, limits
    from opspec.runtime.registry import SchemaError

    opsets = normalize_opsets(model.opset_import)
    for domain, newest in limits(target.provider)[1].items():  # a known domain not imported: the runtime's newest
        opsets.setdefault("" if domain == "ai.onnx" else domain, newest)
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
        name = INFERENCE.domain(schema.domain).name
        if (name, node.op_type) in REPLACED_AT_LOAD:
            continue
        foreign = _foreign_type(node, type_of, target.provider)
        if foreign is not None:
            yield RuntimeProblem(where, f"{target} has no kernel that takes {foreign} at all", "no-kernel",
                                 index, node.op_type, name, schema.since_version, NoKernel("", foreign, ()))
            continue
        if _folded_shape(node, name, type_of):
            continue
        known = known_versions(node.op_type, name, target.provider)
        if known is not None and not any(version <= schema.since_version for version in known):
            yield RuntimeProblem(where, f"{target.runtime} knows no schema of {node.op_type} "
                                        f"{'before version ' + str(min(known) + 1) if known else 'at any version'}"
                                        f" (opspec resolves it to version {schema.since_version})",
                                 "unknown-to-runtime", index, node.op_type, name, schema.since_version)
            continue
        if known is not None and max(v for v in known if v <= schema.since_version) != schema.since_version:
            newest = max(v for v in known if v <= schema.since_version)
            yield RuntimeProblem(where, f"{target.runtime} knows {node.op_type} only up to version {newest}, "
                                        f"not version {schema.since_version}", "unknown-to-runtime",
                                 index, node.op_type, name, schema.since_version)
            continue
        bound = _bound_types(schema, node, type_of)
        attribute_value = _attribute_reader(schema, node)
        missing = _missing(schema, bound, target.provider, opsets.get(domain), EXPANSION_DEPTH, attribute_value, opsets)
        if missing is None:
            refused = _refusal(schema, bound, attribute_value, target.provider)
            if refused is not None:
                yield RuntimeProblem(where, f"{target} has a kernel for {node.op_type} version {schema.since_version} "
                                            f"that refuses this node: {refused}", "kernel-refuses",
                                     index, node.op_type, name, schema.since_version)
                continue
            lacking = _deciding_unknowns(schema, node, bound, target.provider)
            if lacking:
                unbound.append(UnboundNode(where, index, node.op_type, name, schema.since_version, lacking))
            continue
        what = f"{node.op_type} version {schema.since_version}"
        if missing.inside:
            what = f"{missing.inside} in the function body {node.op_type} version {schema.since_version} expands into"
        if not missing.param:
            message = f"{target} has no kernel for {what}"
        else:
            message = (f"{target} has no kernel for {what} with {missing.param} = {missing.found}; its kernels "
                       f"take {missing.param} in {', '.join(missing.accepted) or 'nothing'}")
        yield RuntimeProblem(where, message, "no-kernel", index, node.op_type, name, schema.since_version, missing)


def _deciding_unknowns(schema: Any, node: Any, bound: dict[str, str], provider: str) -> tuple[str, ...]:
    """The type parameters of the node's present values that no type is bound to and where the
    kernels of the op version do not take every type the schema allows (all of them when it has
    no kernel of its own)."""
    from opspec.runtime.kernels import kernels_for_since
    from opspec.runtime.schema import FormalParameterOption

    params = {constraint.type_param_str for constraint in schema.type_constraints}
    used: set[str] = set()
    for formals, names in ((schema.inputs, node.input), (schema.outputs, node.output)):
        for position, value in enumerate(names):
            if not formals or not value:
                continue
            formal = formals[min(position, len(formals) - 1)]
            if position >= len(formals) and formal.option is not FormalParameterOption.Variadic:
                break
            if formal.type_str in params:
                used.add(formal.type_str)
    lacking = used - bound.keys()
    candidates = kernels_for_since(schema.name, schema.since_version, schema.domain, provider)
    if candidates:
        allowed = {constraint.type_param_str: set(constraint.allowed_type_strs) for constraint in schema.type_constraints}
        lacking = {param for param in lacking
                   if not all(allowed[param] <= (kernel.accepted(param) or allowed[param]) for kernel in candidates)}
    return tuple(sorted(lacking))


def taken_by(model: Any, type_of: Any, provider: str) -> frozenset[int]:
    """The positions of the main graph's nodes that a kernel of ``provider`` takes: one serves the
    node's op version with the types bound to its type parameters (a type inference could not find
    is not held against a kernel; on the CPU, float16 through inserted casts counts), and the table
    lists no refusal of the node. Nodes that need no kernel (Constant, a folded Shape), nodes run
    through a function body, model-local functions and ops of unknown domains are not taken."""
    from opspec.runtime.defs import INFERENCE
    from opspec.runtime.inference.resolve import normalize_opsets
    from opspec.runtime.kernels import kernels_for_since, limits
    from opspec.runtime.registry import SchemaError

    opsets = normalize_opsets(model.opset_import)
    for domain, newest in limits(DEFAULT_PROVIDER)[1].items():
        opsets.setdefault("" if domain == "ai.onnx" else domain, newest)
    local = {(function.domain, function.name) for function in model.functions}
    taken: set[int] = set()
    for index, node in enumerate(model.graph.node):
        if (node.domain, node.op_type) in local:
            continue
        try:
            domain = INFERENCE.canonical_domain(node.domain)
            schema = INFERENCE.get_schema(node.op_type, opsets.get(domain), domain)
        except SchemaError:
            continue
        name = INFERENCE.domain(schema.domain).name
        if (name, node.op_type) in REPLACED_AT_LOAD or _folded_shape(node, name, type_of):
            continue
        bound = _bound_types(schema, node, type_of)
        candidates = kernels_for_since(node.op_type, schema.since_version, name, provider)
        direct = any(kernel.accepts(bound) for kernel in candidates) or \
            (provider == DEFAULT_PROVIDER and bool(candidates) and _casts_to_float(schema, bound, candidates))
        if direct and _refusal(schema, bound, _attribute_reader(schema, node), provider) is None:
            taken.add(index)
    return frozenset(taken)


def needs_no_kernel(node: Any, domain: str, type_of: Any) -> bool:
    """Whether onnxruntime turns ``node`` (of canonical ``domain``) into an initializer when it loads
    the graph (a Constant, a Shape of a fully known shape), so that no kernel runs it."""
    return (domain, node.op_type) in REPLACED_AT_LOAD or _folded_shape(node, domain, type_of)


def _attribute_reader(schema: Any, node: Any) -> Any:
    """``value(name)``: the node's value of attribute ``name`` (an int, float or string), the schema's
    default when the node sets none, None when neither says."""
    from opspec.runtime.schema import AttrType

    fields = {AttrType.INT: "i", AttrType.FLOAT: "f", AttrType.STRING: "s"}

    def value(name: str) -> Any:
        declared = schema.attributes.get(name)
        for attribute in node.attribute:
            if attribute.name == name:
                field = fields.get(declared.type) if declared is not None else None
                found = getattr(attribute, field) if field else None
                return found.decode("utf-8", "replace") if isinstance(found, bytes) else found
        return declared.default if declared is not None and isinstance(declared.default, (int, float, str)) else None

    return value


def _refusal(schema: Any, bound: dict[str, str], attribute_value: Any, provider: str) -> str | None:
    """Why the kernel serving the node refuses it (None: it does not, as far as the table says)."""
    from opspec.runtime.kernels import refusals

    for refusal in refusals(schema.name, schema.since_version, schema.domain, provider):
        if refusal.applies(bound, attribute_value):
            return refusal.why
    return None


def _foreign_type(node: Any, type_of: Any, provider: str) -> str | None:
    """A tensor type of the node's values that no kernel of ``provider`` takes (measured: onnxruntime
    refuses a model holding a complex64 value even in a node that needs no kernel)."""
    from opspec.runtime.contract.values import type_string
    from opspec.runtime.kernels import taken_types

    taken = taken_types(provider)
    for name in (*node.input, *node.output):
        found = type_of(name) if name else None
        if found is not None:
            text = type_string(found)
            if text.startswith("tensor(") and "?" not in text and text not in taken:
                return text
    return None


def _folded_shape(node: Any, domain: str, type_of: Any) -> bool:
    """Whether ``node`` is a Shape whose input's dims are all known numbers (onnxruntime folds it)."""
    if (domain, node.op_type) != ("ai.onnx", "Shape") or not node.input:
        return False
    found = type_of(node.input[0])
    dims = getattr(found, "shape", None)
    return dims is not None and all(type(dim) is int for dim in dims)


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


def missing_kernel(schema: Any, bound: dict[str, str], provider: str, opset: int | None = None) -> NoKernel | None:
    """Why no kernel of ``provider`` serves ``schema`` with the types ``bound`` (None: one does, or
    the runtime falls back to something that runs); ``opset`` is the model's opset of the
    schema's domain (None: the newest), which picks the function body an expansion uses."""
    return _missing(schema, bound, provider, opset, EXPANSION_DEPTH, None)


#: Whether an op version with kernels, none for the node's types, and a body built per node that the
#: kernel table does not describe is taken to run (measured on the node suite's ops re-typed: more of
#: them fail than run).
BUILT_BODY_RUNS_WITH_KERNELS = False
#: How deep function bodies are followed: a node of an expanded body is expanded in turn (measured:
#: Mish 18 in double runs, its body's Softplus 1 expanded; Mish 22 fails, its Softplus 22 is not).
EXPANSION_DEPTH = 3


def _missing(schema: Any, bound: dict[str, str], provider: str, opset: int | None, depth: int,
             attribute_value: Any, model_opsets: dict[str, int] | None = None) -> NoKernel | None:
    """As :func:`missing_kernel`; ``attribute_value(name)`` reads the node's attributes (None: unknown,
    as for a node inside a body); ``model_opsets`` the model's opset of each domain ("" the default),
    at which a built body's calls into another domain are resolved (None: such calls are not followed)."""
    from opspec.runtime.kernels import built_body_calls, kernels_for_since

    domain = schema.domain
    candidates = kernels_for_since(schema.name, schema.since_version, domain, provider)
    if any(kernel.accepts(bound) for kernel in candidates):
        return None
    if depth > 0 and _usable_body(schema, opset) is not None:  # expanded at load: its nodes need kernels
        return _body_missing(schema, bound, provider, opset, depth)
    calls = built_body_calls(schema.name, schema.since_version, domain, provider)
    if depth > 0 and calls is not None:  # expanded into the body built for the node: what it calls needs kernels
        return _built_body_missing(schema, bound, calls, provider, opset, depth, attribute_value, model_opsets)
    if schema.has_context_dependent_function and (BUILT_BODY_RUNS_WITH_KERNELS or not candidates):
        return None  # expanded into a body built per node, which is not followed
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


def _usable_body(schema: Any, opset: int | None) -> Any:
    """The function body onnxruntime expands ``schema`` into under the model's ``opset`` (None: none).
    As onnx picks it: the newest body written for an opset not after the model's, unusable when
    an op it calls has a newer version by the model's opset than by the body's (measured: HardSigmoid
    22, whose body of opset 18 calls CastLike, changed in 19, is not expanded)."""
    from opspec.runtime.defs import INFERENCE
    from opspec.runtime.registry import SchemaError

    if not schema.has_function:
        return None
    requested = opset if opset is not None else 10**6
    written = [body.opset for body in schema.functions if body.opset <= requested]
    if not written:
        return None
    function = schema.get_function_with_opset_version(requested)
    if function is None:
        return None
    for inner in function.node:
        if inner.domain not in ("", "ai.onnx"):
            continue
        try:
            if INFERENCE.get_schema(inner.op_type, requested, "").since_version > written[-1]:
                return None
        except SchemaError:
            return None
    return function


def _body_missing(schema: Any, bound: dict[str, str], provider: str, opset: int | None,
                  depth: int) -> NoKernel | None:
    """Why a node of the expanded body of ``schema`` would find no kernel, following the types
    ``bound`` from the body's inputs to the values of the same type parameter (other values stay
    unknown and are never held against a node); None when none is found."""
    from opspec.runtime.defs import INFERENCE
    from opspec.runtime.registry import SchemaError

    function = _usable_body(schema, opset)
    if function is None:
        return None
    known: dict[str, str] = {}
    for formal, name in zip(schema.inputs, function.input):
        if formal.type_str in bound:
            known[name] = bound[formal.type_str]
    imports = {entry.domain or "": entry.version for entry in function.opset_import}
    for inner in function.node:
        try:
            inner_domain = INFERENCE.canonical_domain(inner.domain)
            inner_schema = INFERENCE.get_schema(inner.op_type, imports.get(inner.domain, imports.get("")), inner_domain)
        except SchemaError:
            continue
        if (INFERENCE.domain(inner_schema.domain).name, inner.op_type) in REPLACED_AT_LOAD:
            constant = _constant_type(inner)
            if constant is not None and inner.output:
                known[inner.output[0]] = constant
            continue
        inner_bound: dict[str, str] = {}
        for position, name in enumerate(inner.input):
            if name in known and inner_schema.inputs:
                formal = inner_schema.inputs[min(position, len(inner_schema.inputs) - 1)]
                earlier = inner_bound.setdefault(formal.type_str, known[name])
                if earlier != known[name]:  # the expanded graph fails onnxruntime's type check
                    return NoKernel(formal.type_str, known[name], (earlier,),
                                    f"{inner.op_type} {inner_schema.since_version}")
        params = {constraint.type_param_str for constraint in inner_schema.type_constraints}
        inner_bound = {param: found for param, found in inner_bound.items() if param in params}
        if inner_bound:
            missing = _missing(inner_schema, inner_bound, provider, imports.get(inner.domain), depth - 1, None)
            if missing is not None:
                return missing if missing.inside else replace(missing, inside=f"{inner.op_type} {inner_schema.since_version}")
        for position, name in enumerate(inner.output):
            if inner_schema.outputs:
                formal = inner_schema.outputs[min(position, len(inner_schema.outputs) - 1)]
                if formal.type_str in inner_bound:
                    known[name] = inner_bound[formal.type_str]
    return None


def _built_body_missing(schema: Any, bound: dict[str, str], calls: Iterable[Any], provider: str, opset: int | None,
                        depth: int, attribute_value: Any, model_opsets: dict[str, int] | None) -> NoKernel | None:
    """Why an op the body built for the node calls would find no kernel (None: every call finds one,
    as far as the types known say): each call's type parameters take the node's types or the
    table's, two that differ clash (onnxruntime's type check of the expanded graph fails), and the
    called op is resolved at the model's opset."""
    from opspec.runtime.defs import INFERENCE
    from opspec.runtime.registry import SchemaError

    for call in calls:
        if call.when and (attribute_value is None or
                          any(attribute_value(name) not in values for name, values in call.when)):
            continue
        called_domain, called_opset = schema.domain, opset
        if call.domain and call.domain != schema.domain:
            called_domain = call.domain
            called_opset = (model_opsets or {}).get("" if called_domain == "ai.onnx" else called_domain)
            if called_opset is None:
                continue
        try:
            inner = INFERENCE.get_schema(call.op, called_opset, "" if called_domain == "ai.onnx" else called_domain)
        except SchemaError:
            continue
        where = f"{call.op} {inner.since_version}"
        call_bound: dict[str, str] = {}
        for param, sources in call.sources:
            found = [source if source.startswith("tensor(") else bound.get(source) for source in sources]
            known = [text for text in found if text is not None]
            if len(set(known)) > 1:
                return NoKernel(param, known[-1], (known[0],), where)
            if known:
                call_bound[param] = known[0]
        if not call_bound:
            continue
        missing = _missing(inner, call_bound, provider, called_opset, depth - 1, None, model_opsets)
        if missing is not None:
            return missing if missing.inside else replace(missing, inside=where)
    return None


def _constant_type(node: Any) -> str | None:
    """The type of a Constant node's value given as a tensor (None: another form)."""
    from opspec.runtime.contract.values import ELEMENT_NAMES

    for attribute in node.attribute:
        if attribute.name == "value" and attribute.HasField("t"):
            name = ELEMENT_NAMES.get(attribute.t.data_type)
            return f"tensor({name})" if name else None
    return None


def _casts_to_float(schema: Any, bound: dict[str, str], candidates: Iterable[Any]) -> bool:
    """Whether onnxruntime's CPU provider runs the node by casting its float16 values to float32."""
    if FLOAT16 not in bound.values():
        return False
    allowed = {constraint.type_param_str: constraint.allowed_type_strs for constraint in schema.type_constraints}
    if any(found == FLOAT16 and FLOAT not in allowed.get(param, ()) for param, found in bound.items()):
        return False
    widened = {param: FLOAT if found == FLOAT16 else found for param, found in bound.items()}
    return any(kernel.accepts(widened) for kernel in candidates)


__all__ = ["LOAD_BLOCKING", "blocks_loading", "DEFAULT_PROVIDER", "RUNTIME", "NoKernel", "RuntimeProblem", "Target", "UnboundNode",
           "Verdict", "missing_kernel", "parse_target", "predict"]
