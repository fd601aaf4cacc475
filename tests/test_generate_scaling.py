"""Generation spreads its work over processes with the answer of a serial run, writes its output
as one batch, and does work linear in the size of an op (counted in calls, never timed)."""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from opspec.codegen import history, parallel, resolve, staging
from opspec.codegen.generate import build, generate

REPO = Path(__file__).resolve().parent.parent


def _square(value: int) -> int:
    return value * value


def _fail_on_seven(value: int) -> int:
    if value == 7:
        raise ValueError("seven")
    return value


def test_forked_map_keeps_the_items_order():
    assert parallel.forked_map(_square, range(101), min_items=1, workers=3) == [v * v for v in range(101)]
    assert parallel.forked_map(_square, [], min_items=1, workers=2) == []


def test_forked_map_raises_a_childs_exception():
    with pytest.raises(ValueError, match="seven"):
        parallel.forked_map(_fail_on_seven, range(10), min_items=1, workers=2)  # 7 is in the child's share


def test_forked_map_recomputes_what_a_child_cannot_send():
    results = parallel.forked_map(lambda value: (lambda: value), range(6), min_items=1, workers=2)
    assert [make() for make in results] == list(range(6))  # functions cannot be pickled


def test_forked_map_stays_in_process_for_small_lists():
    pid = os.getpid()
    assert parallel.forked_map(lambda _: os.getpid(), range(5), min_items=10, workers=4) == [pid] * 5


def test_parallel_rendering_is_byte_identical_to_serial(tmp_path, monkeypatch):
    monkeypatch.setattr(parallel, "worker_count", lambda: 1)
    serial = build(REPO / "opdefs", with_protos=False, out=tmp_path / "a").files
    monkeypatch.setattr(parallel, "worker_count", lambda: 3)
    forked = build(REPO / "opdefs", with_protos=False, out=tmp_path / "b").files
    assert list(forked) == list(serial)  # the same files, in the same order
    assert forked == serial


def test_a_fresh_folder_gets_every_file_of_a_serial_build_and_no_temporary_file(tmp_path, monkeypatch):
    opdefs = _tree(tmp_path, attributes=3)
    monkeypatch.setattr(parallel, "worker_count", lambda: 1)
    serial = build(opdefs, with_protos=False, out=tmp_path / "out").files
    monkeypatch.setattr(parallel, "MIN_ITEMS", 1)  # even a small tree's files are written by several processes
    monkeypatch.setattr(staging, "_RUN", 2)
    monkeypatch.setattr(parallel, "worker_count", lambda: 3)
    result = generate(opdefs, tmp_path / "out", with_protos=False)
    written = sorted(path.relative_to(tmp_path / "out").as_posix() for path in (tmp_path / "out").rglob("*")
                     if path.is_file())
    assert written == sorted(result.paths) == sorted(result.written) == sorted(serial)
    assert list(result.paths) == list(serial)
    for path, content in serial.items():
        assert (tmp_path / "out" / path).read_bytes() == content


def _tree(root: Path, attributes: int) -> Path:
    """A one-op tree: Clip with ``attributes`` more attributes in its first version (of several)."""
    opdefs = root / "opdefs"
    (opdefs / "ai.onnx" / "math").mkdir(parents=True)
    shutil.copy(REPO / "opdefs" / "types.yaml", opdefs / "types.yaml")
    shutil.copy(REPO / "opdefs" / "ai.onnx" / "domain.yaml", opdefs / "ai.onnx" / "domain.yaml")
    text = (REPO / "opdefs" / "ai.onnx" / "math" / "Clip.yaml").read_text(encoding="utf-8")
    extra = "".join(f"      a{index}: int = {index}\n" for index in range(attributes))
    (opdefs / "ai.onnx" / "math" / "Clip.yaml").write_text(
        text.replace("    attributes:\n", "    attributes:\n" + extra, 1), encoding="utf-8")
    return opdefs


