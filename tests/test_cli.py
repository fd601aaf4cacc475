"""The compiler's command line: generate, show, import."""
from __future__ import annotations

import shutil
import subprocess
import sys

import onnx.defs
from onnx_parity import differences

from opspec.cli import main
from opspec.codegen.compiler import compile_tree
from opspec.codegen.generate import REPO


def test_generate_prints_a_summary(tmp_path, capsys):
    assert main(["generate", "--opdefs", str(REPO / "opdefs"), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "ai.onnx" in out and "60 ops" in out and "265 schemas" in out
    assert "generated 1 domain, 60 ops, 265 schemas in" in out


def test_show_prints_a_readable_schema(capsys):
    assert main(["show", "Clip", "--version", "10"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Clip version 6 (domain 'ai.onnx'; versions 1, 6, 11, 12, 13)")
    assert "Clip(input: T) -> (output: T)" in out
    assert "    max: float = 3.4028235e+38" in out
    assert "T: tensor(float16), tensor(float), tensor(double)" in out
    assert "inference: elementwise" in out


def test_show_unknown_op_is_one_line(capsys):
    assert main(["show", "Nope"]) == 1
    assert capsys.readouterr().err == "opspec: no operator 'Nope' in domain 'ai.onnx'\n"


def test_console_script_runs():
    result = subprocess.run([sys.executable, "-m", "opspec.cli", "show", "Relu"], capture_output=True, text=True)
    assert result.returncode == 0 and "Relu version 14" in result.stdout


def test_import_drafts_exact_facts_and_no_prose(tmp_path, capsys):
    tree = tmp_path / "opdefs"
    (tree / "ai.onnx").mkdir(parents=True)
    shutil.copy(REPO / "opdefs/types.yaml", tree / "types.yaml")
    shutil.copy(REPO / "opdefs/ai.onnx/domain.yaml", tree / "ai.onnx/domain.yaml")
    ops = ["Conv", "Slice", "Cast", "Identity", "Resize"]
    assert main(["import", "--ops", ",".join(ops), "--out", str(tree / "ai.onnx"), "--family", "drafts"]) == 0
    assert "5 ops drafted" in capsys.readouterr().out
    drafted = compile_tree(tree)[0]
    reference = {(s.name, s.since_version): s for s in onnx.defs.get_all_schemas_with_history() if s.domain == ""}
    for op in drafted.ops:
        for schema in op.schemas:
            assert differences(schema, reference[schema.name, schema.since_version]) == []
            assert all(p.description == "TODO" for p in schema.inputs)
        text = (tree / "ai.onnx/drafts" / f"{op.decl.name}.yaml").read_text()
        assert reference[op.decl.name, op.schemas[-1].since_version].doc.strip()[:40] not in text
