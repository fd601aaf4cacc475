"""The real-model benchmark set: models exported by the tools people use, made reproducibly here.

``python benchmarks/real_set.py OUT [--only SUBSTRING ...] [--list]`` writes each model of the set
into ``OUT`` (skipping those already there) and ``OUT/manifest.json``: per model its name, family,
the tool and the recipe that made it, node count, file size, and the versions of the tools.

Nothing is downloaded: transformers models are built from a configuration with random weights
(``torch.manual_seed(0)``), at a tiny size and at realistic layer counts, and exported both by
torch's TorchScript exporter and by its dynamo exporter; scikit-learn, LightGBM and XGBoost models
are trained on seeded random data and converted by skl2onnx and onnxmltools; onnxruntime's
transformer optimizer, float16 converter and dynamic quantizer, and onnxslim, rewrite some of them
as users do. Every tool is a benchmark-only dependency (the ``bench`` extra); a recipe whose tool is
missing or fails is recorded in the manifest with its error, and the rest of the set is still made.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

#: How each transformers architecture is built: (model class, configuration overrides, input kind).
#: Hidden sizes are small so that a realistic layer count stays a few tens of MB of weights.
ENCODER = {"hidden_size": 128, "intermediate_size": 512, "num_attention_heads": 4, "vocab_size": 1000,
           "max_position_embeddings": 256}
DECODER = {"hidden_size": 128, "intermediate_size": 384, "num_attention_heads": 4, "num_key_value_heads": 2,
           "vocab_size": 1000, "max_position_embeddings": 256}
ARCHITECTURES: dict[str, tuple[str, dict[str, Any], str]] = {
    "bert": ("BertModel", ENCODER, "tokens"),
    "distilbert": ("DistilBertModel", {"dim": 128, "hidden_dim": 512, "n_heads": 4, "vocab_size": 1000,
                                       "max_position_embeddings": 256}, "tokens"),
    "albert": ("AlbertModel", {**ENCODER, "embedding_size": 64}, "tokens"),
    "roberta": ("RobertaModel", ENCODER, "tokens"),
    "deberta-v2": ("DebertaV2Model", ENCODER, "tokens"),
    "t5": ("T5EncoderModel", {"d_model": 128, "d_ff": 512, "num_heads": 4, "d_kv": 32, "vocab_size": 1000},
           "tokens"),
    "gpt2": ("GPT2Model", {"n_embd": 128, "n_head": 4, "vocab_size": 1000, "n_positions": 256}, "tokens"),
    "qwen2": ("Qwen2ForCausalLM", DECODER, "tokens"),
    "mistral": ("MistralForCausalLM", DECODER, "tokens"),
    "llama": ("LlamaForCausalLM", DECODER, "tokens"),
    "phi3": ("Phi3ForCausalLM", {**DECODER, "pad_token_id": 0}, "tokens"),
    "mixtral": ("MixtralForCausalLM", {**DECODER, "num_local_experts": 4, "num_experts_per_tok": 2}, "tokens"),
    "whisper-encoder": ("WhisperEncoderWrapper", {"d_model": 128, "encoder_ffn_dim": 512, "decoder_ffn_dim": 512,
                                                  "encoder_attention_heads": 4, "decoder_attention_heads": 4,
                                                  "num_mel_bins": 80, "max_source_positions": 64}, "mel"),
    "wav2vec2": ("Wav2Vec2Model", {**ENCODER, "conv_dim": [32, 32], "conv_kernel": [10, 3],
                                   "conv_stride": [5, 2], "num_feat_extract_layers": 2,
                                   "num_conv_pos_embeddings": 16, "num_conv_pos_embedding_groups": 4}, "audio"),
    "vit": ("ViTModel", {**ENCODER, "image_size": 64, "patch_size": 16}, "image"),
    "swin": ("SwinModel", {"embed_dim": 32, "depths": [2, 2], "num_heads": [2, 4], "image_size": 64,
                           "patch_size": 4, "window_size": 4}, "image"),
    "convnext": ("ConvNextModel", {"hidden_sizes": [32, 64], "depths": [2, 2], "num_stages": 2}, "image"),
    "clip-vision": ("CLIPVisionModel", {**ENCODER, "image_size": 64, "patch_size": 16}, "image"),
    "yolos": ("YolosModel", {**ENCODER, "image_size": [64, 64], "patch_size": 16, "num_detection_tokens": 10},
              "image"),
    "mamba": ("MambaModel", {"hidden_size": 64, "state_size": 8, "vocab_size": 1000}, "tokens"),
}
#: Layer counts: tiny, and as deployed models have them (the layer count's key differs by architecture).
LAYER_KEYS = {"distilbert": "n_layers", "t5": "num_layers", "gpt2": "n_layer", "whisper-encoder": "encoder_layers",
              "swin": None, "convnext": None}
SIZES = {"tiny": 2, "12L": 12}
DEEP = {"bert": 24, "llama": 32}  # a few at the larger counts people deploy


@dataclass(frozen=True)
class Recipe:
    """One model of the set: a name, what it is, and how to make it into a path."""

    name: str
    family: str
    tool: str
    make: Callable[[Path], None]
    needs: tuple[str, ...] = ()


@dataclass
class Entry:
    """What the manifest says of one recipe's outcome."""

    name: str
    family: str
    tool: str
    file: str | None = None
    nodes: int | None = None
    megabytes: float | None = None
    seconds: float | None = None
    error: str | None = None
    made_from: str | None = None
    ops: dict[str, int] = field(default_factory=dict)


