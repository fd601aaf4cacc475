"""Register an opspec op set in onnx's own schema registry, inference rules attached.

After :func:`register_with_onnx`, ``onnx.checker.check_model`` and
``onnx.shape_inference.infer_shapes`` know the domain's operators, and onnx's inference
runs opspec's rule for each of their nodes. :func:`deregister_from_onnx` undoes it.
onnx is imported only by this module, and only when one of its functions is called::

    opspec.register("my_ops")                      # the op set, into opspec
    onnx_bridge.register_with_onnx("com.example")  # and into onnx

onnx 1.17 is the oldest release it works with. onnx 1.17 and 1.18 cannot run a Python
inference function: there the schemas are registered without one, with an
:class:`OnnxFeatureWarning` that says so (the checker knows the ops; onnx's inference
leaves their outputs untyped).
"""
from __future__ import annotations

import importlib
import warnings
from typing import Any, Callable

from opspec.runtime.inference.single_node import infer_node_outputs
from opspec.runtime.onnx_features import OnnxFeatures, OnnxUnavailable, onnx_features
from opspec.runtime.op_set import OpSet, standard_op_set
from opspec.runtime.schema import OpSchema

__all__ = ["OnnxFeatureWarning", "OnnxUnavailable", "deregister_from_onnx", "register_with_onnx",
           "to_onnx_schema"]


class OnnxFeatureWarning(UserWarning):
    """The installed onnx lacks something the bridge would carry over; the rest still works."""


def register_with_onnx(domain: str, op_set: OpSet | None = None,
                       features: OnnxFeatures | None = None) -> list[tuple[str, int, str]]:
    """Register every version of every operator of ``domain`` of ``op_set`` (None: the standard
    operators and every registered package's, as ``opspec.defs`` has them) in onnx, each
    inferred with ``op_set``'s rule.

    Returns ``(op_type, since_version, domain)`` of each registered schema, the
    arguments ``onnx.defs.deregister_schema`` takes. ``features`` defaults to what the
    installed onnx offers; :class:`OnnxUnavailable` when onnx is missing or too old.
    """
    features = features or onnx_features()
    defs = importlib.import_module("onnx.defs")
    op_set = op_set or standard_op_set()
    registry = op_set.registry
    node_domain = registry.canonical_domain(domain)
    registered, without_rule = [], False
    for op in registry.op_names(node_domain):
        for schema in registry.schemas_of(op, node_domain):
            defs.register_schema(to_onnx_schema(schema, features, op_set))
            registered.append((schema.name, schema.since_version, schema.domain))
            without_rule |= schema.has_type_and_shape_inference_function and not features.python_inference
    if without_rule:
        warnings.warn(OnnxFeatureWarning(
            f"onnx {features.version} cannot attach a Python inference function to a schema (onnx 1.19 and "
            f"later can): onnx's checker knows the ops of {domain}, but onnx's shape inference leaves their "
            "outputs untyped; opspec.infer_shapes infers them"), stacklevel=2)
    return registered


def deregister_from_onnx(domain: str, op_set: OpSet | None = None) -> None:
    """Remove from onnx what :func:`register_with_onnx` put there for ``domain`` of ``op_set``."""
    defs = importlib.import_module("onnx.defs")
    registry = (op_set or standard_op_set()).registry
    node_domain = registry.canonical_domain(domain)
    for op in registry.op_names(node_domain):
        for schema in registry.schemas_of(op, node_domain):
            if defs.has(schema.name, schema.since_version, schema.domain):
                defs.deregister_schema(schema.name, schema.since_version, schema.domain)


