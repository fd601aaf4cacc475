"""opspec cost against torch's FlopCounterMode: one formula per exported model, exact at every size.

torch counts 2 FLOPs per multiply-accumulate of its matrix products and convolutions (mm, bmm,
addmm, convolution) and nothing else, so the number to compare is 2 x opspec's MACs. Each model is
exported once with symbolic sizes; opspec derives the formula once and evaluates it at each size
(``--set``); torch runs the model at each size.

    /work/benchenv/bin/python benchmarks/cost_vs_torch.py [--opspec .venv/bin/opspec]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
from typing import Any, Callable

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

OUT = os.path.join(".build", "cost_vs_torch")


class Block(nn.Module):
    """A pre-norm transformer block: attention over S tokens, then a GELU MLP."""

    def __init__(self, width: int = 64, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.out = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.up, self.down = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        split = lambda t: t.reshape(b, s, self.heads, d // self.heads).transpose(1, 2)  # noqa: E731
        q, k, v = split(q), split(k), split(v)
        weights = torch.softmax(q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5, dim=-1)
        x = x + self.out((weights @ v).transpose(1, 2).reshape(b, s, d))
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm2(x))))


class Transformer(nn.Module):
    def __init__(self, layers: int = 2) -> None:
        super().__init__()
        self.blocks = nn.Sequential(*[Block() for _ in range(layers)])
        self.head = nn.Linear(64, 100)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.blocks(x))


class ConvNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                  nn.Conv2d(16, 32, 3, stride=2, padding=1, groups=2), nn.ReLU(),
                                  nn.ConvTranspose2d(32, 8, 2, stride=2), nn.Conv2d(8, 4, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


CASES: list[tuple[str, nn.Module, Callable[[int], torch.Tensor], dict[int, str], str, tuple[int, ...]]] = [
    ("transformer-2L", Transformer(), lambda n: torch.randn(1, n, 64), {0: "B", 1: "S"}, "S", (8, 32, 100, 257)),
    ("convnet", ConvNet(), lambda n: torch.randn(1, 3, n, n), {0: "B", 2: "H", 3: "W"}, "H", (16, 32, 50, 96)),
]


def _opspec_cost(opspec: str, path: str, bindings: dict[str, int] | None = None) -> dict[str, Any]:
    command = [opspec, "cost", path, "--format", "json"]
    if bindings:
        command += ["--set", ",".join(f"{k}={v}" for k, v in bindings.items())]
    return json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opspec", default=os.path.join(".venv", "bin", "opspec"))
    args = parser.parse_args()
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    print("| model | formula (2 x MACs) | size | torch FLOPs | opspec 2 x MACs | equal |")
    print("|---|---|---:|---:|---:|---|")
    for name, module, example, axes, size_symbol, sizes in CASES:
        module.eval()
        path = os.path.join(OUT, f"{name}.onnx")
        torch.onnx.export(module, (example(sizes[0]),), path, input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": axes}, dynamo=False, opset_version=17)
        formula = _opspec_cost(args.opspec, path)["total"]["macs"]
        for size in sizes:
            with torch.no_grad(), FlopCounterMode(display=False) as counter:
                module(example(size))
            bindings = {"B": 1, size_symbol: size, **({"W": size} if size_symbol == "H" else {})}
            macs = _opspec_cost(args.opspec, path, bindings)["total"]["macs"]
            ours = 2 * macs
            print(f"| {name} | `2*({formula})` | {size} | {counter.get_total_flops():,} | {ours:,} | "
                  f"{'yes' if ours == counter.get_total_flops() else 'NO'} |")


if __name__ == "__main__":
    main()
