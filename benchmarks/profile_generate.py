"""Profile generation (compile, render and write into a fresh folder) of a scaled copy of the built-in tree.

``.venv/bin/python benchmarks/profile_generate.py TAG [FACTOR]`` writes
``profiles/generate3-TAG-FACTORx.txt``: the CPU seconds of ``generate()`` without the profiler, then
cProfile's top 30 by cumulative and by own time. Everything runs in this one process (no forked
workers), so the profile sees all the work.
"""
from __future__ import annotations

import cProfile
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
from opspec.codegen.generate import generate  # noqa: E402


def main() -> None:
    tag = sys.argv[1]
    factor = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    parallel.worker_count = lambda: 1  # all the work in this process, where the profiler sees it
    with tempfile.TemporaryDirectory() as folder:
        tree = Path(folder) / "opdefs"
        ops = _scaled_tree(factor, tree)
        started = time.process_time()
        generate(tree, Path(folder) / "out1", with_protos=False)
        seconds = time.process_time() - started
        profile = cProfile.Profile()
        profile.enable()
        generate(tree, Path(folder) / "out2", with_protos=False)
        profile.disable()
    text = io.StringIO()
    text.write(f"generate() of the built-in tree x{factor} ({ops} op files), one process: {seconds:.2f} CPU seconds "
               "without the profiler\n\n")
    for order in ("cumulative", "tottime"):
        pstats.Stats(profile, stream=text).sort_stats(order).print_stats(30)
    target = HERE / "profiles" / f"generate3-{tag}-{factor}x.txt"
    target.write_text(text.getvalue().replace(str(Path(folder)), "<tmp>"), encoding="utf-8")
    print(f"{target}: {seconds:.2f} CPU seconds")


if __name__ == "__main__":
    main()
