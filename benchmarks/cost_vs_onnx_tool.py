"""opspec cost against onnx-tool's profile on concrete shapes, per op type, where both count the same.

onnx-tool (pip install onnx-tool into the bench environment) needs every input's shape fixed; opspec
derives formulas once and evaluates them with ``--set``. onnx-tool's "MACs" of a node are what opspec
splits in two: a Conv's or Gemm's bias additions are one more "MAC" per output for onnx-tool and
other arithmetic for opspec, and an elementwise op's operations are "MACs" there. So the column
compared is opspec's MACs plus its other arithmetic (``flops - macs``), per op type.

    /work/benchenv/bin/python benchmarks/cost_vs_onnx_tool.py [--opspec .venv/bin/opspec]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
from collections import defaultdict

import numpy as np

#: Models with their inputs fixed: (file, {input: shape}, {symbol: value}).
CASES: list[tuple[str, dict[str, tuple[int, ...]], dict[str, int]]] = [
    (".build/cost_vs_torch/convnet.onnx", {"x": (1, 3, 32, 32)}, {"B": 1, "H": 32, "W": 32}),
    (".build/cost_vs_torch/transformer-2L.onnx", {"x": (1, 128, 64)}, {"B": 1, "S": 128}),
    ("/work/realset/convnext-tiny-torchscript.onnx", {"pixel_values": (1, 3, 64, 64)}, {"batch": 1}),
    ("/work/realset/vit-tiny-torchscript.onnx", {"pixel_values": (1, 3, 64, 64)}, {"batch": 1}),
]
#: Op types both tools count as matrix products: the comparison that has to agree.
PRODUCTS = {"MatMul", "Gemm", "Conv", "ConvTranspose"}


def _onnx_tool(path: str, shapes: dict[str, tuple[int, ...]]) -> tuple[dict[str, float], int]:
    import onnx_tool

    model = onnx_tool.Model(path)
    graph = model.graph
    graph.shape_infer({name: np.zeros(shape, np.float32) for name, shape in shapes.items()})
    graph.profile()
    by_type: dict[str, float] = defaultdict(float)
    for node in graph.nodemap.values():
        by_type[node.op_type] += float(node.macs[0])
    return by_type, int(graph.params)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opspec", default=os.path.join(".venv", "bin", "opspec"))
    args = parser.parse_args()
    print("| model | op type | onnx-tool MACs | opspec MACs + other | difference |")
    print("|---|---|---:|---:|---:|")
    for path, shapes, bindings in CASES:
        if not os.path.exists(path):
            print(f"| {os.path.basename(path)} | (missing: run cost_vs_torch.py first) | | | |")
            continue
        theirs, their_params = _onnx_tool(path, shapes)
        command = [args.opspec, "cost", path, "--format", "json", "--set", ",".join(f"{k}={v}" for k, v in bindings.items())]
        report = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
        name = os.path.basename(path).removesuffix(".onnx")
        for row in report["by_op_type"]:
            op_type = row["op_type"]
            if op_type not in theirs or not theirs[op_type] or row["macs"] is None or row["other_flops"] is None:
                continue
            ours = row["macs"] + row["other_flops"]
            difference = (ours - theirs[op_type]) / theirs[op_type]
            if op_type in PRODUCTS or abs(difference) > 0.01:
                print(f"| {name} | {op_type} | {theirs[op_type]:,.0f} | {ours:,} | {difference:+.2%} |")
        ours_params = report["total"]["parameters"]
        print(f"| {name} | (parameters) | {their_params:,} | {ours_params:,} | "
              f"{(ours_params - their_params) / max(their_params, 1):+.2%} |")


if __name__ == "__main__":
    main()
