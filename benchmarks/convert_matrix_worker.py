"""One worker of the conversion matrix: judges (model, converter, target) tasks read from stdin.

Each stdin line is a JSON task ``{"model": KEY, "converter": "opspec"|"onnx", "target": N}``;
each answer is one JSON line on stdout ``{"verdict": ..., "detail": ..., "seconds": ...}``.
A model's case, its original outputs and its inference problems are worked out once and kept
while the tasks that follow name the same model. Keys: ``real:NAME`` (a model of the real-model
set), ``light:NAME`` (onnx's light models, weights seeded), ``node:NAME`` (onnx's node suite).
"""
from __future__ import annotations

import json
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

#: Where the real-model set is kept (as ``bench_real.py`` finds it).
SET_DIR = Path(os.environ.get("OPSPEC_REAL_SET", HERE.parent / ".build" / "real_set"))


#: Lengths tried in turn for the symbolic dims of a real model's inputs (beyond the first) until it
#: runs: short sequences first, longer ones for models that pad, window or convolve their input.
LENGTHS = (3, 16, 400)


def load_case(key: str, length: int | None = None, suite: dict[str, Any] | None = None) -> Any:
    """The case a key names, with seeded inputs (``suite``: the node suite's cases by name, read
    once by the caller)."""
    import onnx
    from convert_cases import Case, node_suite_cases, runnable, seeded_inputs

    kind, name = key.split(":", 1)
    if kind == "real":
        model = onnx.load(str(SET_DIR / f"{name}.onnx"))
        return Case(key, model, seeded_inputs(model, length=length))
    if kind == "light":
        path = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / f"light_{name}.onnx"
        model = runnable(onnx.load(str(path)))
        return Case(key, model, seeded_inputs(model))
    if kind == "node":
        if suite is None:
            suite = {case.name: case for case in node_suite_cases()}
        case = suite[name]
        return Case(key, case.model, case.inputs)
    raise ValueError(f"unknown model key {key!r}")


class Judge:
    """Answers tasks, keeping the last model's case, outputs and inference problems."""

    def __init__(self) -> None:
        self.key: str | None = None
        self.case: Any = None
        self.expected: list | None = None
        self.errors: frozenset[str] = frozenset()
        self.invalid = ""
        self.suite: dict[str, Any] | None = None

    def prepare(self, key: str) -> None:
        from convert_cases import inference_disagreement
        from convert_cases import baseline, inference_errors

        if key == self.key:
            return
        self.key, self.expected = key, None
        if key.startswith("node:") and self.suite is None:
            from convert_cases import node_suite_cases

            self.suite = {case.name: case for case in node_suite_cases()}
        for length in LENGTHS if key.startswith("real:") else (None,):
            self.case = load_case(key, length, self.suite)
            self.expected = baseline(self.case)
            if self.expected is not None:
                break
        self.invalid = "the original fails the full check or does not run"
        if self.expected is not None:
            self.errors = inference_errors(self.case.model)
            model = self.case.model
            problem = inference_disagreement(model, self.expected, [o.name for o in model.graph.output], self.errors)
            if problem:  # a model whose own declarations contradict its run holds no converter to them
                self.expected, self.invalid = None, f"the original already disagrees: {problem}"

    def answer(self, task: dict[str, Any]) -> dict[str, Any]:
        from convert_cases import judge, onnx_convert, opspec_convert

        started = time.perf_counter()
        self.prepare(task["model"])
        if self.expected is None:
            return {"verdict": "invalid", "detail": self.invalid, "seconds": 0}
        convert = {"opspec": opspec_convert, "onnx": onnx_convert}[task["converter"]]
        outcome = judge(self.case, task["target"], convert, self.expected, self.errors)
        return {"verdict": outcome.verdict, "detail": outcome.detail,
                "seconds": round(time.perf_counter() - started, 2)}


def main() -> None:
    import onnxruntime

    onnxruntime.set_default_logger_severity(4)
    warnings.simplefilter("ignore")
    judge = Judge()
    for line in sys.stdin:
        task = json.loads(line)
        try:
            answer = judge.answer(task)
        except Exception as error:  # noqa: BLE001 - a model that cannot be loaded or run at all
            answer = {"verdict": "invalid", "detail": f"{type(error).__name__}: {str(error)[:200]}", "seconds": 0}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
