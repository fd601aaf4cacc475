"""`opspec import`: drafts that compile and match onnx, batches that survive a bad op, and a
person's writing kept when a file is drafted again."""
from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import onnx.defs
import yaml
from onnx_parity import differences, onnx_schemas

from registries import load_package

from opspec.cli import main
from opspec.codegen import import_batch
from opspec.runtime.onnx_features import OnnxFeatures

REPO = Path(__file__).resolve().parent.parent
#: A few ops of each domain, chosen to use every part of the format.
OPS = {
    "ai.onnx": ["Celu", "GRU", "Tile", "QLinearMatMul", "Upsample", "If", "MeanVarianceNormalization",
                "ReduceLogSumExp", "Optional"],
    "ai.onnx.ml": ["ZipMap", "DictVectorizer", "CastMap", "TreeEnsemble"],
    "ai.onnx.preview": ["FlexAttention"],
    "ai.onnx.preview.training": ["Adam", "Gradient"],
}


def _installed_ops() -> dict[str, list[str]]:
    """:data:`OPS` that the installed onnx defines (an older onnx lacks some ops and domains)."""
    defined = {(s.domain or "ai.onnx", s.name) for s in onnx.defs.get_all_schemas_with_history()}
    chosen = {domain: [op for op in ops if (domain, op) in defined] for domain, ops in OPS.items()}
    return {domain: ops for domain, ops in chosen.items() if ops}


def _tree(tmp_path: Path) -> Path:
    tree = tmp_path / "opdefs"
    tree.mkdir()
    shutil.copy(REPO / "opdefs/types.yaml", tree / "types.yaml")
    return tree


def test_drafts_of_every_domain_compile_and_match_onnx(tmp_path, capsys):
    tree = _tree(tmp_path)
    chosen = _installed_ops()
    for domain, ops in chosen.items():
        assert main(["import", "--ops", ",".join(ops), "--domain", domain, "--out", str(tree / domain)]) == 0
    assert (tree / "ai.onnx.ml/domain.yaml").is_file()
    assert (tree / "ai.onnx.ml/ml/ZipMap.yaml").is_file() and (tree / "ai.onnx/rnn/GRU.yaml").is_file()
    out = tmp_path / "drafted_ops"
    capsys.readouterr()
    assert main(["generate", "--opdefs", str(tree), "--out", str(out)]) == 0
    warnings = capsys.readouterr().err.splitlines()
    assert "ai.onnx.ml/ml/ZipMap.yaml:3:1: warning: summary has a placeholder (TODO)" in "\n".join(warnings)
    assert warnings and all(": warning: " in line for line in warnings)
    registry = load_package(out)
    theirs = onnx_schemas()
    ours = registry.get_all_schemas_with_history()
    assert {(s.domain, s.name) for s in ours} == {(d, n) for d, n, _ in theirs if n in sum(chosen.values(), [])}
    assert [line for s in ours for line in differences(s, theirs[s.domain, s.name, s.since_version])] == []


def test_drafts_use_named_sets_and_quote_map_types(tmp_path):
    tree = _tree(tmp_path)
    main(["import", "--ops", "If,ZipMap", "--out", str(tree / "ai.onnx")])
    main(["import", "--ops", "ZipMap", "--domain", "ai.onnx.ml", "--out", str(tree / "ai.onnx.ml")])
    text = (tree / "ai.onnx/control/If.yaml").read_text()
    assert re.search(r"\ball_optional_types_ir\d+\b", text) and "optional(seq(tensor(" not in text
    zipmap = yaml.safe_load((tree / "ai.onnx.ml/ml/ZipMap.yaml").read_text())
    assert zipmap["versions"][1]["types"]["T"] == ["seq(map(string, float))", "seq(map(int64, float))"]


def test_a_bad_op_is_named_and_the_batch_goes_on(tmp_path, capsys):
    tree = _tree(tmp_path)
    code = main(["import", "--ops", "Celu,NoSuchOp,Elu", "--out", str(tree / "ai.onnx")])
    captured = capsys.readouterr()
    assert code == 1
    assert "NoSuchOp" in captured.err and "2 drafted, 0 kept, 1 failed" in captured.out
    assert {p.name for p in (tree / "ai.onnx").rglob("*.yaml")} == {"domain.yaml", "Celu.yaml", "Elu.yaml"}


def test_an_unknown_domain_is_one_line_and_writes_nothing(tmp_path, capsys):
    tree = _tree(tmp_path)
    assert main(["import", "--ops", "Relu", "--domain", "com.nowhere", "--out", str(tree / "com.nowhere")]) == 2
    assert capsys.readouterr().err == "opspec: onnx.defs has no domain 'com.nowhere'\n"
    assert not (tree / "com.nowhere").exists()


