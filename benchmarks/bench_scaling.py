"""Cost per node as models grow long (chains of 10k to 1M nodes), deep (100k-node subgraph
bodies) and wide (10k graph inputs), and cost per dim with many or high-rank shapes (20,000
inputs of 10 symbolic dims each, one input of rank 200,000): opspec and onnx, each in a
process of its own. ``python benchmarks/run.py --only scaling`` reruns it."""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Container

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_infer import run_worker  # noqa: E402

#: Interleaved rounds (a fresh process per engine each round) and warm calls per round.
ROUNDS, CALLS = 2, 2


def many_symbolic_inputs(count: int, rank: int) -> Any:
    """``count`` graph inputs of ``rank`` symbolic dims each (all names distinct), one ``Relu`` each."""
    from onnx import TensorProto, helper

    inputs = [helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, [f"s{i}_{j}" for j in range(rank)])
              for i in range(count)]
    nodes = [helper.make_node("Relu", [f"x{i}"], [f"y{i}"]) for i in range(count)]
    outputs = [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None) for i in range(count)]
    return helper.make_model(helper.make_graph(nodes, "many_symbolic", inputs, outputs),
                             opset_imports=[helper.make_opsetid("", 17)])


def high_rank_input(rank: int) -> Any:
    """One input of rank ``rank`` through a ``Relu``; its dims cycle through 1, a distinct name,
    unknown, a distinct number and a shared name (as the test suite's high-rank case)."""
    from onnx import TensorProto, helper

    kinds: tuple[Callable[[int], Any], ...] = (lambda i: 1, lambda i: f"d{i}", lambda i: None, lambda i: i,
                                               lambda i: "N")
    dims = [kinds[i % len(kinds)](i) for i in range(rank)]
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "high_rank",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def bench_scaling(only: Container[str] | None = None) -> list[str]:
    """The table's rows (of the models labelled in ``only``, when given)."""
    import workloads

    #: label -> (model builder, what the cost is counted per, how many of those the model holds or None for nodes)
    cases: dict[str, tuple[Callable[[], Any], str, int | None]] = {
        "chain, 10k nodes": (lambda: workloads.models.elementwise_chain(10_000), "node", None),
        "chain, 100k nodes": (lambda: workloads.models.elementwise_chain(100_000), "node", None),
        "chain, 1M nodes": (lambda: workloads.models.elementwise_chain(1_000_000), "node", None),
        "deep: an If whose two branches are 100k-node chains": (lambda: workloads.deep(100_000), "node", None),
        "wide: 10k graph inputs, one Relu each": (lambda: workloads.wide(10_000), "node", None),
        "20,000 inputs x 10 symbolic dims, one Relu each": (lambda: many_symbolic_inputs(20_000, 10), "dim",
                                                            200_000),
        "one input of rank 200,000, a Relu": (lambda: high_rank_input(200_000), "dim", 200_000),
    }
    rows = ["| model | size | onnx us/unit | opspec us/unit | speed vs onnx (wall) | speed vs onnx (CPU) "
            "| opspec peak MB | onnx peak MB |",
            "|---|---:|---:|---:|---:|---:|---:|---:|"]
    with tempfile.TemporaryDirectory() as folder:
        for index, (label, (build, unit, size)) in enumerate(cases.items()):
            if only is not None and label not in only:
                continue
            path, nodes = workloads.write(Path(folder), f"model{index}", build)
            count = size or nodes
            best: dict[str, dict[str, Any]] = {}
            for _ in range(ROUNDS):
                for engine in ("opspec", "onnx"):
                    result = run_worker(engine, path, CALLS)
                    if result is None:
                        continue
                    if engine not in best:
                        best[engine] = result
                    else:  # the best wall and the best CPU time of every round
                        best[engine]["warm"] = min(best[engine]["warm"], result["warm"])
                        best[engine]["warm_cpu"] = min(best[engine]["warm_cpu"], result["warm_cpu"])
                        best[engine]["peak_mb"] = max(best[engine]["peak_mb"], result["peak_mb"])
            ours, theirs = best["opspec"], best["onnx"]
            rows.append(f"| {label} | {count:,} {unit}s | {theirs['warm'] / count * 1e6:.2f} "
                        f"| {ours['warm'] / count * 1e6:.2f} | {theirs['warm'] / ours['warm']:.2f}x "
                        f"| {theirs['warm_cpu'] / ours['warm_cpu']:.2f}x | {ours['peak_mb']:,.0f} "
                        f"| {theirs['peak_mb']:,.0f} |")
    rows += ["", f"Best warm `infer_shapes(model, data_prop=True)` of {ROUNDS} interleaved rounds of {CALLS} calls, "
             "each round a fresh process per engine; the whole API call over every node of every graph "
             "(subgraphs included), the model already loaded. Microseconds per node, or per dim of the graph "
             "inputs for the two shape-heavy models; speed vs onnx is onnx's time over opspec's (above 1x: "
             "opspec is faster), from wall-clock and from CPU time (`time.process_time`) apart, as the machine "
             "may be shared. Peak MB: the process's peak resident memory (model loaded, inferred "
             f"{CALLS + 1} times)."]
    return rows


BENCHMARK = ("scaling", "Inference cost per node: long, deep and wide models", bench_scaling)
