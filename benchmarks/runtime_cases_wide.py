"""More cases for the runtime benchmark: onnxruntime's own ops at their types, float16 and bfloat16
conversions of models the tests build, and the models of onnxruntime's tools as they are.

Each maker returns ``(name, family, model, inputs)``; ``inputs`` maps a graph input to
``(array, element type)``, or is None when the case is only loaded. Building the tool models
needs the test helpers (``tests/``) and onnxruntime's Python tools.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable, Iterator

TESTS = Path(__file__).resolve().parent.parent / "tests"
Made = tuple[str, str, Any, "dict[str, tuple[Any, int]] | None"]

#: The value given to a required attribute, per attribute type, when a case is made for an op.
_ATTRIBUTE_VALUES: dict[str, Any] = {"INT": 1, "FLOAT": 1.0, "STRING": "", "INTS": [1], "FLOATS": [1.0],
                                     "STRINGS": ["a"]}


def _elem(type_text: str) -> int | None:
    from onnx import TensorProto

    if not type_text.startswith("tensor("):
        return None
    name = type_text[len("tensor("):-1]
    return getattr(TensorProto, {"bool": "BOOL", "float": "FLOAT"}.get(name, name.upper()), None)


def contrib_ops() -> Iterator[Made]:
    """Every com.microsoft op of onnxruntime's op set as one node, loaded only: first at the types of
    one of its CPU kernels (the first accepted type of each type parameter; the schema's first
    allowed types when it has no kernel), then each type parameter bound to each other type its
    schema allows. Required inputs are graph inputs of unknown shape, optional ones left out,
    required attributes get a plain value of their type (ops needing a graph are left out)."""
    from onnx import AttributeProto, helper

    import opspec.onnxruntime
    from opspec.runtime.kernels import kernels_for_since
    from opspec.runtime.schema import FormalParameterOption

    for schema in opspec.onnxruntime.get_all_schemas_with_history():
        if schema.domain != "com.microsoft" or schema.deprecated:
            continue
        required = [attribute for attribute in schema.attributes.values() if attribute.required]
        if any(attribute.type.name not in _ATTRIBUTE_VALUES for attribute in required):
            continue
        allowed = {c.type_param_str: [t for t in c.allowed_type_strs if _elem(t) is not None]
                   for c in schema.type_constraints}
        found = kernels_for_since(schema.name, schema.since_version, schema.domain)
        base = {param: choices[0] for param, choices in allowed.items() if choices}
        if found:
            for param, accepted in found[0].types:
                usable = sorted(t for t in accepted if _elem(t) is not None)
                if usable and param in base:
                    base[param] = usable[0]
        inputs = [formal for formal in schema.inputs if formal.option is not FormalParameterOption.Optional]
        bound_by_input = {formal.type_str for formal in inputs}
        variants: list[tuple[str, dict[str, str]]] = [("", base)]
        for param, choices in sorted(allowed.items()):
            if param in bound_by_input:
                variants += [(f"__{param}_{t[7:-1]}", {**base, param: t}) for t in choices if t != base.get(param)]
        for suffix, types in variants:
            graph_inputs, names = [], []
            for position, formal in enumerate(inputs):
                elem = _elem(types.get(formal.type_str, formal.type_str))  # a param, or a type written out
                if elem is None:
                    break
                names.append(f"in{position}")
                graph_inputs.append(helper.make_tensor_value_info(f"in{position}", elem, None))
            else:
                outputs = []
                for position, formal in enumerate(schema.outputs):
                    if formal.option is FormalParameterOption.Optional:
                        break
                    elem = _elem(types.get(formal.type_str, formal.type_str))
                    outputs.append(helper.make_tensor_value_info(f"out{position}", elem, None) if elem is not None
                                   else helper.make_empty_tensor_value_info(f"out{position}"))
                node = helper.make_node(schema.name, names, [o.name for o in outputs] or ["out0"], domain=schema.domain)
                for attribute in required:
                    kind = attribute.type.name
                    node.attribute.append(helper.make_attribute(attribute.name, _ATTRIBUTE_VALUES[kind],
                                                                attr_type=getattr(AttributeProto, kind)))
                graph = helper.make_graph([node], "contrib", graph_inputs,
                                          outputs or [helper.make_empty_tensor_value_info("out0")])
                model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                                                helper.make_opsetid("com.microsoft", 1)])
                model.ir_version = 10
                yield f"contrib_{schema.name}_{schema.since_version}{suffix}", "onnxruntime ops", model, None


def _tool_models() -> Iterator[tuple[str, Any, dict[str, Any]]]:
    """(name, model, feeds) of every model of ``tests/ort_models.py``, at its first setting."""
    import numpy

    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    import ort_models

    for label, (build, settings, feeds) in ort_models.catalogue().items():
        try:
            model = build()
        except Exception:  # noqa: BLE001 - a tool that cannot build here: no case
            continue
        yield label, model, feeds(settings[0], numpy.random.default_rng(0))


def _exporter_models() -> Iterator[tuple[str, Any]]:
    """(name, model) of each builder of ``tests/exporter_models.py`` at its defaults."""
    import inspect

    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    import exporter_models

    for name, build in inspect.getmembers(exporter_models, inspect.isfunction):
        if name.startswith("_") or build.__module__ != exporter_models.__name__:
            continue
        try:
            model = build()
        except Exception:  # noqa: BLE001
            continue
        if hasattr(model, "graph"):
            yield name, model


def _slug(label: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in label)[:80]


def _typed_feeds(model: Any, feeds: dict[str, Any]) -> dict[str, tuple[Any, int]] | None:
    """The feeds as the model's inputs type them (floats cast to float16 or bfloat16)."""
    import ml_dtypes
    import numpy
    from onnx import TensorProto, helper

    typed: dict[str, tuple[Any, int]] = {}
    for value in model.graph.input:
        if value.name not in feeds:
            continue
        elem = value.type.tensor_type.elem_type
        dtype = ml_dtypes.bfloat16 if elem == TensorProto.BFLOAT16 else helper.tensor_dtype_to_np_dtype(elem)
        typed[value.name] = (numpy.asarray(feeds[value.name]).astype(dtype), elem)
    return typed


