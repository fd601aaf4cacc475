"""Writes are whole or nothing: a real short write (a file size limit set with setrlimit in a
child process) leaves the target exactly as it was, even when the output is the input."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from opspec.runtime.atomic_file import write_atomically

LIMIT = 30 * 1024  # bytes a child process may write to any one file


def _model(path: Path) -> bytes:
    weights = numpy_helper.from_array(np.arange(50_000, dtype=np.float32), "w")
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [weights])
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    path.write_bytes(data)
    assert len(data) > 4 * LIMIT
    return data


def _limited(code: str) -> subprocess.CompletedProcess[str]:
    prelude = f"import resource, sys\nresource.setrlimit(resource.RLIMIT_FSIZE, ({LIMIT}, resource.RLIM_INFINITY))\n"
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=300)


def _only(folder: Path, *names: str) -> None:
    assert sorted(path.name for path in folder.iterdir()) == sorted(names)  # no temporary file left behind


def test_infer_over_its_own_input_with_a_full_disk_keeps_the_input(tmp_path):
    model = tmp_path / "m.onnx"
    before = _model(model)
    run = _limited(f"from opspec.cli import main; sys.exit(main(['infer', {str(model)!r}, '-o', {str(model)!r}]))")
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith(f"opspec: cannot write {model}: ") and "Traceback" not in run.stderr
    assert model.read_bytes() == before
    assert onnx.load(str(model)).graph.node[0].op_type == "Add"
    _only(tmp_path, "m.onnx")


def test_infer_shapes_path_with_a_full_disk_keeps_the_input(tmp_path):
    model = tmp_path / "m.onnx"
    before = _model(model)
    run = _limited(f"""
        from opspec import infer_shapes_path
        try:
            infer_shapes_path({str(model)!r})
        except OSError as error:
            sys.exit(7)
        """)
    assert run.returncode == 7, run.stderr
    assert model.read_bytes() == before
    _only(tmp_path, "m.onnx")


def test_a_written_model_is_complete(tmp_path):
    model = tmp_path / "m.onnx"
    _model(model)
    run = subprocess.run([sys.executable, "-m", "opspec", "infer", str(model), "-o", str(model)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    inferred = onnx.load(str(model))
    assert inferred.graph.output[0].type.tensor_type.shape.dim[0].dim_value == 50_000
    _only(tmp_path, "m.onnx")


def test_output_through_a_link_replaces_the_link_not_its_target(tmp_path):
    model = tmp_path / "m.onnx"
    before = _model(model)
    link = tmp_path / "out.onnx"
    link.symlink_to(model)
    run = subprocess.run([sys.executable, "-m", "opspec", "infer", str(link), "-o", str(link)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert model.read_bytes() == before  # what the link pointed at is untouched
    assert not link.is_symlink() and onnx.load(str(link)).graph.output[0].type.tensor_type.HasField("shape")


def test_a_failed_write_leaves_the_target_and_no_temporary_file(tmp_path):
    target = tmp_path / "t.bin"
    target.write_bytes(b"old")
    os.chmod(target, 0o640)
    run = _limited(f"""
        from opspec.runtime.atomic_file import write_atomically
        try:
            write_atomically({str(target)!r}, b"x" * {4 * LIMIT})
        except OSError as error:
            sys.exit(7)
        """)
    assert run.returncode == 7, run.stderr
    assert target.read_bytes() == b"old"
    _only(tmp_path, "t.bin")
    write_atomically(target, b"new")
    assert target.read_bytes() == b"new" and (target.stat().st_mode & 0o777) == 0o640


def test_a_missing_folder_is_an_os_error(tmp_path):
    with pytest.raises(OSError):
        write_atomically(tmp_path / "no" / "t.bin", b"x")


def test_pieces_are_written_in_order_as_one_file(tmp_path):
    target = tmp_path / "t.bin"
    data = b"0123456789"
    write_atomically(target, [data[:3], memoryview(data)[3:7], bytearray(data[7:])])
    assert target.read_bytes() == data
    _only(tmp_path, "t.bin")


def test_a_failing_piece_leaves_the_target_as_it_was(tmp_path):
    target = tmp_path / "t.bin"
    target.write_bytes(b"old")

    def pieces():
        yield b"new"
        raise OSError("no space left")

    with pytest.raises(OSError):
        write_atomically(target, pieces())
    assert target.read_bytes() == b"old"
    _only(tmp_path, "t.bin")
