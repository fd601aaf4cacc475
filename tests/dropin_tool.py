"""A small tool written against ``onnx.defs`` and ``onnx.shape_inference``.

``python dropin_tool.py onnx`` runs it on onnx; ``python dropin_tool.py opspec`` runs the
very same code with opspec substituted for both modules. test_dropin.py compares the two
printouts line by line.
"""
from __future__ import annotations

import importlib
import os
import sys
import tempfile

import onnx
from onnx import TensorProto, helper

if sys.argv[1:] == ["opspec"]:
    defs = shape_inference = importlib.import_module("opspec")
else:
    from onnx import defs, shape_inference

F = TensorProto.FLOAT
LOOKUPS = [("Conv", 11), ("Clip", 13), ("Clip", 6), ("Split", 18), ("Concat", 13), ("Cast", 21),
           ("ReduceSum", 13), ("Gemm", 13), ("BatchNormalization", 15), ("Softmax", 13), ("Range", 11),
           ("Relu", 14)]


def describe_parameters(kind, parameters):
    for p in parameters:
        print(f"  {kind} {p.name}: {p.type_str} {p.option.name} homogeneous={p.is_homogeneous} "
              f"min_arity={p.min_arity} {p.differentiation_category.name}")


def describe(schema):
    print(f"{schema.name} v{schema.since_version} domain={schema.domain!r} deprecated={schema.deprecated}")
    print(f"  arity in {schema.min_input}..{schema.max_input} out {schema.min_output}..{schema.max_output} "
          f"variadic={schema.is_infinite(schema.max_input)} rule={schema.has_type_and_shape_inference_function}")
    print(f"  function={schema.has_function} at {list(schema.all_function_opset_versions)} "
          f"support={schema.support_level.name} deterministic={not schema.non_deterministic}")
    describe_parameters("input", schema.inputs)
    describe_parameters("output", schema.outputs)
    for constraint in schema.type_constraints:
        print(f"  types {constraint.type_param_str}: {', '.join(sorted(constraint.allowed_type_strs))}")
    for name, attribute in sorted(schema.attributes.items()):
        default = helper.get_attribute_value(attribute.default_value)
        if isinstance(default, float):
            default = f"{default:.6g}"
        print(f"  attribute {name}: {attribute.type.name} required={attribute.required} default={default!r}")


def shapes(values):
    for info in values:
        tensor = info.type.tensor_type
        dims = [d.dim_param or d.dim_value for d in tensor.shape.dim]
        print(f"  {info.name}: {TensorProto.DataType.Name(tensor.elem_type)} {dims}")


def small_model():
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["conv"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv"], ["relu"]),
        helper.make_node("Add", ["relu", "bias"], ["sum"]),
        helper.make_node("Flatten", ["sum"], ["flat"], axis=1),
        helper.make_node("Gemm", ["flat", "fc"], ["y"], transB=1),
    ]
    graph = helper.make_graph(
        nodes, "tool",
        [helper.make_tensor_value_info("x", F, ["N", 3, 8, 8]), helper.make_tensor_value_info("w", F, [4, 3, 3, 3]),
         helper.make_tensor_value_info("bias", F, [4, 1, 1]), helper.make_tensor_value_info("fc", F, [10, 256])],
        [helper.make_tensor_value_info("y", F, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def main():
    for name, version in LOOKUPS:
        describe(defs.get_schema(name, version))
    print("function ops:", sorted(s.name for s in defs.get_function_ops() if s.name in ("Relu", "Range", "Clip")))
    print("newest Relu:", defs.get_schema("Relu", "").name, defs.has("Relu"), defs.has("Relu", 5),
          defs.has("NoSuchOp"), defs.has("Add", 13, ""))
    try:
        defs.get_schema("NoSuchOp", 13)
    except defs.SchemaError:
        print("unknown op: SchemaError")

    model = small_model()
    inferred = shape_inference.infer_shapes(model)
    print("infer_shapes:", type(inferred).__name__)
    shapes(inferred.graph.value_info)
    shapes(inferred.graph.output)
    node = model.graph.node[0]
    types = {i.name: i.type for i in model.graph.input}
    outputs = shape_inference.infer_node_outputs(defs.get_schema("Conv", 17), node, types)
    print("infer_node_outputs:", sorted(outputs), [type(t).__name__ for t in outputs.values()])
    with tempfile.TemporaryDirectory() as folder:
        source, target = os.path.join(folder, "m.onnx"), os.path.join(folder, "out.onnx")
        onnx.save(model, source)
        shape_inference.infer_shapes_path(source, target)
        print("infer_shapes_path:")
        shapes(onnx.load(target).graph.output)

    bad = small_model()
    bad.graph.input[1].type.tensor_type.shape.dim[1].dim_value = 5  # w expects 5 channels, x has 3
    bad.graph.node[0].attribute.pop(1)  # no pads: the Add below then sees 6x6 against its 8x8 output
    bad.graph.node.insert(3, helper.make_node("Add", ["sum", "x"], ["sum2"]))
    try:
        shape_inference.infer_shapes(bad, strict_mode=True)
        print("bad model: no error")
    except shape_inference.InferenceError:
        print("bad model: InferenceError")


if __name__ == "__main__":
    main()
