"""onnxruntime's generated kernel document read into kernel tables, trusted only when its CPU
section agrees with the CPU table extracted from the wheel."""
from __future__ import annotations

import pytest
import yaml

from opspec.codegen.kernel_tables import read_tables, render_module

from opspec.codegen.kernel_doc import (DocumentError, collapsed, cross_check, document_rows, main, parse_document,
                                       table_rows)

#: A small document in the generator's layout: two providers, domain rows, continuation rows, a
#: single-version range, a map type whose comma is not a separator.
EXCERPT = """## Supported Operators and Data Types

<a name="cpuexecutionprovider"/>

## Operators implemented by CPUExecutionProvider

| Op Name | Parameters | OpSet Version | Types Supported |
|---------|------------|---------------|-----------------|
|**Operator Domain:** *ai.onnx*||||
|Add|*in* A:**T**<br> *in* B:**T**<br> *out* C:**T**|14+|**T** = tensor(double), tensor(float)|
|||13|**T** = tensor(float)|
|||[7, 12]|**T** = tensor(float)|
| |
| |
|**Operator Domain:** *ai.onnx.ml*||||
|CastMap|*in* X:**T1**<br> *out* Y:**T2**|1+|**T1** = map(int64,tensor(float)), map(int64,tensor(string))<br/> **T2** = tensor(float)|
| |
| |


<a name="cudaexecutionprovider"/>

## Operators implemented by CUDAExecutionProvider

| Op Name | Parameters | OpSet Version | Types Supported |
|---------|------------|---------------|-----------------|
|**Operator Domain:** *ai.onnx*||||
|Add|*in* A:**T**<br> *in* B:**T**<br> *out* C:**T**|14+|**T** = tensor(bfloat16), tensor(float), tensor(float16)|
|**Operator Domain:** *com.microsoft*||||
|FastGelu|*in* X:**T**<br> *in* bias:**T**<br> *out* Y:**T**|1+|**T** = tensor(float), tensor(float16)|
| |
| |
"""

#: The CPU table the excerpt's CPU section agrees with (the registry keeps apart what the document joins).
AGREEING_CPU = """provider: cpu
source: "test"
kernels:
- {domain: ai.onnx, op: Add, versions: [7, 12], types: {T: [tensor(float)]}}
- {domain: ai.onnx, op: Add, versions: [13, 13], types: {T: [tensor(float)]}}
- {domain: ai.onnx, op: Add, versions: [14, null], types: {T: [tensor(double)]}}
- {domain: ai.onnx, op: Add, versions: [14, null], types: {T: [tensor(float)]}}
- {domain: ai.onnx.ml, op: CastMap, versions: [1, null], types: {T1: ["map(int64,tensor(float))", "map(int64,tensor(string))"], T2: [tensor(float)]}}
"""


def test_the_document_is_read_per_provider_domain_and_version_range():
    sections = parse_document(EXCERPT)
    assert sorted(sections) == ["cpu", "cuda"]
    cpu = {row.key(): dict(row.types) for row in sections["cpu"]}
    assert cpu[("ai.onnx", "Add", 14, None)] == {"T": ("tensor(double)", "tensor(float)")}
    assert cpu[("ai.onnx", "Add", 13, 13)] == {"T": ("tensor(float)",)}
    assert cpu[("ai.onnx", "Add", 7, 12)] == {"T": ("tensor(float)",)}
    assert cpu[("ai.onnx.ml", "CastMap", 1, None)]["T1"] == ("map(int64,tensor(float))", "map(int64,tensor(string))")
    cuda = {row.key() for row in sections["cuda"]}
    assert cuda == {("ai.onnx", "Add", 14, None), ("com.microsoft", "FastGelu", 1, None)}


def test_a_malformed_row_is_located():
    broken = EXCERPT.replace("|||13|", "|||thirteen|")
    with pytest.raises(DocumentError) as raised:
        parse_document(broken)
    assert raised.value.line == next(n for n, line in enumerate(broken.splitlines(), 1) if "thirteen" in line)
    with pytest.raises(DocumentError):
        parse_document(EXCERPT.replace("**T** = tensor(bfloat16)", "**T** = tensor(bfloat16"))


