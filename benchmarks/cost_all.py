"""`opspec cost` over every model of onnx's node suite and of the real-model set: it must answer on
each without an error. Prints the counts, the models that failed, and the time taken.

    python benchmarks/cost_all.py [--real-set DIR]      (default: $OPSPEC_REAL_SET)
"""
from __future__ import annotations

import argparse
import glob
import os
import time
import traceback

from typing import Any


from opspec.runtime.cost import cost


def _models(real_set: str | None, node_suite: bool) -> list[tuple[str, Any]]:
    from onnx.backend.test.case.node import collect_testcases

    found: list[tuple[str, Any]] = [("node suite", case.model) for case in collect_testcases(None)] if node_suite else []
    if real_set:
        found += [("real set", path) for path in sorted(glob.glob(os.path.join(real_set, "*.onnx")))]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--real-set", default=os.environ.get("OPSPEC_REAL_SET"))
    parser.add_argument("--no-node-suite", action="store_true", help="only the real-model set")
    args = parser.parse_args()
    counts: dict[str, list[int]] = {}
    failures = []
    wall, cpu = time.perf_counter(), time.process_time()
    for kind, path in _models(args.real_set, not args.no_node_suite):
        tally = counts.setdefault(kind, [0, 0, 0])
        tally[0] += 1
        try:
            report = cost(path)
        except Exception as error:  # noqa: BLE001 - every failure is reported
            failures.append((getattr(path, "graph", None) and path.graph.name or path, f"{type(error).__name__}: {error}", traceback.format_exc(limit=-3)))
            continue
        if report.unknown_nodes.get("macs"):
            tally[2] += 1
            if kind == "real set":
                unknown = sorted({n.op_type for n in report.nodes if n.cost.macs is None})
                print(f"  {os.path.basename(path)}: MACs unknown at {', '.join(unknown)}")
        tally[1] += 1
    for kind, (total, answered, with_unknown) in counts.items():
        print(f"{kind}: {answered}/{total} models answered; {with_unknown} with some node of unknown MACs")
    print(f"{len(failures)} failures; {time.perf_counter() - wall:.1f} s wall, {time.process_time() - cpu:.1f} s CPU")
    for path, message, trace in failures:
        print(f"  {path}: {message}\n{trace}")


if __name__ == "__main__":
    main()
