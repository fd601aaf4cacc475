"""Inference per call, pure Python beside a mypyc-compiled install, on models of the real set.

``python benchmarks/bench_compiled.py [MODEL ...]`` first builds the compiled install into
``.build/compiled/`` (once; ``--rebuild`` builds it again): the engine's typed modules
(:data:`COMPILED`, less :data:`LEFT_PURE`) compiled by mypyc, laid over the pure wheel installed
in a virtualenv of its own, ``.build/compiled/venv``. Nothing is written beside the sources: an
extension module there would shadow its ``.py`` in every other run.

It then times ``infer_shapes(model, data_prop=True)`` on each model (default: :data:`MODELS`,
22 models of ``real_set.py``'s set: classic ML, exports at 2 and 12 layers, rewrites) once with
this interpreter (the pure-Python package) and once with the compiled install. Each (model,
install) pair runs in a fresh process of its own (``infer_worker.py``): one warm-up call, then
the best of 5 warm calls in process CPU time, and the best of 3 such processes (``--rounds=N``).
The two installs alternate model by model, so both see the same load. Prints the build's cost,
a Markdown table, the geometric mean of pure / compiled, and the fixed cost per call (the 1-node
models). Needs the ``dev`` extra (mypy, whose mypyc does the compiling) and a C compiler.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from bench_real import _made_set, _stripped  # noqa: E402  (a sibling script, found through HERE)

CALLS = 5
#: Rounds over the models (``--rounds=N``): each model's time is its best over the rounds.
ROUNDS = 3
#: The models compared by default, by group: classic ML (the 1-node ones give the fixed cost), exports at 2 layers,
#: exports at 12 layers, rewritten exports.
MODELS = {
    "classic ML": ["sklearn-scaler", "xgboost", "sklearn-svm", "lightgbm", "sklearn-pca-knn"],
    "2 layers": ["bert-tiny-dynamo", "bert-tiny-torchscript", "deberta-v2-tiny-torchscript", "mamba-tiny-torchscript",
                 "swin-tiny-torchscript", "albert-tiny-torchscript", "t5-tiny-dynamo", "qwen2-tiny-dynamo"],
    "12 layers": ["bert-12L-dynamo", "deberta-v2-12L-torchscript", "mamba-12L-dynamo", "vit-12L-dynamo",
                  "llama-12L-torchscript"],
    "rewritten": ["bert-12L-torchscript-optimized-bert", "llama-12L-torchscript-quantized",
                  "deberta-v2-12L-torchscript-onnxslim", "qwen2-12L-torchscript-float16"],
}


#: Where the compiled install is built: extensions, the pure wheel, the virtualenv.
OUT = REPO / ".build" / "compiled"
#: The modules compiled, as paths in the installed layout that ``tests/typecheck.py`` links under ``.build/typing``.
COMPILED = ("opspec/runtime/inference/*.py", "opspec/runtime/shape/*.py", "opspec/runtime/ir/*.py",
            "opspec/runtime/contract/*.py")
#: Modules of those that mypyc cannot compile as they are written, and why.
LEFT_PURE = {
    "opspec/runtime/shape/sym.py": "reads the slot descriptors of Sym from the class __dict__, "
                                   "which a native class has not",
    "opspec/runtime/ir/model_io.py": "reads plain class constants (SourceKind.PATH) that mypyc takes for "
                                     "instance attributes",
    "opspec/runtime/contract/values.py": "subclasses tuple and a namedtuple (LongShape, TensorValue)",
    "opspec/runtime/contract/context.py": "InferenceError's bases are unpacked at run time (an internal "
                                          "error of mypyc)",
    "opspec/runtime/contract/arguments.py": "declares methods under `if TYPE_CHECKING:` in a class body",
}


def _run(*command: str | Path, cwd: Path = REPO, env: dict[str, str] | None = None) -> None:
    subprocess.run([str(part) for part in command], check=True, cwd=cwd, env=env, stdout=subprocess.DEVNULL)


def _site_packages(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


def build() -> dict[str, Any]:
    """Build the compiled install into :data:`OUT`; what it cost (seconds, megabytes, modules)."""
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    _run(sys.executable, REPO / "tests" / "typecheck.py")  # lays out .build/typing; mypyc needs clean types
    tree = REPO / ".build" / "typing"
    paths = sorted({str(path.relative_to(REPO)) for pattern in COMPILED for path in tree.glob(pattern)
                    if str(path.relative_to(tree)) not in LEFT_PURE})
    compile_script = (
        "import sys\nfrom setuptools import setup\nfrom mypyc.build import mypycify\n"
        f"modules = mypycify(['--cache-dir={OUT / 'mypy_cache'}', *sys.argv[1:]], target_dir='{OUT / 'c'}', "
        "opt_level='3', multi_file=True)\n"
        "setup(name='opspec-compiled', packages=[], py_modules=[], ext_modules=modules, script_args=["
        f"'build_ext', '--build-lib', '{OUT / 'lib'}', '--build-temp', '{OUT / 'tmp'}', "
        f"'-j', '{os.cpu_count() or 1}'])\n")
    started = time.perf_counter()
    _run(sys.executable, "-c", compile_script, *paths)  # from the repository: mypy reads pyproject.toml's settings
    compile_seconds = time.perf_counter() - started
    _run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", OUT / "dist", REPO)
    wheel = next((OUT / "dist").glob("opspec-*.whl"))
    _run(sys.executable, "-m", "venv", OUT / "venv")
    _run(OUT / "venv" / "bin" / "python", "-m", "pip", "install", "--quiet", "--quiet", "--disable-pip-version-check",
         "-c", REPO / "requirements" / "lock.txt", f"{wheel}[test]")
    site = _site_packages(OUT / "venv")
    extensions = sorted((OUT / "lib").rglob("*.so"))
    for extension in extensions:  # beside each module's .py, which an extension module shadows
        target = site / extension.relative_to(OUT / "lib")
        shutil.copy2(extension, target)
    return {"compile_seconds": compile_seconds, "modules": len(paths), "left_pure": len(LEFT_PURE),
            "wheel_mb": wheel.stat().st_size / 1e6,
            "extensions_mb": sum(extension.stat().st_size for extension in extensions) / 1e6}


def _worker(python: str, path: Path) -> dict[str, Any]:
    """One fresh process of ``python`` timing opspec on the model at ``path``."""
    printed = subprocess.run([python, str(HERE / "infer_worker.py"), "opspec", str(path), str(CALLS)],
                             check=True, capture_output=True, text=True, cwd=HERE).stdout
    result: dict[str, Any] = json.loads(printed.strip().splitlines()[-1])
    return result


def _compiled_modules(python: str) -> int:
    """How many of ``opspec``'s modules ``python`` imports from compiled extensions (0: a pure install)."""
    probe = ("import importlib, pkgutil, opspec.runtime as r\n"
             "print(sum(1 for m in pkgutil.walk_packages(r.__path__, 'opspec.runtime.')"
             " if (s := importlib.util.find_spec(m.name)) and s.origin and s.origin.endswith('.so')))")
    return int(subprocess.run([python, "-c", probe], check=True, capture_output=True, text=True,
                              cwd=HERE).stdout.split()[-1])