def test_the_table_is_collapsed_as_the_document_shows_it(tmp_path):
    (tmp_path / "cpu.yaml").write_text(AGREEING_CPU)
    check = cross_check(document_rows(parse_document(EXCERPT)["cpu"]), table_rows(tmp_path / "cpu.yaml"))
    assert check.agrees and check.agreeing == 4


def test_every_difference_is_listed():
    document = collapsed([("ai.onnx", "Add", 14, None, [("T", ["tensor(float)", "tensor(double)"])]),
                          ("ai.onnx", "Acos", 7, None, [("T", ["tensor(float)"])])])
    table = collapsed([("ai.onnx", "Add", 14, None, [("T", ["tensor(float)", "tensor(int8)"])]),
                       ("ai.onnx", "Acos", 7, 21, [("T", ["tensor(float)"])]),
                       ("ai.onnx", "Acos", 22, None, [("T", ["tensor(float)"])]),
                       ("ai.onnx", "Identity", 1, None, [])])  # constrains nothing: the document leaves it out
    check = cross_check(document, table)
    assert not check.agrees and check.agreeing == 0
    assert check.only_in_document == (("ai.onnx", "Acos", 7, None),)
    assert check.only_in_table == (("ai.onnx", "Acos", 7, 21), ("ai.onnx", "Acos", 22, None))
    assert check.differing == ((("ai.onnx", "Add", 14, None), "T", ("tensor(double)",), ("tensor(int8)",)),)


def test_a_provider_table_is_written_only_when_the_cpu_section_agrees(tmp_path, capsys):
    document = tmp_path / "OperatorKernels.md"
    document.write_text(EXCERPT)
    (tmp_path / "cpu.yaml").write_text(AGREEING_CPU.replace("- {domain: ai.onnx, op: Add, versions: [13, 13]",
                                                            "- {domain: ai.onnx, op: Add, versions: [13, 14]"))
    assert main([str(document), "--tables", str(tmp_path), "--write"]) == 1
    assert not (tmp_path / "cuda.yaml").exists()
    assert "only in the table: ai.onnx Add [13, 14]" in capsys.readouterr().out

    (tmp_path / "cpu.yaml").write_text(AGREEING_CPU)
    assert main([str(document), "--tables", str(tmp_path), "--write", "--commit", "abc123"]) == 0
    tables = {table.provider: table for table in read_tables(tmp_path, "kernels")}  # valid by the schema
    assert {entry.op for entry in tables["cuda"].kernels} == {"Add", "FastGelu"}
    module = render_module(tuple(tables.values()), "kernels/")  # compiled beside the CPU table
    assert "'cuda': (" in module and "('com.microsoft', 'FastGelu', 1, None" in module
    written = yaml.safe_load((tmp_path / "cuda.yaml").read_text())
    assert written["provider"] == "cuda" and "abc123" in written["source"] and "agrees row for row" in written["source"]
    assert {"domain": "com.microsoft", "op": "FastGelu", "versions": [1, None],
            "types": {"T": ["tensor(float)", "tensor(float16)"]}} in written["kernels"]


def test_unreadable_input_is_one_clear_error(tmp_path, capsys):
    document = tmp_path / "OperatorKernels.md"
    document.write_bytes(b"\xff\xfe not text")
    assert main([str(document), "--tables", str(tmp_path)]) == 2
    document.write_text(EXCERPT)
    assert main([str(document), "--tables", str(tmp_path / "missing")]) == 2  # no cpu.yaml
    (tmp_path / "cpu.yaml").write_text("kernels: [oops")
    assert main([str(document), "--tables", str(tmp_path)]) == 2
    errors = capsys.readouterr().err
    assert errors.count("\n") == 3 and "Traceback" not in errors


def test_a_document_without_a_cpu_section_is_refused(tmp_path, capsys):
    document = tmp_path / "OperatorKernels.md"
    document.write_text(EXCERPT[EXCERPT.index('<a name="cudaexecutionprovider"/>'):])
    assert main([str(document), "--tables", str(tmp_path)]) == 2
    assert "no CPUExecutionProvider section" in capsys.readouterr().err