def test_existing_files_are_kept_and_a_forced_draft_keeps_what_a_person_wrote(tmp_path, capsys):
    tree = _tree(tmp_path)
    main(["import", "--ops", "Elu", "--out", str(tree / "ai.onnx"), "--family", "activation"])
    path = tree / "ai.onnx/activation/Elu.yaml"
    written = path.read_text().replace("summary: TODO", "summary: Smooth exponential unit.").replace(
        "  X: TODO", "  X: The input.")
    assert "    inference: elementwise\n" in written  # the built-in set's rule for Elu
    written = written.replace("    inference: elementwise\n", "", 1).replace(
        "  6:\n", '  6:\n    inference: elementwise\n    cost: {kind: transcendental, flops: "2 * numel(X)"}\n', 1)
    path.write_text(written)
    assert main(["import", "--ops", "Elu", "--out", str(tree / "ai.onnx")]) == 0
    assert "kept" in capsys.readouterr().out and path.read_text() == written
    path.write_text(written.replace("summary: Smooth", "summary: Smoothed"))
    assert main(["import", "--ops", "Elu", "--out", str(tree / "ai.onnx"), "--force"]) == 0
    again = yaml.safe_load(path.read_text())
    assert again["summary"] == "Smoothed exponential unit."
    assert again["docs"]["X"] == "The input."
    assert again["versions"][6]["inference"] == "elementwise"
    assert again["versions"][6]["cost"] == {"kind": "transcendental", "flops": "2 * numel(X)"}
    assert "inference" not in again["versions"][1]


def test_every_draft_states_its_rule_or_says_it_has_none(tmp_path, capsys):
    tree = tmp_path / "opdefs"
    assert main(["import", "--ops", "Gradient,Adam", "--domain", "ai.onnx.preview.training",
                 "--out", str(tree / "ai.onnx.preview.training")]) == 0
    err = capsys.readouterr().err
    assert "warning: no known inference rule for Gradient: drafted with `inference: null`" in err
    gradient = yaml.safe_load((tree / "ai.onnx.preview.training/training/Gradient.yaml").read_text())
    assert "inference" in gradient["versions"][1] and gradient["versions"][1]["inference"] is None
    adam = yaml.safe_load((tree / "ai.onnx.preview.training/training/Adam.yaml").read_text())
    assert adam["versions"][1]["inference"] == {"rule": "optimizer", "input_groups": 4, "output_groups": "0,2,3"}


def test_draft_modelines_name_schemas_that_exist(tmp_path):
    tree = tmp_path / "opdefs"
    assert main(["import", "--ops", "Celu", "--out", str(tree / "ai.onnx")]) == 0
    for path, kind in ((tree / "ai.onnx/domain.yaml", "domain"), (tree / "ai.onnx/math/Celu.yaml", "op")):
        first = path.read_text().splitlines()[0]
        assert first.startswith("# yaml-language-server: $schema=") and first.endswith(f"/{kind}.schema.json")
        assert (path.parent / first.partition("$schema=")[2]).resolve().is_file()


class _WithoutDeterminism:
    """An onnx schema as onnx before 1.20 shows it: no ``node_determinism``."""

    def __init__(self, schema):
        self._schema = schema

    def __getattr__(self, name):
        if name == "node_determinism":
            raise AttributeError(name)
        return getattr(self._schema, name)


def test_an_onnx_that_does_not_record_determinism_gives_drafts_that_say_unknown(tmp_path, capsys, monkeypatch):
    schemas = onnx.defs.get_all_schemas_with_history()
    monkeypatch.setattr(onnx.defs, "get_all_schemas_with_history", lambda: [_WithoutDeterminism(s) for s in schemas])
    monkeypatch.setattr(import_batch, "onnx_features", lambda: OnnxFeatures("1.17.0", node_determinism=False))
    tree = _tree(tmp_path)
    assert main(["import", "--ops", "RandomNormal,Relu", "--out", str(tree / "ai.onnx")]) == 0
    err = capsys.readouterr().err
    assert "opspec: note: onnx 1.17.0 does not record whether an op is deterministic" in err
    for path in (tree / "ai.onnx/generator/RandomNormal.yaml", tree / "ai.onnx/math/Relu.yaml"):
        first = next(iter(yaml.safe_load(path.read_text())["versions"].values()))
        assert first["determinism"] == "unknown", path  # never a guess: RandomNormal is not deterministic
    assert main(["generate", "--opdefs", str(tree), "--out", str(tmp_path / "drafted_ops")]) == 0


def test_import_without_onnx_says_what_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)  # what an environment without onnx gives an import
    assert main(["import", "--ops", "Relu", "--out", str(tmp_path / "ai.onnx")]) == 2
    assert capsys.readouterr().err == ("opspec: `opspec import` reads onnx.defs: this needs the onnx package: "
                                       "pip install 'onnx>=1.17'\n")
    assert not (tmp_path / "ai.onnx").exists()