def _counting(monkeypatch: Any, module: Any, name: str) -> list[int]:
    calls = [0]
    original = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_an_inherited_attribute_is_built_and_described_a_bounded_number_of_times(tmp_path, monkeypatch):
    count = 2_000
    opdefs = _tree(tmp_path, attributes=count)
    built = _counting(monkeypatch, resolve, "_attribute")
    described = _counting(monkeypatch, history, "attribute_spec")
    result = build(opdefs, with_protos=False, out=tmp_path / "out")
    (op,) = result.domains[0].ops
    assert len(op.schemas) > 3 and all(f"a{count - 1}" in schema.attributes for schema in op.schemas)
    assert built[0] < count + 10  # once per declaration, not once per version
    assert described[0] < 3 * count  # the op page's signatures, not every comparison of versions


def _broken_tree(root: Path) -> Path:
    """Clip copied 300 times (enough to spread over processes), one copy in ten broken in some way."""
    opdefs = _tree(root, attributes=0)
    clip = (opdefs / "ai.onnx" / "math" / "Clip.yaml").read_text(encoding="utf-8")
    breaks = (lambda text: text.replace("versions:", "bogus: 1\nversions:", 1),  # an unknown key
              lambda text: text.replace("op: Clip", "op: Clip7", 1),  # a duplicate, named unlike its file
              lambda text: text.replace("T: float_types", "T: flaot_types", 1),  # an unknown type set
              lambda text: text.replace("    attributes:\n", "    attributes:\n      min: nonsense\n", 1))
    for index in range(300):
        text = clip.replace("op: Clip", f"op: Clip{index}", 1)
        if index % 10 == 3:
            text = breaks[index // 10 % len(breaks)](text)
        (opdefs / "ai.onnx" / "math" / f"Clip{index}.yaml").write_text(text, encoding="utf-8")
    return opdefs


def test_errors_found_in_parallel_are_those_of_a_serial_run(tmp_path, monkeypatch):
    from opspec.codegen.diagnostics import CompileError

    opdefs = _broken_tree(tmp_path)
    found = []
    for workers in (1, 2):
        monkeypatch.setattr(parallel, "worker_count", lambda: workers)
        with pytest.raises(CompileError) as raised:
            build(opdefs, with_protos=False, out=tmp_path / "out")
        found.append([str(diagnostic) for diagnostic in raised.value.diagnostics])
    assert found[0] == found[1]
    assert len({line.split(":")[0] for line in found[0]}) >= 30  # errors of many files, from every process


def test_the_quick_placeholder_search_finds_what_the_pattern_finds():
    from opspec.codegen import placeholders

    texts = ["", "plain text", "a TODO here", "todos", "ToDo", "fixme!", "FIXMEs", "tbd.", "xxx", "XXXL", "the Placeholder",
             "placeholders", "fıxme", "TOD\u200bO", "\u212aelvin todo", "x" * 1000 + " tbd"]
    for text in texts:
        quick, full = placeholders._marker(text), placeholders._MARKER.search(text)
        assert (quick and quick.group(0)) == (full and full.group(0)), text


def test_examples_computed_in_forked_processes_are_those_of_a_serial_run(monkeypatch):
    from functools import partial

    from opspec.codegen import examples
    from opspec.codegen.compiler import compile_tree

    domains = compile_tree(REPO / "opdefs", warn=lambda warning: None)
    serial = examples.examples_of(domains)
    monkeypatch.setattr(examples, "forked_map", partial(parallel.forked_map, min_items=1, workers=3))
    forked = examples.examples_of(domains)
    assert serial and list(forked) == list(serial) and forked == serial


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_the_collector_resumes_without_a_pass_over_what_was_made_while_paused():
    passes: list[int] = []

    def record(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            passes.append(info["generation"])

    import gc

    assert gc.isenabled()
    gc.callbacks.append(record)
    try:
        with parallel.collector_paused():
            assert not gc.isenabled()
            made = [[index] for index in range(200_000)]
            cycle = _Cycle()
        assert gc.isenabled() and gc.get_freeze_count() == 0
        assert passes == []  # 200,000 new objects set off no pass on the way out
        alive = len(made)
        del made, cycle
        assert gc.collect() >= 1  # what was made meanwhile is collected as any object
    finally:
        gc.callbacks.remove(record)
    assert alive == 200_000


def test_objects_a_process_froze_stay_frozen():
    import gc

    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with parallel.collector_paused():
            made = [[index] for index in range(1000)]
        assert gc.get_freeze_count() == frozen and gc.isenabled() and made
    finally:
        gc.unfreeze()