def to_onnx_schema(schema: OpSchema, features: OnnxFeatures | None = None, op_set: OpSet | None = None) -> Any:
    """An ``onnx.defs.OpSchema`` with ``schema``'s signature and its inference rule (run as the
    engine runs it with ``op_set``; None: the installed op set).

    Function bodies and the support level do not carry over: onnx's Python constructor
    has no place for them. Neither do the determinism and the rule where the installed
    onnx (``features``) has no place for them either.
    """
    features = features or onnx_features()
    defs = importlib.import_module("onnx.defs")
    optional: dict[str, Any] = {}
    if features.node_determinism:
        optional["node_determinism"] = defs.OpSchema.NodeDeterminism.__members__[schema.node_determinism.name]
    built = defs.OpSchema(
        schema.name, schema.domain, schema.since_version, schema.doc,
        inputs=[_parameter(defs, p) for p in schema.inputs],
        outputs=[_parameter(defs, p) for p in schema.outputs],
        type_constraints=[(t.type_param_str, list(t.allowed_type_strs), t.description)
                          for t in schema.type_constraints],
        attributes=[_attribute(defs, a) for a in schema.attributes.values()],
        **optional,
    )
    if schema.has_type_and_shape_inference_function and features.python_inference:
        built.set_type_and_shape_inference_function(_inference_function(schema, op_set))
    return built


def _parameter(defs: Any, param: Any) -> Any:
    return defs.OpSchema.FormalParameter(
        param.name, param.type_str, param.description,
        param_option=defs.OpSchema.FormalParameterOption(int(param.option)),
        is_homogeneous=param.is_homogeneous, min_arity=param.min_arity,
        differentiation_category=defs.OpSchema.DifferentiationCategory(int(param.differentiation_category)),
    )


def _attribute(defs: Any, attribute: Any) -> Any:
    if attribute.default is not None:
        return defs.OpSchema.Attribute(attribute.name, attribute.default_value, attribute.description)
    kind = defs.OpSchema.AttrType(int(attribute.type))
    return defs.OpSchema.Attribute(attribute.name, kind, attribute.description, required=attribute.required)


def _inference_function(schema: OpSchema, op_set: OpSet | None) -> Callable[[Any], None]:
    """onnx's inference callback for ``schema``: runs opspec's rule on the node onnx sees.

    Every failure, expected or not, leaves as onnx's ``InferenceError`` with a message
    that names the operator, so onnx reports it like its own rules' errors.
    """
    onnx = importlib.import_module("onnx")
    failure = importlib.import_module("onnx.shape_inference").InferenceError
    where = f"{schema.domain or 'ai.onnx'}::{schema.name}-{schema.since_version}"

    def infer(ctx: Any) -> None:
        try:
            outputs = _run_rule(onnx, schema, ctx, op_set)
            for index, type_proto in outputs:
                ctx.set_output_type(index, type_proto)
        except Exception as error:  # noqa: BLE001 - one error kind crosses into onnx
            found = getattr(error, "errors", None)  # the engine's NodeError names our stand-in node
            message = found[0].message if found else f"{type(error).__name__}: {error}"
            raise failure(f"[opspec {where}] {_display_name(ctx)}: {message}") from None

    return infer


def _display_name(ctx: Any) -> str:
    try:
        return ctx.get_display_name() or "node"
    except Exception:  # noqa: BLE001 - only for the message
        return "node"


def _run_rule(onnx: Any, schema: OpSchema, ctx: Any, op_set: OpSet | None) -> list[tuple[int, Any]]:
    inputs = [f"in{i}" if ctx.has_input(i) else "" for i in range(ctx.get_num_inputs())]
    outputs = [f"out{i}" for i in range(ctx.get_num_outputs())]
    node = onnx.NodeProto(op_type=schema.name, domain=schema.domain, input=inputs, output=outputs)
    for name in schema.attributes:
        value = ctx.get_attribute(name)
        if value is not None:
            node.attribute.append(value)
    types, data = {}, {}
    for index, name in enumerate(inputs):
        if not name:
            continue
        type_proto = ctx.get_input_type(index)
        if type_proto is not None and type_proto.WhichOneof("value") is not None:
            types[name] = type_proto
        tensor = ctx.get_input_data(index)
        if tensor is not None:
            data[name] = tensor
    found = infer_node_outputs(schema, node, types, input_data=data, op_set=op_set)
    return [(index, found[name]) for index, name in enumerate(outputs) if name in found]
