"""Write the models that the dependency-range checks infer: ONNX's node suite and the test models.

Run in the development environment (it needs onnx): ``python tests/compat/corpus.py DIR``
writes ``DIR/<name>.onnx`` for every node-suite case (``node__<case>``), every exporter-style
model (``exporter__<name>``), every model onnxruntime's tools write (``ort__<n>``: its own
operators), every ML pipeline and the benchmark-shaped models. The files
are then inferred by ``answers.py`` in each environment under test.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the test helper modules

import exporter_models  # noqa: E402
import ml_pipelines  # noqa: E402
import models  # noqa: E402
import onnx  # noqa: E402
import ort_models  # noqa: E402
from conformance.harness import cases  # noqa: E402


def _built() -> dict[str, onnx.ModelProto]:
    found = {
        "exporter__unet": exporter_models.unet(),
        "exporter__unet_pad": exporter_models.unet(align="pad"),
        "exporter__detection_head": exporter_models.detection_head(),
        "exporter__detection_head_min": exporter_models.detection_head(reduce="Min"),
        "exporter__quantized_matmul": exporter_models.quantized_matmul(),
        "exporter__bidirectional_lstm": exporter_models.bidirectional_lstm(with_lengths=True),
        "exporter__rotary_attention": exporter_models.rotary_attention(),
        "exporter__fused_attention": exporter_models.fused_attention(),
        "exporter__fused_attention_4d": exporter_models.fused_attention_4d(),
        "exporter__vit_embedding": exporter_models.vit_embedding(),
        "exporter__interpolate_pyramid": exporter_models.interpolate_pyramid(),
        "pipeline__logistic": ml_pipelines.logistic(),
        "pipeline__onehot_trees": ml_pipelines.onehot_trees(),
        "pipeline__impute_normalize": ml_pipelines.impute_normalize(),
        "model__small_cnn": models.small_cnn(),
        "model__transformer": models.transformer(layers=2),
        "model__chain": models.elementwise_chain(200),
    }
    for number, (build, _, _) in enumerate(ort_models.catalogue().values()):
        found[f"ort__{number:02d}"] = build()
    return found


def write(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    count = 0
    for name, model in _built().items():
        (out / f"{name}.onnx").write_bytes(model.SerializeToString())
        count += 1
    for case in cases():
        (out / f"node__{case.name}.onnx").write_bytes(case.model.SerializeToString())
        count += 1
    return count


if __name__ == "__main__":
    target = Path(sys.argv[1])
    print(f"wrote {write(target)} models to {target}")
