"""Rules for the optimizers of ai.onnx.preview.training (Adagrad, Adam, Momentum).

After the learning rate R and the step count T come n tensors of each input group
(X, G, ... : weights, gradients, accumulators); each output group repeats one input
group's types, tensor by tensor.
"""
from __future__ import annotations

from opspec.runtime.contract import InferenceContext, option, rule


@rule("optimizer", "Each updated tensor has the type of the tensor it updates.",
      input_groups=option("int", 3, doc="how many groups of n tensors follow R and T"),
      output_groups=option("string", "0,2", doc="which input groups the output groups repeat, in order"))
def optimizer(ctx: InferenceContext) -> None:
    groups = ctx.option("input_groups")
    repeats = [int(g) for g in ctx.option("output_groups").split(",")]
    tensors = ctx.input_count - 2
    if tensors < 0 or tensors % groups:
        ctx.fail(f"after R and T, {tensors} inputs do not make {groups} groups of equal size")
    n = tensors // groups
    if ctx.output_count != n * len(repeats):
        ctx.fail(f"{ctx.output_count} outputs, but {n} tensors per group give {n * len(repeats)}")
    for k, group in enumerate(repeats):
        for j in range(n):
            ctx.set_output(k * n + j, ctx.input_type(2 + group * n + j))
