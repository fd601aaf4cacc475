"""Compile the IR ``.proto`` into Python protobuf modules for ``generated/``."""
from __future__ import annotations

import importlib
import shutil
import tempfile
from pathlib import Path

__all__ = ["PROTO_FILE", "ProtoCompilerMissing", "ProtoCompileError", "compile_protos"]

#: The IR definition, kept beside the runtime code that uses it.
PROTO_FILE = Path(__file__).resolve().parent.parent / "runtime" / "ir" / "opspec_ir.proto"

# The .proto is compiled as if it lived at this import path, so the generated
# module is named ``opspec.generated.opspec_ir_pb2`` (classes get the right
# ``__module__``, which pickling relies on).
_PACKAGE_DIR = "opspec/generated"


class ProtoCompilerMissing(RuntimeError):
    """Raised when ``grpc_tools`` (the protoc bundle) is not installed."""


class ProtoCompileError(RuntimeError):
    """Raised when protoc rejects the ``.proto`` file."""


def compile_protos(proto: Path | str = PROTO_FILE) -> dict[str, bytes]:
    """Compile ``proto`` and return ``{path relative to generated/: file bytes}``.

    The output depends only on the ``.proto`` text and the protoc version, so
    the same dict can be written to ``generated/`` or compared against it.
    """
    try:
        protoc = importlib.import_module("grpc_tools.protoc")
    except ImportError as exc:
        raise ProtoCompilerMissing(
            "grpc_tools is not installed; install the 'dev' extra (grpcio-tools) to compile protos"
        ) from exc

    proto = Path(proto)
    with tempfile.TemporaryDirectory(prefix="opspec-protoc-") as tmp:
        src_root, out_root = Path(tmp, "src"), Path(tmp, "out")
        staged = src_root / _PACKAGE_DIR / proto.name
        staged.parent.mkdir(parents=True)
        out_root.mkdir()
        shutil.copyfile(proto, staged)
        status = protoc.main(
            [
                "protoc",
                f"--proto_path={src_root}",
                f"--python_out={out_root}",
                f"{_PACKAGE_DIR}/{proto.name}",
            ]
        )
        if status != 0:
            raise ProtoCompileError(f"protoc failed with status {status} on {proto}")
        package_out = out_root / _PACKAGE_DIR
        return {
            path.relative_to(package_out).as_posix(): path.read_bytes()
            for path in sorted(package_out.rglob("*"))
            if path.is_file()
        }
