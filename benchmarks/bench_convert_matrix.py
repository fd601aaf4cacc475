"""The conversion matrix: every model of a set to every opset from 7 to 25, by opspec and by onnx.

Models: the real-model set (``real_set.py``, found at ``OPSPEC_REAL_SET``), onnx's light models and
onnx's node suite. Each (model, target opset) pair is converted by ``opspec.convert_version`` and
by onnx's ``version_converter`` and judged by ``tests/convert_cases.judge``: **correct** when the
result is at the target, passes the full checker, runs in onnxruntime with the original's outputs
on the same seeded inputs and opspec's inference of it agrees with the run; **wrong** when a
converter returns a model failing any of these; **refused** otherwise (a pair that runs past
``--timeout`` seconds counts as refused, and is listed). Models the full checker rejects or
onnxruntime does not run as they are prove nothing and are left out.

Pairs are judged in ``--workers`` processes (``convert_matrix_worker.py``); every answer is kept
in ``.build/convert_matrix/`` under a digest of what decides it (opspec's runtime and op files
and the judge for opspec; onnx's version and the judge for onnx), so a re-run judges only what
changed. Big models (above ``--big-nodes`` nodes) go to the targets in ``--big-targets`` only.

    .venv/bin/python benchmarks/bench_convert_matrix.py [--only SUBSTRING ...] [--kinds real,light,node]
                                                        [--write] [--targets 7-25]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import queue
import random
import selectors
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
WORKER = HERE / "convert_matrix_worker.py"
CACHE = REPO / ".build" / "convert_matrix"
SET_DIR = Path(os.environ.get("OPSPEC_REAL_SET", REPO / ".build" / "real_set"))
RESULTS = HERE / "results.md"
HEADING = "## Conversion matrix: every model to every opset, opspec beside onnx's version converter"
CONVERTERS = ("opspec", "onnx")
CORRECT, REFUSED, WRONG = "ok", "refused", "wrong"
#: Verdicts that keep a pair out of the matrix (the original proves nothing).
INVALID = "invalid"


@dataclass(frozen=True)
class Model:
    """A model of the matrix: its key (as the worker reads it), opset and node count."""

    key: str
    opset: int
    nodes: int


@dataclass(frozen=True)
class Pair:
    model: Model
    converter: str
    target: int

    @property
    def direction(self) -> str:
        return "up" if self.target > self.model.opset else "down"


def _digest(paths: Iterable[Path], extra: str) -> str:
    hasher = hashlib.sha256(extra.encode())
    for path in sorted(paths):
        hasher.update(str(path.relative_to(REPO)).encode())
        hasher.update(path.read_bytes())
    return hasher.hexdigest()[:16]


def fingerprints() -> dict[str, str]:
    """Per converter, a digest of everything its answers depend on."""
    import onnx
    import onnxruntime

    judge = [REPO / "tests" / "convert_cases.py", WORKER]
    versions = f"onnx {onnx.__version__} onnxruntime {onnxruntime.__version__}"
    ours = [*judge, *(REPO / "runtime").rglob("*.py"), *(REPO / "opdefs").rglob("*.yaml")]
    return {"opspec": _digest(ours, versions), "onnx": _digest(judge, versions)}


def _standard_opset(model: Any) -> int:
    return next((e.version for e in model.opset_import if e.domain in ("", "ai.onnx")), 1)


def _count(graph: Any) -> int:
    return sum(1 + sum(_count(a.g) for a in node.attribute if a.HasField("g")) for node in graph.node)


def real_models() -> list[Model]:
    import onnx

    if not (SET_DIR / "manifest.json").is_file():  # made once, as the real-model benchmark makes it
        subprocess.run([sys.executable, str(HERE / "real_set.py"), str(SET_DIR)], check=True)
    manifest = json.loads((SET_DIR / "manifest.json").read_text(encoding="utf-8"))["models"]
    found = []
    for entry in manifest:
        if entry["error"] is None and entry["file"]:
            model = onnx.load(str(SET_DIR / entry["file"]), load_external_data=False)
            found.append(Model(f"real:{Path(entry['file']).stem}", _standard_opset(model), entry["nodes"]))
    return found


def light_models() -> list[Model]:
    import onnx

    folder = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
    found = []
    for path in sorted(folder.glob("light_*.onnx")):
        model = onnx.load(str(path))
        found.append(Model(f"light:{path.stem[len('light_'):]}", _standard_opset(model), len(model.graph.node)))
    return found


def node_models() -> list[Model]:
    sys.path.insert(0, str(REPO / "tests"))
    from convert_cases import node_suite_cases

    return [Model(f"node:{case.name}", _standard_opset(case.model), _count(case.model.graph))
            for case in node_suite_cases()]


class Worker:
    """A worker process answering one task at a time, restarted after a timeout or a crash."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        if self.process is None or self.process.poll() is not None:
            self.process = subprocess.Popen([sys.executable, str(WORKER)], stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                            cwd=REPO, env={**os.environ, "OMP_NUM_THREADS": "1"})
        return self.process

    def ask(self, pair: Pair, timeout: float) -> dict[str, Any]:
        process = self._start()
        assert process.stdin is not None and process.stdout is not None
        task = {"model": pair.model.key, "converter": pair.converter, "target": pair.target}
        try:
            process.stdin.write(json.dumps(task) + "\n")
            process.stdin.flush()
        except BrokenPipeError:
            self.stop()
            return {"verdict": REFUSED, "detail": "the worker ended", "seconds": 0}
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            if not selector.select(timeout):
                self.stop()
                return {"verdict": REFUSED, "detail": f"timeout after {timeout:.0f} s", "seconds": timeout,
                        "timeout": True}
        line = process.stdout.readline()
        if not line:
            self.stop()
            return {"verdict": REFUSED, "detail": "the worker crashed", "seconds": 0}
        return json.loads(line)

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


