"""CPU seconds of rendering a scaled copy of the built-in tree, per kind of file, in one process.

``.venv/bin/python benchmarks/profile_render.py TAG [FACTOR] [RUNS]`` compiles the tree (and the op
sets layered over it) once, then renders every file RUNS times (3 by default), each job timed with
``time.process_time`` and the cycle collector paused, as generation runs them. It prints the best
run's seconds per kind (op modules, op pages, opset pages, changelogs, other pages) and writes them,
with cProfile's top 30 by own time over one more run (the total of the first run, with the
process's caches still empty, beside the best), to ``profiles/render-TAG-FACTORx.txt``.
Compilation and writing are not counted (``profile_generate.py`` counts everything).
"""
from __future__ import annotations

import cProfile
import gc
import io
import pstats
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import _scaled_tree  # noqa: E402  (the benchmark's own scaled trees)

from opspec.codegen import parallel  # noqa: E402
from opspec.codegen.compiler import CompiledDomain, compile_trees  # noqa: E402
from opspec.codegen.load import layered_trees  # noqa: E402
from opspec.codegen.render import Job, package_jobs  # noqa: E402


def kind(path: str) -> str:
    """The kind of an output file, by its path."""
    name = path.rsplit("/", 1)[-1]
    if path.endswith(".py"):
        return "op modules" if name != "__init__.py" and "/rules/" not in f"/{path}" else "other"
    if name == "changelog.md":
        return "changelogs"
    if name.startswith("opset-"):
        return "opset pages"
    if path.endswith(".md") and "/docs/" in f"/{path}" and name not in ("README.md", "status.md", "coverage.md",
                                                                          "types.md", "rules.md"):
        return "op pages"
    return "other"


def compiled(tree: Path) -> list[tuple[str, tuple[CompiledDomain, ...]]]:
    """The domains of ``tree`` and of each op set layered over it, with the name of each layer ("": the tree)."""
    folders = layered_trees(tree)
    outcomes = compile_trees([tree, *folders])
    return [(folder.name if folder != tree else "", outcome.domains_or_raise())
            for folder, outcome in zip([tree, *folders], outcomes)]


def jobs_of(packages: list[tuple[str, tuple[CompiledDomain, ...]]]) -> list[Job]:
    """Fresh jobs rendering every package (nothing a job keeps carries over from other runs)."""
    layers = tuple(name for name, _ in packages if name)
    jobs: list[Job] = []
    for name, domains in packages:
        jobs += package_jobs(domains, f"opdefs/{name}/" if name else "opdefs/", None, None,
                             () if name else layers, f"{name}/" if name else "")
    return jobs


def main() -> None:
    tag = sys.argv[1]
    factor = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    parallel.worker_count = lambda: 1  # all the work in this process
    gc.disable()
    runs_seconds: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as folder:
        tree = Path(folder) / "opdefs"
        ops = _scaled_tree(factor, tree)
        packages = compiled(tree)
        for _ in range(runs):
            seconds: dict[str, float] = {}
            for job in jobs_of(packages):
                started = time.process_time()
                files = job()
                spent = time.process_time() - started
                found = kind(next(iter(files))) if files else "other"
                seconds[found] = seconds.get(found, 0.0) + spent
            runs_seconds.append(seconds)
        profile = cProfile.Profile()
        for job in jobs_of(packages):
            profile.runcall(job)
    best = {name: min(seconds[name] for seconds in runs_seconds) for name in runs_seconds[0]}
    lines = [f"Rendering the built-in tree x{factor} ({ops} op files), one process, best of {runs} runs, CPU seconds:"]
    lines += [f"  {name}: {best[name]:.2f}" for name in sorted(best)]
    lines += [f"  total: {sum(best.values()):.2f} (the first run, with the per-process caches empty: "
              f"{sum(runs_seconds[0].values()):.2f})", ""]
    text = io.StringIO()
    text.write("\n".join(lines) + "\n")
    pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(30)
    target = HERE / "profiles" / f"render-{tag}-{factor}x.txt"
    target.write_text(text.getvalue().replace(folder, "<tmp>"), encoding="utf-8")
    print("\n".join(lines[:-1]))
    print(f"-> {target}")


if __name__ == "__main__":
    main()
