"""What each op's rule costs on real models: per op and rule, how many nodes ran it in a warm call
and how long one run takes, its attribute-constraint check apart, beside the whole call's time.

``.venv/bin/python benchmarks/profile_rules.py MODEL [MODEL ...]`` where a model is a file or the
name of one in the real-model set (``OPSPEC_REAL_SET``, its ``stripped/`` copies). Each rule run of
one warm ``infer_shapes(model, data_prop=True)`` is repeated ``REPEATS`` times on its own context,
in ``ROUNDS`` rounds, and the quickest round counts: the rule's own cost with warm caches, without
the walk around it (reading nodes, reusing results, writing types back), which the whole call's
best time beside it includes.
"""
from __future__ import annotations

import collections
import os
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SET_DIR = Path(os.environ.get("OPSPEC_REAL_SET", HERE.parent / ".build" / "real_set"))
REPEATS, ROUNDS, CALLS = 10, 5, 5


def _path(model: str) -> Path:
    given = Path(model)
    return given if given.is_file() else SET_DIR / "stripped" / f"{model}.onnx"


def _timed_runs(rule: Any, ctx: Any) -> float:
    """The quickest of ``ROUNDS`` rounds of ``REPEATS`` runs of ``rule`` on ``ctx``, per run (seconds);
    the context's outputs are restored after each run."""
    outputs, datas = ctx.results()
    kept_outputs, kept_datas = list(outputs), list(datas)
    best = float("inf")
    for _ in range(ROUNDS):
        started = time.perf_counter()
        for _ in range(REPEATS):
            try:
                rule(ctx)
            except Exception:  # noqa: BLE001 - a node the rule refuses costs what it costs
                pass
            outputs[:], datas[:] = kept_outputs, kept_datas
        best = min(best, time.perf_counter() - started)
    return best / REPEATS


def profile(path: Path) -> list[str]:
    """The table of one model (as text lines)."""
    import onnx

    import opspec
    from opspec.runtime import constraints
    from opspec.runtime.inference.rule_runner import RuleRunner

    model = onnx.load(str(path), load_external_data=False)
    opspec.infer_shapes(model, data_prop=True)
    call = min(_cpu(lambda: opspec.infer_shapes(model, data_prop=True)) for _ in range(CALLS))
    costs: dict[tuple[str, str], list[float]] = collections.defaultdict(lambda: [0, 0.0, 0.0])
    original = RuleRunner._apply

    def measured(self: Any, rule: Any, ctx: Any, index: int, node: Any, *rest: Any) -> Any:
        bare = getattr(rule, "__wrapped__", rule)  # the rule without its constraint check
        attributes = ctx.node_attributes if ctx.schema.attributes else None
        entry = costs[(node.op_type, bare.__name__)]
        entry[0] += 1
        entry[1] += _timed_runs(bare, ctx)
        if attributes:
            entry[2] += _timed_runs(lambda c: constraints.attribute_violations(c.schema, attributes, c.input_types),
                                    ctx)
        return original(self, rule, ctx, index, node, *rest)

    setattr(RuleRunner, "_apply", measured)
    try:
        opspec.infer_shapes(model, data_prop=True)
    finally:
        setattr(RuleRunner, "_apply", original)
    nodes = collections.Counter(node.op_type for node in model.graph.node)
    rules = sum(runs for _, runs, _ in costs.values())
    checks = sum(check for _, _, check in costs.values())
    lines = [f"{path.stem}: {len(model.graph.node)} nodes (main graph), best warm call {call * 1e3:.2f} ms CPU; "
             f"rules {rules * 1e3:.2f} ms and their constraint checks {checks * 1e3:.2f} ms of it "
             f"({(rules + checks) / call:.0%})",
             f"{'op':24} {'rule':20} {'nodes':>6} {'runs':>5} {'rule ms':>8} {'check ms':>8} {'us/run':>7} {'check us':>8}"]
    for (op, rule), (count, runs, check) in sorted(costs.items(), key=lambda item: -(item[1][1] + item[1][2])):
        lines.append(f"{op:24} {rule:20} {nodes[op]:6} {count:5} {runs * 1e3:8.3f} {check * 1e3:8.3f} "
                     f"{runs / count * 1e6:7.1f} {check / count * 1e6:8.1f}")
    return lines


def _cpu(call: Any) -> float:
    started = time.process_time()
    call()
    return time.process_time() - started


def main() -> None:
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    for model in sys.argv[1:]:
        print("\n".join(profile(_path(model))), end="\n\n")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"Load average at the end: {load:.1f} on {os.cpu_count()} cores.")


if __name__ == "__main__":
    main()
