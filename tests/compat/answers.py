"""Infer every model of a folder with ``opspec infer --format json`` and write or compare the answers.

``python answers.py DIR --write ANSWERS.json`` records, per model file, what the command line
printed and its exit status; ``python answers.py DIR --compare ANSWERS.json`` infers again in
the running environment and fails (exit 1) on the first models whose answers differ. It needs
only opspec, so it runs where onnx is not installed (the dependency-floor environment).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from pathlib import Path

from opspec.cli import main as opspec_main


def infer_all(folder: Path) -> dict[str, dict]:
    answers = {}
    for path in sorted(folder.glob("*.onnx")):
        printed, errors = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(errors):
            status = opspec_main(["infer", str(path), "--format", "json"])
        answer = json.loads(printed.getvalue()) if printed.getvalue() else None
        answers[path.name] = {"status": status, "answer": answer, "stderr": errors.getvalue()}
    return answers


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", type=Path, metavar="ANSWERS")
    action.add_argument("--compare", type=Path, metavar="ANSWERS")
    args = parser.parse_args()
    answers = infer_all(args.folder)
    if not answers:
        print(f"no models in {args.folder}", file=sys.stderr)
        return 2
    if args.write:
        args.write.write_text(json.dumps(answers, indent=1, sort_keys=True))
        print(f"{len(answers)} answers written to {args.write}")
        return 0
    expected = json.loads(args.compare.read_text())
    differ = sorted(name for name in expected.keys() | answers.keys() if expected.get(name) != answers.get(name))
    same = len(answers) - len(differ)
    print(f"{same} of {len(expected)} models give identical answers; {len(differ)} differ")
    for name in differ[:20]:
        print(f"  differs: {name}", file=sys.stderr)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
