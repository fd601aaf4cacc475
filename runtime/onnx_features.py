"""What the installed onnx offers the parts of opspec that use it (the bridge, ``opspec import``).

Each capability is detected on the onnx that is installed, not inferred from its version
number; the code that uses one says what follows when it is missing. Only the minimum is
a version: the oldest onnx these parts are tested with (``make compat DEPS=onnx-1.17``).
"""
from __future__ import annotations

import importlib
import re
from dataclasses import dataclass

#: The oldest onnx release the bridge and the importer are tested with.
MINIMUM_ONNX = (1, 17)


class OnnxUnavailable(RuntimeError):
    """onnx is not installed, or is older than :data:`MINIMUM_ONNX`."""


@dataclass(frozen=True)
class OnnxFeatures:
    """The capabilities of one onnx installation that opspec uses."""

    version: str
    #: ``onnx.defs.OpSchema`` records node determinism (``OpSchema.NodeDeterminism``).
    node_determinism: bool = True
    #: A Python function can be attached to a schema as its type and shape inference.
    python_inference: bool = True


def release(version: str) -> tuple[int, int]:
    """``(major, minor)`` of a version string such as ``1.17.0`` or ``1.20.0rc1``."""
    match = re.match(r"(\d+)\.(\d+)", version)
    if match is None:
        raise OnnxUnavailable(f"cannot read onnx's version {version!r}")
    return int(match.group(1)), int(match.group(2))


def require_minimum(version: str) -> None:
    """Raise :class:`OnnxUnavailable` when ``version`` is older than :data:`MINIMUM_ONNX`."""
    if release(version) < MINIMUM_ONNX:
        floor = ".".join(map(str, MINIMUM_ONNX))
        raise OnnxUnavailable(f"onnx {version} is older than {floor}, the oldest onnx opspec is tested with: "
                              f"pip install 'onnx>={floor}'")


def onnx_features() -> OnnxFeatures:
    """The installed onnx's capabilities; :class:`OnnxUnavailable` when it is missing or too old."""
    try:
        onnx = importlib.import_module("onnx")
        defs = importlib.import_module("onnx.defs")
    except ImportError:
        floor = ".".join(map(str, MINIMUM_ONNX))
        raise OnnxUnavailable(f"this needs the onnx package: pip install 'onnx>={floor}'") from None
    version = str(getattr(onnx, "__version__", "0.0"))
    require_minimum(version)
    schema = defs.OpSchema
    return OnnxFeatures(version=version, node_determinism=hasattr(schema, "NodeDeterminism"),
                        python_inference=hasattr(schema, "set_type_and_shape_inference_function"))