def measure(compiled: str, names: list[str], rounds: int) -> list[dict[str, Any]]:
    """Per model: its manifest entry with the best warm CPU and wall time of each install over ``rounds``
    rounds (each round a fresh process per model and install)."""
    entries = {entry["name"]: entry for entry in _made_set()}
    rows = [dict(entries[name], pure=math.inf, pure_wall=math.inf, compiled=math.inf, compiled_wall=math.inf)
            for name in names]
    for round_number in range(rounds):
        for row in rows:
            path = _stripped(row)
            for install, python in (("pure", sys.executable), ("compiled", compiled)):
                timing = _worker(python, path)
                row[install] = min(row[install], timing["warm_cpu"])
                row[f"{install}_wall"] = min(row[f"{install}_wall"], timing["warm"])
            print(f"  round {round_number + 1}, {row['name']}: pure {row['pure'] * 1e3:.2f} ms, "
                  f"compiled {row['compiled'] * 1e3:.2f} ms", file=sys.stderr, flush=True)
    return rows


def _geometric(ratios: list[float]) -> float:
    return math.exp(statistics.fmean(math.log(r) for r in ratios)) if ratios else float("nan")


def table(rows: list[dict[str, Any]], groups: dict[str, list[str]], modules: int, rounds: int) -> list[str]:
    """The Markdown table, the geometric mean per group and over all, and the fixed cost per call."""
    lines = ["| model | group | nodes | pure CPU ms | compiled CPU ms | pure / compiled | pure wall ms "
             "| compiled wall ms |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    group_of = {name: group for group, names in groups.items() for name in names}
    for row in rows:
        lines.append(f"| {row['name']} | {group_of.get(row['name'], '-')} | {row['nodes']:,} | "
                     f"{row['pure'] * 1e3:,.3f} | {row['compiled'] * 1e3:,.3f} | "
                     f"{row['pure'] / row['compiled']:.2f}x | "
                     f"{row['pure_wall'] * 1e3:,.3f} | {row['compiled_wall'] * 1e3:,.3f} |")
    lines += ["", "| group | models | geometric mean of pure / compiled |", "|---|---:|---:|"]
    for group in groups:
        ratios = [r["pure"] / r["compiled"] for r in rows if group_of.get(r["name"]) == group]
        if ratios:
            lines.append(f"| {group} | {len(ratios)} | {_geometric(ratios):.2f}x |")
    everything = [r["pure"] / r["compiled"] for r in rows]
    lines.append(f"| **all** | {len(everything)} | **{_geometric(everything):.2f}x** |")
    single = [r for r in rows if r["nodes"] == 1]
    if single:
        lines += ["", "Fixed cost per call (the 1-node models): " + "; ".join(
            f"{r['name']} pure {r['pure'] * 1e6:.0f} µs, compiled {r['compiled'] * 1e6:.0f} µs"
            for r in single) + "."]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines += ["", f"Per model and install, a fresh process times `infer_shapes(model, data_prop=True)` on the model "
                  f"(value_info stripped) as an `onnx.ModelProto`: one warm-up call, then the best of {CALLS} warm "
                  f"calls in process CPU time (wall time beside it), and the best of {rounds} such processes. "
                  f"The compiled install imports {modules} of "
                  f"`opspec.runtime`'s modules from extensions. Load average at the end: {load:.1f} on "
                  f"{os.cpu_count()} cores."]
    return lines


def main() -> None:
    names = [name for name in sys.argv[1:] if not name.startswith("--")]
    compiled = str(OUT / "venv" / "bin" / "python")
    if "--rebuild" in sys.argv or not Path(compiled).is_file():
        cost = build()
        print(f"Built in {cost['compile_seconds']:.0f} s (mypyc and the C compiler, {os.cpu_count()} cores): "
              f"{cost['modules']} modules compiled, {cost['left_pure']} left pure; the extensions add "
              f"{cost['extensions_mb']:.1f} MB to the pure wheel's {cost['wheel_mb']:.1f} MB.")
    modules = _compiled_modules(compiled)
    if not modules:
        raise SystemExit(f"{compiled} imports opspec from pure Python: nothing compiled to compare")
    groups = MODELS if not names else {"chosen": names}
    rounds = next((int(arg.split("=", 1)[1]) for arg in sys.argv[1:] if arg.startswith("--rounds=")), ROUNDS)
    rows = measure(compiled, [name for group in groups.values() for name in group], rounds)
    print("\n".join(table(rows, groups, modules, rounds)))


if __name__ == "__main__":
    main()
