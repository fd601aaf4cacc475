"""Writes are whole or nothing: a real short write (a file size limit set with setrlimit in a
child process) leaves the target exactly as it was, even when the output is the input; and
only regular files are replaced: a device, a pipe or a link is written as it is."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from opspec.runtime.atomic_file import TargetKind, WriteTarget, write_atomically, write_output, write_target

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


def test_output_through_a_link_keeps_the_link_and_replaces_its_target(tmp_path):
    model = tmp_path / "m.onnx"
    _model(model)
    real = tmp_path / "real.onnx"
    real.write_bytes(b"old")
    os.chmod(real, 0o640)
    link = tmp_path / "out.onnx"
    link.symlink_to(real.name)
    run = subprocess.run([sys.executable, "-m", "opspec", "infer", str(model), "-o", str(link)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert link.is_symlink() and os.readlink(link) == real.name
    assert onnx.load(str(real)).graph.output[0].type.tensor_type.HasField("shape")
    assert real.stat().st_mode & 0o777 == 0o640  # the replaced file's permissions carry over
    _only(tmp_path, "m.onnx", "real.onnx", "out.onnx")


def test_a_dangling_link_creates_the_file_it_names(tmp_path):
    link = tmp_path / "link"
    link.symlink_to("new.bin")
    write_output(link, b"data")
    assert link.is_symlink() and (tmp_path / "new.bin").read_bytes() == b"data"


def test_a_fifo_is_written_in_place(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen([sys.executable, "-c", f"import sys; sys.stdout.write(open({str(fifo)!r}).read())"],
                              stdout=subprocess.PIPE, text=True)
    write_output(fifo, [b"one ", b"two"])
    assert reader.communicate(timeout=60)[0] == "one two"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    _only(tmp_path, "fifo")


def test_a_character_device_is_written_in_place_and_a_directory_refused(tmp_path):
    assert write_target(os.devnull) == WriteTarget(TargetKind.IN_PLACE, os.devnull)  # asked before writing to it
    write_output(os.devnull, b"discarded")
    assert stat.S_ISCHR(os.lstat(os.devnull).st_mode)
    with pytest.raises(IsADirectoryError):
        write_output(tmp_path, b"x")
    link = tmp_path / "to_folder"
    link.symlink_to(tmp_path)
    with pytest.raises(IsADirectoryError):
        write_output(link, b"x")


def test_a_descriptors_name_is_written_through_the_descriptor(tmp_path):
    """``/dev/stdout`` into a file: the file standard output is open on gets the bytes."""
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc/self/fd on this platform")
    assert write_target("/dev/stdout").kind is TargetKind.IN_PLACE  # never run a broken rule on it (as root)
    target = tmp_path / "out.bin"
    code = "from opspec.runtime.atomic_file import write_output; write_output('/dev/stdout', b'bytes')"
    with open(target, "wb") as out:
        run = subprocess.run([sys.executable, "-c", code], stdout=out, stderr=subprocess.PIPE, timeout=60)
    assert run.returncode == 0, run.stderr
    assert target.read_bytes() == b"bytes"
    _only(tmp_path, "out.bin")


def test_a_file_placed_in_a_folder_replaces_a_link_there_and_never_writes_through_it(tmp_path):
    """What a program writing files into a folder of its own wants: nothing outside it is touched."""
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"kept")
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "file.txt").symlink_to(outside)
    write_atomically(folder / "file.txt", b"new")
    assert not (folder / "file.txt").is_symlink() and (folder / "file.txt").read_bytes() == b"new"
    assert outside.read_bytes() == b"kept"


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