# ------------------------------------------------------------------------------------------ torch models

def _config(arch: str, layers: int | None) -> Any:
    import transformers

    model_class, overrides, _ = ARCHITECTURES[arch]
    kind = {"whisper-encoder": "whisper", "clip-vision": "clip_vision_model"}.get(arch, arch)
    config = transformers.AutoConfig.for_model(kind, **overrides)
    key = LAYER_KEYS.get(arch, "num_hidden_layers")
    if layers is not None and key is not None:
        setattr(config, key, layers)
    if arch == "swin" and layers is not None and layers > 2:  # three stages: a 64-pixel image has room for no more
        config.depths = [2, 2, max(layers - 4, 2)]
        config.num_heads = [2, 4, 8]
        config.num_layers = len(config.depths)
    if arch == "convnext" and layers is not None and layers > 2:
        config.depths = [2, 2, layers - 4 if layers > 4 else 2, 2]
        config.hidden_sizes = [32, 64, 128, 256]
        config.num_stages = 4
    config.use_cache = False
    return config


def _module(arch: str, layers: int | None) -> tuple[Any, tuple[Any, ...], list[str], dict[str, dict[int, str]]]:
    """The torch module, example inputs, input names and dynamic axes of one architecture."""
    import torch
    import transformers

    torch.manual_seed(0)
    model_class, _, kind = ARCHITECTURES[arch]
    config = _config(arch, layers)
    if arch == "whisper-encoder":
        inner = transformers.WhisperModel(config).get_encoder()
    else:
        inner = getattr(transformers, model_class)(config)
    inner.eval()

    class Plain(torch.nn.Module):
        """The model called with its inputs by name, giving its first output as a plain tensor."""

        def __init__(self, names: list[str]) -> None:
            super().__init__()
            self.inner = inner
            self.names = names

        def forward(self, *args: Any) -> Any:
            out = self.inner(**dict(zip(self.names, args)), return_dict=False)
            return out[0] if isinstance(out, tuple) else out

    if kind == "tokens":
        ids = torch.randint(0, 1000, (2, 16))
        if arch in ("mamba",):
            return Plain(["input_ids"]), (ids,), ["input_ids"], {"input_ids": {0: "batch", 1: "sequence"}}
        mask = torch.ones(2, 16, dtype=torch.int64)
        names = ["input_ids", "attention_mask"]
        return Plain(names), (ids, mask), names, \
            {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"}}
    if kind == "mel":
        return Plain(["input_features"]), (torch.randn(1, 80, 128),), ["input_features"], \
            {"input_features": {0: "batch"}}
    if kind == "audio":
        return Plain(["input_values"]), (torch.randn(2, 4000),), ["input_values"], \
            {"input_values": {0: "batch", 1: "samples"}}
    return Plain(["pixel_values"]), (torch.randn(2, 3, 64, 64),), ["pixel_values"], {"pixel_values": {0: "batch"}}


def _export(arch: str, layers: int | None, dynamo: bool) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        import torch

        module, args, names, axes = _module(arch, layers)
        with torch.no_grad():
            if dynamo:
                shapes = {"args": tuple({axis: torch.export.Dim.AUTO for axis in axes[name]} for name in names)}
                program = torch.onnx.export(module, args, dynamo=True, input_names=names, dynamic_shapes=shapes,
                                            optimize=True)
                program.save(str(path))
            else:
                torch.onnx.export(module, args, str(path), input_names=names, output_names=["output"],
                                  dynamic_axes=axes, opset_version=17, dynamo=False)
    return make


# ------------------------------------------------------------------------------------------ rewrites

def _rewrite(source: str, how: str) -> Callable[[Path, Path], None]:
    """A rewrite of another model of the set by one of the tools users run on exported models."""
    def make(source_path: Path, path: Path) -> None:
        import onnx

        if how == "onnxslim":
            import onnxslim

            onnx.save(onnxslim.slim(onnx.load(str(source_path))), str(path))
        elif how == "float16":
            from onnxruntime.transformers.float16 import convert_float_to_float16

            onnx.save(convert_float_to_float16(onnx.load(str(source_path)), keep_io_types=True), str(path))
        elif how == "quantized":
            from onnxruntime.quantization import QuantType, quantize_dynamic

            quantize_dynamic(str(source_path), str(path), weight_type=QuantType.QInt8)
        elif how.startswith("optimized-"):
            from onnxruntime.transformers.optimizer import optimize_model

            model_type = how.split("-", 1)[1]
            optimized = optimize_model(str(source_path), model_type=model_type, num_heads=4, hidden_size=128,
                                       opt_level=1 if model_type != "gpt2" else 0)
            optimized.save_model_to_file(str(path))
        else:
            raise ValueError(how)
    return make


# ------------------------------------------------------------------------------------------ classic ML

def _tabular(seed: int = 0, features: int = 8, classes: int = 3) -> tuple[Any, Any]:
    import numpy as np

    rng = np.random.default_rng(seed)
    x = rng.normal(size=(200, features)).astype("float32")
    y = (x[:, 0] + x[:, 1] * 2 > 0).astype(int) + (x[:, 2] > 1).astype(int) * (classes - 2)
    return x, y


def _sklearn(kind: str) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        from skl2onnx import to_onnx
        from sklearn import decomposition, ensemble, linear_model, neighbors, pipeline, preprocessing, svm, tree

        x, y = _tabular()
        estimators: dict[str, Any] = {
            "scaler": preprocessing.StandardScaler(),
            "logistic": pipeline.make_pipeline(preprocessing.StandardScaler(), linear_model.LogisticRegression()),
            "svm": svm.SVC(probability=True, random_state=0),
            "random-forest": ensemble.RandomForestClassifier(n_estimators=20, max_depth=6, random_state=0),
            "gradient-boosting": ensemble.GradientBoostingRegressor(n_estimators=30, random_state=0),
            "pca-knn": pipeline.make_pipeline(decomposition.PCA(4), neighbors.KNeighborsClassifier(3)),
            "decision-tree": tree.DecisionTreeClassifier(max_depth=5, random_state=0),
            "mlp": pipeline.make_pipeline(preprocessing.MinMaxScaler(),
                                          __import__("sklearn.neural_network", fromlist=["x"]).MLPClassifier(
                                              (16, 16), max_iter=50, random_state=0)),
        }
        estimator = estimators[kind]
        estimator.fit(x, y if kind != "scaler" else None)
        onx = to_onnx(estimator, x[:1], target_opset={"": 17, "ai.onnx.ml": 3})
        path.write_bytes(onx.SerializeToString())
    return make


def _text_pipeline(path: Path) -> None:
    from skl2onnx import to_onnx
    from skl2onnx.common.data_types import StringTensorType
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    texts = ["the cat sat", "a dog ran", "the dog sat down", "cats and dogs", "a cat ran away", "dogs sat"] * 5
    labels = [0, 1, 1, 0, 0, 1] * 5
    model = make_pipeline(TfidfVectorizer(), LogisticRegression()).fit(texts, labels)
    onx = to_onnx(model, initial_types=[("text", StringTensorType([None, 1]))], target_opset={"": 17, "ai.onnx.ml": 3},
                  options={id(model.steps[-1][1]): {"zipmap": False}})
    path.write_bytes(onx.SerializeToString())


def _boosted(kind: str) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        from onnxmltools import convert_lightgbm, convert_xgboost
        from onnxmltools.convert.common.data_types import FloatTensorType

        x, y = _tabular()
        types = [("input", FloatTensorType([None, x.shape[1]]))]
        if kind == "lightgbm":
            import lightgbm

            model = lightgbm.LGBMClassifier(n_estimators=30, num_leaves=15, random_state=0, verbose=-1).fit(x, y)
            onx = convert_lightgbm(model, initial_types=types, target_opset=15, zipmap=False)
        else:
            import xgboost

            model = xgboost.XGBClassifier(n_estimators=30, max_depth=4, random_state=0).fit(x, y)
            onx = convert_xgboost(model, initial_types=types, target_opset=15)
        path.write_bytes(onx.SerializeToString())
    return make


# ------------------------------------------------------------------------------------------ the set

def recipes() -> list[Recipe]:
    """Every model of the set, in the order they are made (sources before their rewrites)."""
    made: list[Recipe] = []
    for arch in ARCHITECTURES:
        sizes = dict(SIZES)
        if arch in DEEP:
            sizes[f"{DEEP[arch]}L"] = DEEP[arch]
        for size, layers in sizes.items():
            for dynamo in (False, True):
                tool = "torch.onnx dynamo" if dynamo else "torch.onnx TorchScript"
                suffix = "dynamo" if dynamo else "torchscript"
                made.append(Recipe(f"{arch}-{size}-{suffix}", arch, tool, _export(arch, layers, dynamo),
                                   ("torch", "transformers")))
    for kind in ("scaler", "logistic", "svm", "random-forest", "gradient-boosting", "pca-knn", "decision-tree",
                 "mlp"):
        made.append(Recipe(f"sklearn-{kind}", "scikit-learn", "skl2onnx", _sklearn(kind), ("sklearn", "skl2onnx")))
    made.append(Recipe("sklearn-tfidf-logistic", "scikit-learn", "skl2onnx", _text_pipeline, ("sklearn", "skl2onnx")))
    for kind in ("lightgbm", "xgboost"):
        made.append(Recipe(kind, kind, "onnxmltools", _boosted(kind), (kind, "onnxmltools")))
    return made


#: Rewrites: (source model, how) -> the tool's name.
REWRITES: dict[tuple[str, str], str] = {
    ("bert-12L-torchscript", "optimized-bert"): "onnxruntime transformer optimizer",
    ("gpt2-12L-torchscript", "optimized-gpt2"): "onnxruntime transformer optimizer",
    ("bert-12L-torchscript", "quantized"): "onnxruntime dynamic quantizer",
    ("llama-12L-torchscript", "quantized"): "onnxruntime dynamic quantizer",
    ("vit-12L-torchscript", "quantized"): "onnxruntime dynamic quantizer",
    ("qwen2-12L-torchscript", "float16"): "onnxruntime float16 converter",
    ("whisper-encoder-12L-torchscript", "float16"): "onnxruntime float16 converter",
    ("bert-12L-torchscript", "float16"): "onnxruntime float16 converter",
    ("mistral-12L-dynamo", "onnxslim"): "onnxslim",
    ("deberta-v2-12L-torchscript", "onnxslim"): "onnxslim",
    ("t5-12L-torchscript", "onnxslim"): "onnxslim",
    ("swin-12L-torchscript", "onnxslim"): "onnxslim",
}


def _describe(path: Path) -> tuple[int, dict[str, int]]:
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    ops: dict[str, int] = {}
    for node in model.graph.node:
        ops[node.op_type] = ops.get(node.op_type, 0) + 1
    return len(model.graph.node), dict(sorted(ops.items()))


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in ("torch", "transformers", "onnx", "onnxruntime", "onnxscript", "onnxslim", "scikit-learn", "skl2onnx",
                 "onnxmltools", "lightgbm", "xgboost-cpu"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "missing"
    return found


def _made(path: Path, entry: Entry, make: Callable[[], None]) -> None:
    started = time.perf_counter()
    if not path.exists():
        partial = path.with_suffix(".partial")
        try:
            make()
        except Exception as error:  # noqa: BLE001 - a tool's failure is recorded, the set goes on
            entry.error = f"{type(error).__name__}: {str(error).splitlines()[0][:300] if str(error) else ''}"
            traceback.print_exc(limit=3, file=sys.stderr)
            for leftover in (path, partial, path.with_suffix(".onnx.data")):
                leftover.unlink(missing_ok=True)
            return
    entry.seconds = round(time.perf_counter() - started, 2)
    entry.file = path.name
    entry.megabytes = round(sum(p.stat().st_size for p in path.parent.glob(path.name + "*")) / 1e6, 3)
    entry.nodes, entry.ops = _describe(path)


def build(out: Path, only: list[str]) -> list[Entry]:
    """Make every model of the set that is not in ``out`` yet, and write the manifest."""
    out.mkdir(parents=True, exist_ok=True)
    entries: list[Entry] = []
    chosen = [r for r in recipes() if not only or any(o in r.name for o in only)]
    for recipe in chosen:
        entry = Entry(recipe.name, recipe.family, recipe.tool)
        path = out / f"{recipe.name}.onnx"
        print(f"{recipe.name} ...", file=sys.stderr, flush=True)
        _made(path, entry, lambda: recipe.make(path))
        entries.append(entry)
    by_name = {e.name: e for e in entries}
    for (source, how), tool in REWRITES.items():
        if only and not any(o in source or o in how for o in only):
            continue
        name = f"{source}-{how}"
        source_entry = by_name.get(source)
        entry = Entry(name, source_entry.family if source_entry else source.split("-")[0], tool, made_from=source)
        path = out / f"{name}.onnx"
        if source_entry is None or source_entry.file is None:
            entry.error = f"its source {source} was not made"
        else:
            print(f"{name} ...", file=sys.stderr, flush=True)
            _made(path, entry, lambda: _rewrite(source, how)(out / f"{source}.onnx", path))
        entries.append(entry)
    manifest_path = out / "manifest.json"
    kept: dict[str, dict[str, Any]] = {}
    if manifest_path.exists():  # entries of models not made again this time stay as they were
        kept = {m["name"]: m for m in json.loads(manifest_path.read_text(encoding="utf-8"))["models"]}
    kept.update({e.name: vars(e) for e in entries})
    order = [r.name for r in recipes()] + [f"{source}-{how}" for source, how in REWRITES]
    manifest = {"versions": _versions(), "models": [kept[name] for name in order if name in kept]}
    manifest_path.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return entries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--only", nargs="*", default=[], help="make only recipes whose name contains one of these")
    parser.add_argument("--list", action="store_true", help="list the recipes and stop")
    args = parser.parse_args()
    if args.list:
        for recipe in recipes():
            print(recipe.name, recipe.tool, sep="\t")
        for (source, how), tool in REWRITES.items():
            print(f"{source}-{how}", tool, sep="\t")
        return
    entries = build(args.out, args.only)
    made = [e for e in entries if e.error is None]
    print(f"{len(made)} of {len(entries)} models made in {args.out}", file=sys.stderr)
    for entry in entries:
        if entry.error:
            print(f"  failed: {entry.name}: {entry.error}", file=sys.stderr)


if __name__ == "__main__":
    main()
