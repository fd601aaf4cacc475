"""Truth for the runtime benchmark: does onnxruntime's CPU provider load a case and run it once?

Reads case folders (``model.onnx``, ``inputs.pkl``) one a line on stdin and answers each with
one JSON line on stdout. A crash ends the process; the caller counts the case as failing."""
from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path


def _feed(value, elem_type, onnxruntime):
    """An input as onnxruntime takes it: arrays of types numpy lacks (bfloat16, float8) go in as
    OrtValues of their bits."""
    import numpy

    if value.dtype.num < 256:  # numpy's own types (ml_dtypes registers the others)
        return value
    bits = numpy.uint16 if value.dtype.itemsize == 2 else numpy.uint8
    return onnxruntime.OrtValue.ortvalue_from_numpy_with_onnx_type(value.view(bits), elem_type)


def truth(folder: Path, onnxruntime) -> tuple[bool, str]:
    try:
        session = onnxruntime.InferenceSession(str(folder / "model.onnx"), providers=["CPUExecutionProvider"])
    except Exception as error:  # noqa: BLE001
        return False, f"load: {str(error)[:300]}"
    inputs = pickle.loads((folder / "inputs.pkl").read_bytes()) if (folder / "inputs.pkl").exists() else None
    if inputs is None:
        return True, "loaded (no inputs to run)"
    try:
        feeds = {name: _feed(value, elem, onnxruntime) for name, (value, elem) in inputs.items()}
        if any(isinstance(value, onnxruntime.OrtValue) for value in feeds.values()):
            values = {name: value if isinstance(value, onnxruntime.OrtValue)
                      else onnxruntime.OrtValue.ortvalue_from_numpy(value) for name, value in feeds.items()}
            session.run_with_ort_values(None, values)
        else:
            session.run(None, feeds)
    except Exception as error:  # noqa: BLE001
        return False, f"run: {str(error)[:300]}"
    return True, ""


def main() -> None:
    import onnxruntime

    onnxruntime.set_default_logger_severity(4)
    for line in sys.stdin:
        folder = Path(line.strip())
        ok, why = truth(folder, onnxruntime)
        sys.stdout.write(json.dumps({"case": folder.name, "ok": ok, "why": why}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
