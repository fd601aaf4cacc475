"""``opspec check`` held against ``onnx.checker.check_model(full_check=True)`` on models
malformed by the field-descriptor generator (``ir_field_mutations``), made from the node
suite's models and from exported models: no model onnx rejects is accepted (except onnx's
listed overstrict cases), the check never raises, and every problem found in a model onnx
accepts is one of the listed kinds onnx's checker lets pass (``ONNX_LAX``).

``OPSPEC_FUZZ_SEED`` sets the seed and ``OPSPEC_FUZZ_IR_CASES`` the number of models;
``python tests/test_fuzz_ir_fields.py [seed] [count]`` prints the tally of a larger run.
"""
from __future__ import annotations

import os
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import pytest

onnx = pytest.importorskip("onnx")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ir_field_mutations import mutated_models  # noqa: E402
from opspec.runtime.checker import check_model  # noqa: E402
from opspec.runtime.checker.onnx_differences import excused, lax_kind  # noqa: E402
from opspec.runtime.ir import ModelLoadError, load_model  # noqa: E402

SEED = int(os.environ.get("OPSPEC_FUZZ_SEED", "32032"))
CASES = int(os.environ.get("OPSPEC_FUZZ_IR_CASES", "600"))


@lru_cache(maxsize=1)
def seed_models() -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """The node suite's models, and exported models (their graph outputs typed by onnx's
    inference, as exporters that run it leave them): both pass onnx's full check."""
    import exporter_models
    import models
    from conformance.harness import cases

    builders = (exporter_models.detection_head, exporter_models.quantized_matmul, exporter_models.bidirectional_lstm,
                exporter_models.unet, exporter_models.rotary_attention, exporter_models.vit_embedding,
                exporter_models.interpolate_pyramid, models.small_cnn, models.transformer)
    exported = tuple(onnx.shape_inference.infer_shapes(build()) for build in builders)
    return tuple(case.model for case in cases()), exported


def onnx_verdict(model: Any) -> str:
    """The first line of onnx's full check's refusal, or "" when it accepts."""
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as error:  # noqa: BLE001 - onnx's ValidationError, InferenceError and others
        return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return ""


def opspec_problems(data: bytes) -> list[Any]:
    """The problems ``opspec check`` finds in a model file's bytes (one when it cannot be read)."""
    try:
        return list(check_model(load_model(data).model).problems)
    except ModelLoadError as error:
        return [f"cannot be read: {error}"]


@dataclass
class Tally:
    """What a run found, per model."""

    models: int = 0
    onnx_rejects: int = 0
    missed: list[str] = field(default_factory=list)
    internal: list[str] = field(default_factory=list)
    undocumented: list[str] = field(default_factory=list)
    extra: Counter[str] = field(default_factory=Counter)
    excused: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0


def run(seed: int, count: int) -> Tally:
    tally = Tally()
    pools = seed_models()
    start = time.perf_counter()
    for case, model, mutations in mutated_models(seed, count, pools):
        try:
            data = model.SerializeToString()
        except Exception:  # noqa: BLE001 - a value protobuf cannot write: no file holds it
            continue
        tally.models += 1
        label = f"case {case} ({model.graph.name}): {'; '.join(map(str, mutations))}"
        verdict = onnx_verdict(data)
        try:
            problems = opspec_problems(data)
        except Exception as error:  # noqa: BLE001 - what the test exists to catch
            tally.internal.append(f"{label}: {type(error).__name__}: {error}"[:400])
            continue
        tally.onnx_rejects += bool(verdict)
        bugs = [problem for problem in problems if "inference failed (" in str(problem)]
        if bugs:
            tally.internal.append(f"{label}: {bugs[0]}"[:400])
        if verdict and not problems:
            case_excused = excused(verdict)
            if case_excused is None:
                tally.missed.append(f"{label}: onnx: {verdict}"[:400])
            else:
                tally.excused[case_excused.name] += 1
        elif problems and not verdict:
            for problem in problems:
                kind = lax_kind(problem) if not isinstance(problem, str) else None
                if kind is None:
                    tally.undocumented.append(f"{label}: {problem}"[:400])
                else:
                    tally.extra[kind.name] += 1
    tally.seconds = time.perf_counter() - start
    return tally


def test_field_mutations_are_judged_as_onnx_judges_them():
    tally = run(SEED, CASES)
    assert tally.onnx_rejects > tally.models // 4  # the generator makes models onnx rejects
    assert tally.internal == []
    assert tally.missed == []
    assert tally.undocumented == []


def test_the_generator_reaches_every_message_of_the_ir():
    from ir_field_mutations import sites

    import models

    model = models.small_cnn()
    reached = {site.owner.DESCRIPTOR.full_name for site in sites(model)}
    assert {"onnx.ModelProto", "onnx.GraphProto", "onnx.NodeProto", "onnx.ValueInfoProto", "onnx.TypeProto",
            "onnx.TensorShapeProto.Dimension", "onnx.OperatorSetIdProto"} <= reached


def main(argv: list[str]) -> None:
    seed = int(argv[0]) if argv else SEED
    count = int(argv[1]) if len(argv) > 1 else CASES
    tally = run(seed, count)
    print(f"seed {seed}: {tally.models} models, {tally.onnx_rejects} rejected by onnx, "
          f"{len(tally.missed)} missed, {len(tally.internal)} internal errors, "
          f"{len(tally.undocumented)} undocumented extra findings, {tally.models / tally.seconds:.1f} models/s")
    print("extra findings by kind:", dict(tally.extra))
    print("onnx overstrict, excused:", dict(tally.excused))
    for line in (*tally.missed, *tally.internal, *tally.undocumented):
        print(" ", line)


if __name__ == "__main__":
    main(sys.argv[1:])