def float16_model(model: Any) -> Any:
    """``model`` in float16, as onnxruntime's converter writes it (inputs and outputs included); the
    converter changes the model it is given, so it is given a copy."""
    from onnxruntime.transformers.float16 import convert_float_to_float16

    copy = type(model)()
    copy.CopyFrom(model)
    return convert_float_to_float16(copy, keep_io_types=False, disable_shape_infer=True)


def bfloat16_model(model: Any) -> Any:
    """``model`` with every float initializer, Constant, Cast target and graph input or output in
    bfloat16 (the declared types of inner values dropped)."""
    import ml_dtypes
    import numpy
    from onnx import TensorProto, numpy_helper

    copy = type(model)()
    copy.CopyFrom(model)

    def retyped(tensor: Any) -> None:
        if tensor.data_type == TensorProto.FLOAT:
            array = numpy_helper.to_array(tensor).astype(ml_dtypes.bfloat16)
            bits = numpy_helper.from_array(array.view(numpy.uint16), tensor.name)
            tensor.CopyFrom(bits)
            tensor.data_type = TensorProto.BFLOAT16

    graph = copy.graph
    for tensor in graph.initializer:
        retyped(tensor)
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.name == "value" and attribute.HasField("t"):
                retyped(attribute.t)
            if node.op_type == "Cast" and attribute.name == "to" and attribute.i == TensorProto.FLOAT:
                attribute.i = TensorProto.BFLOAT16
    for value in (*graph.input, *graph.output):
        if value.type.tensor_type.elem_type == TensorProto.FLOAT:
            value.type.tensor_type.elem_type = TensorProto.BFLOAT16
    del graph.value_info[:]
    return copy


def _uses_float(model: Any) -> bool:
    from onnx import TensorProto

    return any(v.type.tensor_type.elem_type == TensorProto.FLOAT for v in model.graph.input) or \
        any(t.data_type == TensorProto.FLOAT for t in model.graph.initializer)


def converted_and_tool_models() -> Iterator[Made]:
    """The tool models as they are (run), and float16 and bfloat16 conversions of them (run) and of the
    exporter models (loaded only)."""
    conversions: list[tuple[str, Callable[[Any], Any]]] = [("float16", float16_model), ("bfloat16", bfloat16_model)]
    for label, model, feeds in _tool_models():
        typed = _typed_feeds(model, feeds)
        yield f"ort_{_slug(label)}", "onnxruntime tool models", model, typed
        if not _uses_float(model):
            continue
        for kind, convert in conversions:
            try:
                converted = convert(model)
            except Exception:  # noqa: BLE001 - the converter refuses: no case
                continue
            yield f"{kind}_ort_{_slug(label)}", f"{kind} conversions", converted, _typed_feeds(converted, feeds)
    for name, model in _exporter_models():
        if not _uses_float(model):
            continue
        for kind, convert in conversions:
            try:
                converted = convert(model)
            except Exception:  # noqa: BLE001
                continue
            yield f"{kind}_exporter_{name}", f"{kind} conversions", converted, None


__all__ = ["bfloat16_model", "contrib_ops", "converted_and_tool_models", "float16_model"]
