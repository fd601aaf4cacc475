"""Cost per node as models grow long (chains of 10k to 1M nodes), deep (100k-node subgraph
bodies) and wide (10k graph inputs): opspec and onnx, each in a process of its own."""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_infer import run_worker  # noqa: E402

#: Interleaved rounds (a fresh process per engine each round) and warm calls per round.
ROUNDS, CALLS = 2, 2


def bench_scaling() -> list[str]:
    import workloads

    cases = {
        "chain, 10k nodes": lambda: workloads.models.elementwise_chain(10_000),
        "chain, 100k nodes": lambda: workloads.models.elementwise_chain(100_000),
        "chain, 1M nodes": lambda: workloads.models.elementwise_chain(1_000_000),
        "deep: an If whose two branches are 100k-node chains": lambda: workloads.deep(100_000),
        "wide: 10k graph inputs, one Relu each": lambda: workloads.wide(10_000),
    }
    rows = ["| model | nodes | onnx us/node | opspec us/node | opspec / onnx | opspec peak MB | onnx peak MB |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    with tempfile.TemporaryDirectory() as folder:
        for index, (label, build) in enumerate(cases.items()):
            path, nodes = workloads.write(Path(folder), f"model{index}", build)
            best: dict[str, dict] = {}
            for _ in range(ROUNDS):
                for engine in ("opspec", "onnx"):
                    result = run_worker(engine, path, CALLS)
                    if result is not None and (engine not in best or result["warm"] < best[engine]["warm"]):
                        best[engine] = result
            ours, theirs = best["opspec"], best["onnx"]
            rows.append(f"| {label} | {nodes:,} | {theirs['warm'] / nodes * 1e6:.2f} | {ours['warm'] / nodes * 1e6:.2f} "
                        f"| {theirs['warm'] / ours['warm']:.2f}x | {ours['peak_mb']:,.0f} | {theirs['peak_mb']:,.0f} |")
    rows += ["", f"Best warm `infer_shapes(model, data_prop=True)` of {ROUNDS} interleaved rounds of {CALLS} calls, "
             "each round a fresh process per engine; the whole API call over every node of every graph "
             "(subgraphs included). Peak MB: the process's peak resident memory (model loaded, inferred "
             f"{CALLS + 1} times)."]
    return rows


BENCHMARK = ("scaling", "Inference cost per node: long, deep and wide models", bench_scaling)
