"""Where commands read and write models: devices, pipes and links written as they are,
``-`` for standard input and output, one rule for existing outputs, external data kept
reachable from the output's folder."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from opspec.cli import main
from opspec.runtime.atomic_file import TargetKind, write_target  # without them, nothing here runs at all

F = TensorProto.FLOAT


def _model(opset: int = 17) -> onnx.ModelProto:
    weights = numpy_helper.from_array(np.arange(64, dtype=np.float32).reshape(4, 16), "w")
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"], name="add")], "g",
                              [helper.make_tensor_value_info("x", F, [4, 16])],
                              [helper.make_tensor_value_info("y", F, None)], [weights])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)  # onnxruntime reads it


def _saved(path: Path, opset: int = 17) -> Path:
    path.write_bytes(_model(opset).SerializeToString())
    return path


def _inferred(data: bytes) -> onnx.ModelProto:
    model = onnx.load_from_string(data)
    assert [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim] == [4, 16]
    return model


def _opspec(*args: str, stdin: bytes = b"", cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "opspec", *args], input=stdin, capture_output=True, timeout=120,
                          cwd=cwd)


# -- outputs that are not regular files ------------------------------------------------------------

def test_a_fifo_is_written_in_place_for_its_reader(tmp_path):
    model, fifo = _saved(tmp_path / "m.onnx"), tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    assert main(["infer", str(model), "-o", str(fifo), "-q"]) == 0
    reader.join(timeout=60)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the pipe was replaced by a file"
    assert received and _inferred(received[0])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx", "pipe"]  # no temporary file left


def test_a_character_device_stays_a_device(tmp_path, capsys):
    # Asked first without writing: a broken rule must never get to replace the device.
    assert write_target(os.devnull).kind is TargetKind.IN_PLACE
    assert main(["infer", str(_saved(tmp_path / "m.onnx")), "-o", os.devnull, "-q"]) == 0
    assert stat.S_ISCHR(os.lstat(os.devnull).st_mode)
    assert capsys.readouterr().err == ""


def test_a_link_to_a_device_is_kept_and_written_through(tmp_path):
    """What ``-o /dev/stdout`` is: a link naming a device (or a pipe), never replaced."""
    link = tmp_path / "null"
    link.symlink_to(os.devnull)
    assert main(["infer", str(_saved(tmp_path / "m.onnx")), "-o", str(link), "-q"]) == 0
    assert link.is_symlink() and os.readlink(link) == os.devnull
    assert stat.S_ISCHR(os.stat(link).st_mode)


def test_dev_stdout_into_a_pipe_carries_the_model_and_the_report_goes_to_stderr(tmp_path):
    if not os.path.exists("/dev/stdout"):
        pytest.skip("no /dev/stdout on this platform")
    assert write_target("/dev/stdout").kind is TargetKind.IN_PLACE  # never run a broken rule on it (as root)
    run = _opspec("infer", str(_saved(tmp_path / "m.onnx")), "-o", "/dev/stdout")
    assert run.returncode == 0, run.stderr
    _inferred(run.stdout)
    assert b"wrote /dev/stdout" in run.stderr


def test_a_link_to_a_regular_file_keeps_the_link_and_replaces_the_file(tmp_path):
    model = _saved(tmp_path / "m.onnx")
    real = _saved(tmp_path / "elsewhere.onnx")
    link = tmp_path / "out.onnx"
    link.symlink_to(real.name)
    assert main(["infer", str(model), "-o", str(link), "-q"]) == 0
    assert link.is_symlink() and os.readlink(link) == real.name
    _inferred(real.read_bytes())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere.onnx", "m.onnx", "out.onnx"]


def test_a_directory_or_a_socket_is_one_clear_error(tmp_path, capsys):
    import socket

    model = _saved(tmp_path / "m.onnx")
    assert main(["infer", str(model), "-o", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"opspec: cannot write {tmp_path}: it is a directory\n"
    path = tmp_path / "s"
    if len(str(path)) > 100:
        pytest.skip("the temporary folder's path is too long for a socket")
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(path))
        assert main(["convert", str(model), "-o", str(path), "--opset", "18"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"opspec: cannot write {path}: it is a socket") and err.count("\n") == 1


# -- standard input and output ------------------------------------------------------------------------

def test_infer_reads_stdin_and_writes_stdout_with_its_report_on_stderr(tmp_path):
    data = _saved(tmp_path / "m.onnx").read_bytes()
    run = _opspec("infer", "-", "-o", "-", stdin=data)
    assert run.returncode == 0, run.stderr
    _inferred(run.stdout)
    report = run.stderr.decode()
    assert "wrote <stdout>" in report and "<stdin>: 1 node, 3 values; 0 errors" in report
    as_json = _opspec("infer", "-", "-o", "-", "--format", "json", stdin=data)
    _inferred(as_json.stdout)
    assert b'"output": "-"' in as_json.stderr


def test_check_reads_stdin(tmp_path):
    run = _opspec("check", "-", stdin=_saved(tmp_path / "m.onnx").read_bytes())
    assert run.returncode == 0 and run.stdout == b"ok: 1 node conform to their schemas\n", run.stderr
    empty = _opspec("check", "-")
    assert empty.returncode == 2 and empty.stderr.startswith(b"opspec: cannot load model <stdin>: ")


def test_convert_reads_stdin_and_writes_stdout(tmp_path):
    run = _opspec("convert", "-", "-o", "-", "--opset", "13", stdin=_saved(tmp_path / "m.onnx").read_bytes())
    assert run.returncode == 0, run.stderr
    assert [o.version for o in onnx.load_from_string(run.stdout).opset_import] == [13]
    assert run.stderr == b"converted from opset 17 to 13: <stdout>\n"


def test_a_terminal_is_neither_written_a_model_nor_read_as_one(tmp_path):
    if not hasattr(os, "openpty"):
        pytest.skip("no terminals to open on this platform")
    leader, follower = os.openpty()
    command = [sys.executable, "-m", "opspec"]
    try:
        written = subprocess.run([*command, "infer", str(_saved(tmp_path / "m.onnx")), "-o", "-"], stdout=follower,
                                 stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=120)
        read = subprocess.run([*command, "check", "-"], stdin=follower, capture_output=True, timeout=120)
    finally:
        os.close(leader)
        os.close(follower)
    assert written.returncode == 2 and b"standard output, which is a terminal" in written.stderr
    assert read.returncode == 2 and b"standard input, which is a terminal" in read.stderr


def test_a_file_named_dash_is_reached_as_dot_slash_dash(tmp_path):
    _saved(tmp_path / "-")
    run = _opspec("infer", "./-", "-o", "./-", "-q", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    _inferred((tmp_path / "-").read_bytes())


# -- one rule for existing outputs: replaced, in one step --------------------------------------------

@pytest.mark.parametrize("command", [["infer", "-q"], ["convert", "--opset", "13"]])
def test_every_command_replaces_an_existing_output_and_its_own_input(tmp_path, command):
    model, out = _saved(tmp_path / "m.onnx"), tmp_path / "out.onnx"
    out.write_bytes(b"old")
    name, *options = command
    assert main([name, str(model), "-o", str(out), *options]) == 0
    assert onnx.load(str(out)).graph.node[0].op_type == "Add"
    assert main([name, str(model), "-o", str(model), *options]) == 0, "in place"
    onnx.checker.check_model(onnx.load(str(model)))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx", "out.onnx"]


# -- external data ---------------------------------------------------------------------------------

def _external(folder: Path) -> Path:
    folder.mkdir()
    path = folder / "m.onnx"
    onnx.save_model(_model(), str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="weights.bin", size_threshold=0)
    assert (folder / "weights.bin").exists()
    return path


def _runs(path: Path) -> None:
    """The model at ``path`` loads with its data in onnx and runs in onnxruntime."""
    import onnxruntime

    loaded = onnx.load(str(path))  # reads the external data: fails on a dangling reference
    assert numpy_helper.to_array(loaded.graph.initializer[0]).sum() == sum(range(64))
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    x = np.ones((4, 16), dtype=np.float32)
    (y,) = session.run(None, {"x": x})
    assert np.array_equal(y, x + np.arange(64, dtype=np.float32).reshape(4, 16))


def _locations(path: Path) -> list[str]:
    model = onnx.load(str(path), load_external_data=False)
    return [entry.value for tensor in model.graph.initializer for entry in tensor.external_data
            if entry.key == "location"]


@pytest.mark.parametrize("command", [["infer", "-q"], ["convert", "--opset", "13"]])
def test_external_data_is_copied_beside_an_output_in_another_folder(tmp_path, command, capsys):
    model = _external(tmp_path / "a")
    (tmp_path / "b").mkdir()
    out = tmp_path / "b" / "out.onnx"
    name, *options = command
    assert main([name, str(model), "-o", str(out), *options]) == 0
    assert _locations(out) == ["weights.bin"]
    assert (tmp_path / "b" / "weights.bin").read_bytes() == (tmp_path / "a" / "weights.bin").read_bytes()
    _runs(out)
    assert main([name, str(model), "-o", str(out), *options]) == 0, "again: the copy there is the same data"
    capsys.readouterr()


def test_external_data_inside_the_outputs_folder_is_referred_to_not_copied(tmp_path):
    model = _external(tmp_path / "a")
    out = tmp_path / "out.onnx"
    assert main(["infer", str(model), "-o", str(out), "-q"]) == 0
    assert _locations(out) == ["a/weights.bin"] and not (tmp_path / "weights.bin").exists()
    _runs(out)
    assert _locations(model) == ["weights.bin"], "the input is left as it was"


def test_other_data_under_the_same_name_is_never_replaced(tmp_path, capsys):
    model = _external(tmp_path / "a")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "weights.bin").write_bytes(b"another model's weights")
    out = tmp_path / "b" / "out.onnx"
    assert main(["infer", str(model), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds something else" in err and "nothing written" in err
    assert not out.exists() and (tmp_path / "b" / "weights.bin").read_bytes() == b"another model's weights"


def test_external_data_to_a_stream_is_a_warning_not_a_silence_nor_a_copy(tmp_path):
    model = _external(tmp_path / "a")
    run = _opspec("infer", str(model), "-o", "-", "-q")
    assert run.returncode == 0
    assert b"opspec: warning: 1 external data file kept as referenced (weights.bin)" in run.stderr
    link = tmp_path / "null"
    link.symlink_to(os.devnull)
    run = _opspec("infer", str(model), "-o", str(link), "-q")
    assert run.returncode == 0 and b"the model goes to a stream" in run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "null"], "nothing copied beside the device's link"


def test_external_data_of_attributes_and_subgraphs_goes_along_too(tmp_path):
    constant = numpy_helper.from_array(np.full((4, 16), 2, dtype=np.float32), "c")
    branch_weights = numpy_helper.from_array(np.full((4, 16), 3, dtype=np.float32), "b")
    branch = helper.make_graph([helper.make_node("Add", ["y", "b"], ["z"])], "then", [],
                               [helper.make_tensor_value_info("z", F, [4, 16])], [branch_weights])
    nodes = [helper.make_node("Constant", [], ["k"], value=constant), helper.make_node("Mul", ["x", "k"], ["y"]),
             helper.make_node("If", ["flag"], ["out"], then_branch=branch, else_branch=branch)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [4, 16]),
                                           helper.make_tensor_value_info("flag", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("out", F, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    onnx.save_model(model, str(tmp_path / "a" / "m.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="data.bin", size_threshold=0, convert_attribute=True)
    out = tmp_path / "b" / "out.onnx"
    assert main(["infer", str(tmp_path / "a" / "m.onnx"), "-o", str(out), "-q"]) == 0
    import onnxruntime

    onnx.load(str(out))  # every tensor's data is found from the new folder
    session = onnxruntime.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    (result,) = session.run(None, {"x": np.ones((4, 16), dtype=np.float32), "flag": np.array(True)})
    assert np.array_equal(result, np.full((4, 16), 5, dtype=np.float32))


def test_a_reference_the_input_could_not_reach_either_is_written_as_it_is_with_a_warning(tmp_path, capsys):
    model = _model()
    tensor = model.graph.initializer[0]
    tensor.ClearField("raw_data")
    tensor.ClearField("float_data")
    tensor.data_location = TensorProto.EXTERNAL
    tensor.external_data.add(key="location", value="../elsewhere.bin")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "m.onnx").write_bytes(model.SerializeToString())
    assert main(["infer", str(tmp_path / "a" / "m.onnx"), "-o", str(tmp_path / "b" / "out.onnx"), "-q"]) == 0
    err = capsys.readouterr().err
    assert "opspec: warning: external data '../elsewhere.bin' is not a file inside" in err
    assert _locations(tmp_path / "b" / "out.onnx") == ["../elsewhere.bin"]
