"""One engine on one model file, in a process of its own: ``python infer_worker.py ENGINE PATH CALLS``.

Prints one JSON line: ``cold`` (the first call, rules and schemas loading included),
``warm`` (the best of ``CALLS`` further calls), ``warm_median`` (their median), ``convert`` (what the API call spends
serializing or copying the model around the engine's own work, measured apart, best of 3),
``warm_cpu`` and ``warm_cpu_median`` (the best and the median CPU time of the warm calls) and ``peak_mb`` (the process's peak
resident memory, ``VmHWM``: a count of this program's own pages, where ``getrusage`` would
report the parent's if larger). Times are wall-clock seconds unless named CPU.
"""
from __future__ import annotations

import json
import statistics
import sys
import time
from typing import Any, Callable


def _engine(name: str) -> tuple[Callable[[Any], Any], Callable[[Any], Any] | None]:
    """The call to time, and the model conversion that call includes (None when none is separable)."""
    import onnx

    if name == "opspec":
        import opspec

        def copy(model: Any) -> Any:
            duplicate = type(model)()
            duplicate.CopyFrom(model)
            return duplicate

        return (lambda m: opspec.infer_shapes(m, data_prop=True)), copy
    if name == "onnx":
        import onnx.shape_inference

        return ((lambda m: onnx.shape_inference.infer_shapes(m, data_prop=True)),
                lambda m: onnx.ModelProto.FromString(m.SerializeToString()))
    if name == "onnxruntime":
        from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

        return (lambda m: SymbolicShapeInference.infer_shapes(m, auto_merge=True)), None
    if name == "onnx-shape-inference":
        import onnx_ir
        from onnx_shape_inference import infer_symbolic_shapes

        return (lambda m: infer_symbolic_shapes(onnx_ir.from_proto(m), warn_on_missing=False)), \
            (lambda m: onnx_ir.from_proto(m))
    raise SystemExit(f"unknown engine {name}")


def peak_mb() -> float:
    """This process's peak resident memory in MB (Linux ``/proc/self/status``)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _seconds(call: Callable[[Any], Any], model: Any) -> float:
    return _times(call, model)[0]


def _times(call: Callable[[Any], Any], model: Any) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one call."""
    started, cpu = time.perf_counter(), time.process_time()
    call(model)
    return time.perf_counter() - started, time.process_time() - cpu


def main() -> None:
    import onnx

    name, path, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
    infer, convert = _engine(name)
    model = onnx.load(path, load_external_data=False)
    result: dict[str, Any] = {"cold": _seconds(infer, model)}
    warm = [_times(infer, model) for _ in range(calls)]
    result["warm"] = min([wall for wall, _ in warm], default=result["cold"])
    result["warm_median"] = statistics.median([wall for wall, _ in warm]) if warm else result["cold"]
    result["warm_cpu_median"] = statistics.median([cpu for _, cpu in warm]) if warm else None
    result["warm_cpu"] = min([cpu for _, cpu in warm], default=None)
    result["convert"] = min(_seconds(convert, model) for _ in range(3)) if convert is not None else None
    result["peak_mb"] = peak_mb()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