class Store:
    """Answers kept between runs, one JSON line each, keyed by converter fingerprint and pair."""

    def __init__(self, prints: dict[str, str]) -> None:
        CACHE.mkdir(parents=True, exist_ok=True)
        self.prints = prints
        self.lock = threading.Lock()
        self.answers: dict[tuple[str, str, str, int], dict[str, Any]] = {}
        for converter, digest in prints.items():
            path = CACHE / f"{converter}-{digest}.jsonl"
            if path.is_file():
                for line in path.read_text(encoding="utf-8").splitlines():
                    entry = json.loads(line)
                    self.answers[(converter, digest, entry["model"], entry["target"])] = entry

    def get(self, pair: Pair) -> dict[str, Any] | None:
        return self.answers.get((pair.converter, self.prints[pair.converter], pair.model.key, pair.target))

    def put(self, pair: Pair, answer: dict[str, Any]) -> None:
        entry = {"model": pair.model.key, "target": pair.target, **answer}
        digest = self.prints[pair.converter]
        with self.lock:
            self.answers[(pair.converter, digest, pair.model.key, pair.target)] = entry
            with open(CACHE / f"{pair.converter}-{digest}.jsonl", "a", encoding="utf-8") as file:
                file.write(json.dumps(entry) + "\n")


def judge_all(pairs: list[Pair], store: Store, workers: int, timeout: float, verbose: bool) -> None:
    """Every pair the store does not hold yet, judged; a model's pairs go to one worker in a row."""
    pending: dict[str, list[Pair]] = {}
    for pair in pairs:
        if store.get(pair) is None:
            pending.setdefault(pair.model.key, []).append(pair)
    work: queue.Queue[list[Pair]] = queue.Queue()
    for group in sorted(pending.values(), key=lambda g: g[0].model.nodes):  # the small first: failures show early
        work.put(group)
    total, done = sum(len(g) for g in pending.values()), [0]
    started = time.perf_counter()

    def serve() -> None:
        worker = Worker()
        try:
            while True:
                try:
                    group = work.get_nowait()
                except queue.Empty:
                    return
                invalid = False
                for pair in group:
                    answer: dict[str, Any] = ({"verdict": INVALID, "detail": "original invalid", "seconds": 0}
                                              if invalid else worker.ask(pair, timeout))
                    invalid = answer["verdict"] == INVALID
                    store.put(pair, answer)
                    done[0] += 1
                    if verbose and answer["verdict"] != CORRECT:
                        print(f"[{done[0]}/{total} {time.perf_counter() - started:.0f}s] {pair.converter} "
                              f"{pair.model.key} {pair.model.opset}->{pair.target}: {answer['verdict']} "
                              f"{answer['detail'][:160]}", flush=True)
        finally:
            worker.stop()

    threads = [threading.Thread(target=serve) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


# ----------------------------------------------------------------------------- the report

def _family(key: str) -> str:
    return {"real": "real-model set", "light": "onnx's light models", "node": "onnx's node suite"}[key.split(":")[0]]


def report(pairs: list[Pair], store: Store, notes: list[str]) -> list[str]:
    counts: dict[tuple[str, str, str], Counter[str]] = {}
    per_target: dict[tuple[str, str, int], Counter[str]] = {}
    verdicts: dict[tuple[str, int], dict[str, dict[str, Any]]] = {}
    left_out: dict[str, str] = {}
    opsets = {pair.model.key: pair.model.opset for pair in pairs}
    for pair in pairs:
        answer = store.get(pair)
        if answer is not None and answer["verdict"] == INVALID and answer["detail"] != "original invalid":
            left_out[pair.model.key] = answer["detail"]
        if answer is None or answer["verdict"] == INVALID:
            continue
        verdicts.setdefault((pair.model.key, pair.target), {})[pair.converter] = {**answer, "pair": pair}
    for (key, target), by in verdicts.items():
        if set(by) != set(CONVERTERS):
            continue
        for converter, answer in by.items():
            pair = answer["pair"]
            counts.setdefault((_family(key), pair.direction, converter), Counter())[answer["verdict"]] += 1
            per_target.setdefault((pair.direction, converter, target), Counter())[answer["verdict"]] += 1
    rows = [HEADING, "", *notes, "",
            "| models | direction | pairs | opspec correct | opspec refused | opspec wrong | onnx correct | "
            "onnx refused | onnx wrong |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    totals: dict[tuple[str, str], Counter[str]] = {}
    for family in ("real-model set", "onnx's light models", "onnx's node suite"):
        for direction in ("up", "down"):
            ours, theirs = counts.get((family, direction, "opspec")), counts.get((family, direction, "onnx"))
            if ours is None or theirs is None:
                continue
            rows.append(f"| {family} | {direction} | {sum(ours.values())} | {ours[CORRECT]} | {ours[REFUSED]} | "
                        f"{ours[WRONG]} | {theirs[CORRECT]} | {theirs[REFUSED]} | {theirs[WRONG]} |")
            for converter, found in (("opspec", ours), ("onnx", theirs)):
                totals.setdefault((direction, converter), Counter()).update(found)
    for direction in ("up", "down"):
        ours, theirs = totals.get((direction, "opspec")), totals.get((direction, "onnx"))
        if ours and theirs:
            rows.append(f"| **all** | **{direction}** | {sum(ours.values())} | **{ours[CORRECT]}** | {ours[REFUSED]} | "
                        f"**{ours[WRONG]}** | **{theirs[CORRECT]}** | {theirs[REFUSED]} | **{theirs[WRONG]}** |")
    down_ours, down_theirs = totals.get(("down", "opspec")), totals.get(("down", "onnx"))
    if down_ours and down_theirs and down_theirs[CORRECT]:
        rows += ["", f"Correct downgrades: opspec {down_ours[CORRECT]}, onnx {down_theirs[CORRECT]} "
                     f"({down_ours[CORRECT] / down_theirs[CORRECT]:.1f}x)."]
    rows += ["", "By target opset (all models):", "",
             "| target | up: pairs | up: opspec correct | up: onnx correct | down: pairs | down: opspec correct | "
             "down: onnx correct |", "|---:|---:|---:|---:|---:|---:|---:|"]
    for target in sorted({t for _, _, t in per_target}):
        cells = []
        for direction in ("up", "down"):
            ours, theirs = per_target.get((direction, "opspec", target)), per_target.get((direction, "onnx", target))
            cells += ([str(sum(ours.values())), str(ours[CORRECT]), str(theirs[CORRECT])] if ours and theirs
                      else ["", "", ""])
        rows.append(f"| {target} | " + " | ".join(cells) + " |")
    behind = [(key, target, by) for (key, target), by in sorted(verdicts.items())
              if set(by) == set(CONVERTERS) and by["onnx"]["verdict"] == CORRECT and by["opspec"]["verdict"] != CORRECT]
    ahead = Counter(_family(key) for (key, target), by in verdicts.items()
                    if set(by) == set(CONVERTERS) and by["opspec"]["verdict"] == CORRECT
                    and by["onnx"]["verdict"] != CORRECT)
    wrong = [(key, target, by["opspec"]) for (key, target), by in sorted(verdicts.items())
             if by.get("opspec", {}).get("verdict") == WRONG]
    rows += ["", "Pair by pair where they differ: opspec correct where onnx is not: "
             + ", ".join(f"{n} pairs of {family}" for family, n in sorted(ahead.items())) + "; by model "
             "(the node suite's are counted above), the targets where opspec is correct and onnx refuses (r) or "
             "is wrong (w):", ""]
    by_model: dict[str, list[str]] = {}
    for (key, target), by in sorted(verdicts.items(), key=lambda item: (item[0][0], item[0][1])):
        if key.startswith("node:") or set(by) != set(CONVERTERS):
            continue
        if by["opspec"]["verdict"] == CORRECT and by["onnx"]["verdict"] != CORRECT:
            by_model.setdefault(key, []).append(f"{target}{by['onnx']['verdict'][0]}")
    rows += [f"- `{key}` (opset {opsets[key]}): {' '.join(targets)}" for key, targets in sorted(by_model.items())]
    rows += ["", f"onnx correct where opspec is not: {len(behind)} pairs."]
    rows += [f"- `{key}` to {target}: opspec {by['opspec']['verdict']}: {by['opspec']['detail'][:200]}"
             for key, target, by in behind]
    rows += ["", f"opspec wrong: {len(wrong)} pairs."]
    rows += [f"- `{key}` to {target}: {answer['detail'][:200]}" for key, target, answer in wrong]
    if left_out:
        named = {key: why for key, why in left_out.items() if not key.startswith("node:")}
        suite = Counter(why for key, why in left_out.items() if key.startswith("node:"))
        rows += ["", "Left out, as the original proves nothing: "
                 + "; ".join([f"`{key}` ({why[:160]})" for key, why in sorted(named.items())]
                             + [f"{count} node-suite models ({why})" for why, count in suite.most_common()]) + "."]
    timeouts = sorted((answer["pair"].converter, key, target) for (key, target), by in verdicts.items()
                      for answer in by.values() if answer.get("timeout"))
    if timeouts:
        rows += ["", "Timed out (counted as refused): "
                 + ", ".join(f"{c} `{k}` to {t}" for c, k, t in timeouts) + "."]
    return rows + [""]


def write_section(rows: list[str]) -> None:
    """Replace (or append) the matrix's section of ``benchmarks/results.md``."""
    text = RESULTS.read_text(encoding="utf-8")
    section = "\n".join(rows)
    if HEADING in text:
        before, rest = text.split(HEADING, 1)
        after = rest[rest.find("\n## ") + 1:] if "\n## " in rest else ""
        text = before + section + ("\n" + after if after else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    RESULTS.write_text(text, encoding="utf-8")


def _targets(text: str) -> list[int]:
    low, _, high = text.partition("-")
    return list(range(int(low), int(high or low) + 1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", default="real,light,node", help="model families: real, light, node")
    parser.add_argument("--only", nargs="*", default=[], help="only models whose key holds one of these")
    parser.add_argument("--targets", default="7-25", help="target opsets, LOW-HIGH")
    parser.add_argument("--big-nodes", type=int, default=1000, help="a model above this many nodes is big")
    parser.add_argument("--big-targets", default="7,9,11,13,15,17,19,21,23,25",
                        help="the targets of big models (comma-separated)")
    parser.add_argument("--node-targets", default="7-25", help="the targets of the node suite's models")
    parser.add_argument("--node-sample", type=int, default=0,
                        help="N > 0: each node-suite model to N of its targets only, chosen seeded by its name")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=300, help="seconds one pair may take")
    parser.add_argument("--converters", default=",".join(CONVERTERS))
    parser.add_argument("--write", action="store_true", help="write the table into benchmarks/results.md")
    parser.add_argument("--quiet", action="store_true", help="do not print each pair that is not correct")
    args = parser.parse_args(argv)
    kinds = args.kinds.split(",")
    models = ((real_models() if "real" in kinds else []) + (light_models() if "light" in kinds else [])
              + (node_models() if "node" in kinds else []))
    if args.only:
        models = [m for m in models if any(part in m.key for part in args.only)]
    every, big = _targets(args.targets), [int(t) for t in args.big_targets.split(",")]
    node_targets = _targets(args.node_targets)
    pairs = []
    for model in models:
        chosen = node_targets if model.key.startswith("node:") else big if model.nodes > args.big_nodes else every
        if model.key.startswith("node:") and args.node_sample:
            others = [target for target in chosen if target != model.opset]
            chosen = sorted(random.Random(model.key).sample(others, min(args.node_sample, len(others))))
        pairs += [Pair(model, converter, target) for target in chosen if target != model.opset and target in every
                  for converter in args.converters.split(",")]
    store = Store(fingerprints())
    started = time.perf_counter()
    missing = sum(1 for pair in pairs if store.get(pair) is None)
    judge_all(pairs, store, args.workers, args.timeout, not args.quiet)
    seconds = time.perf_counter() - started
    load = os.getloadavg()[0]
    kept = Counter(m.key.split(":")[0] for m in models)
    node_note = (f"the node suite's models to {args.node_sample} of these each, chosen at random seeded by the model's "
                 "name" if args.node_sample else f"{node_targets[0]} to {node_targets[-1]} for the node suite")
    notes = [
        f"`benchmarks/bench_convert_matrix.py`: {len(models)} models ({kept['real']} of the real-model set, "
        f"{kept['light']} light models of onnx, {kept['node']} node-suite models), each converted to every opset "
        f"from {every[0]} to {every[-1]} but its own ({node_note}); models of more than "
        f"{args.big_nodes} nodes to {', '.join(map(str, big))} only. A pair is **correct** when the result is at the "
        "target opset, passes `onnx.checker.check_model(full_check=True)`, runs in onnxruntime with the original's "
        "outputs on the same seeded inputs (rtol 1e-3) and opspec's inference agrees with the run; **wrong** when "
        "a converter returns a model failing any of these; otherwise **refused**. Models the full checker rejects "
        "or onnxruntime does not run as they are are left out, and a pair counts only where both converters "
        f"were judged. Judged in {args.workers} worker processes ({args.timeout:.0f} s per pair at most); this "
        f"run judged the {missing} pairs its cache lacked in {seconds:.0f} s wall (load average {load:.1f} at the end).",
    ]
    rows = report(pairs, store, notes)
    print("\n".join(rows))
    if args.write:
        write_section(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
