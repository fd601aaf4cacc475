"""Generation is deterministic, checks freshness, and works on any opdefs tree."""
from __future__ import annotations

import shutil
import subprocess
import sys

from opspec.cli import main
from opspec.codegen.generate import DEFAULT_OUT, REPO, build, generate


def test_generated_folder_is_up_to_date():
    result = generate(check=True)
    assert result.stale == [], f"run `make generate`: stale {result.stale}"
    assert (result.op_count, result.schema_count) == (60, 265)


def test_output_is_deterministic(tmp_path):
    first = generate(REPO / "opdefs", tmp_path / "a", with_protos=False)
    second = generate(REPO / "opdefs", tmp_path / "b", with_protos=False)
    assert first.files == second.files
    for path, content in first.files.items():
        assert (tmp_path / "a" / path).read_bytes() == (tmp_path / "b" / path).read_bytes() == content
    # A second run over the same folder changes nothing.
    assert generate(REPO / "opdefs", tmp_path / "a", with_protos=False).written == []


def test_check_reports_stale_and_extra_files(tmp_path, capsys):
    opdefs = tmp_path / "opdefs"
    shutil.copytree(REPO / "opdefs", opdefs)
    out = tmp_path / "out"
    assert main(["generate", "--opdefs", str(opdefs), "--out", str(out)]) == 0
    assert main(["generate", "--opdefs", str(opdefs), "--out", str(out), "--check"]) == 0
    relu = opdefs / "ai.onnx/activation/Relu.yaml"
    relu.write_text(relu.read_text().replace("summary:", "summary: Changed."), encoding="utf-8")
    (out / "ai_onnx/Gone.py").write_text("")
    capsys.readouterr()
    assert main(["generate", "--opdefs", str(opdefs), "--out", str(out), "--check"]) == 1
    err = capsys.readouterr().err
    assert "stale: " in err and "ai_onnx/Relu.py" in err and "docs/ai.onnx/Relu.md" in err
    assert "ai_onnx/Gone.py" in err and "out of date" in err
    # Regenerating fixes it and removes what no longer belongs.
    assert main(["generate", "--opdefs", str(opdefs), "--out", str(out)]) == 0
    assert not (out / "ai_onnx/Gone.py").exists()


def test_builtin_output_includes_the_ir_module():
    _, files = build(REPO / "opdefs", with_protos=True)
    assert (DEFAULT_OUT / "opspec_ir_pb2.py").read_bytes() == files["opspec_ir_pb2.py"]


def test_custom_domain_compiles_and_imports(tmp_path):
    out = tmp_path / "acme_registry"
    assert main(["generate", "--opdefs", str(REPO / "examples/custom_ops/opdefs"), "--out", str(out)]) == 0
    assert (out / "docs/com.example/Swish.md").is_file()
    script = f"""
import opspec
opspec.register({str(out)!r})
swish = opspec.get_schema("Swish", domain="com.example")
assert swish.since_version == 2 and "tensor(bfloat16)" in swish.type_constraints[0].allowed_type_strs
assert opspec.get_schema("Swish", 1, "example").attributes["beta"].constraint.violations(0.0) == ["0.0 must be > 0"]
assert opspec.get_schema("ScaledAdd", 3, "com.example").deprecated
assert opspec.get_schema("Add").since_version == 14
print("ok")
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.stdout.strip() == "ok", result.stderr


def test_registry_import_parses_no_yaml_and_loads_lazily():
    script = """
import sys, opspec
opspec.get_schema("Add")
loaded = sorted(m for m in sys.modules if m.startswith("opspec.generated."))
assert loaded == ["opspec.generated.ai_onnx", "opspec.generated.ai_onnx.Add"], loaded
heavy = {"yaml", "jinja2", "jsonschema", "onnx", "dataclasses", "opspec.codegen", "google.protobuf"}
assert not heavy & set(sys.modules), heavy & set(sys.modules)
print("ok")
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.stdout.strip() == "ok", result.stderr
