"""onnxruntime's kernel tables: exact against the installed wheel, validated with located errors,
queryable without onnxruntime."""
from __future__ import annotations

from pathlib import Path

import pytest

from opspec.codegen.diagnostics import CompileError
from opspec.codegen.kernel_extract import from_wheel, merged
from opspec.codegen.kernel_tables import read_tables
from opspec.runtime import kernels as kernel_api

TABLES = Path(__file__).resolve().parent.parent / "opdefs" / "onnxruntime" / "kernels"


def _expanded(domain: str, op: str, since: int, until: int | None, types: dict[str, frozenset[str]]) -> set:
    """Every (kernel key, one type per parameter) a kernel accepts: equal sets mean equal registrations."""
    combos: list[tuple[tuple[str, str], ...]] = [()]
    for name in sorted(types):
        combos = [(*combo, (name, found)) for combo in combos for found in sorted(types[name])]
    return {(domain, op, since, until, combo) for combo in combos}


def test_the_cpu_table_is_exactly_what_the_installed_wheel_registers():
    pytest.importorskip("onnxruntime")
    _, providers = from_wheel()
    wheel: set = set()
    for item in providers["cpu"]:
        wheel |= _expanded(item.domain, item.op, item.since, item.until, {n: frozenset(t) for n, t in item.types})
    (table,) = [table for table in read_tables(TABLES, "kernels") if table.provider == "cpu"]
    ours: set = set()
    for entry in table.kernels:
        ours |= _expanded(entry.domain, entry.op, entry.since, entry.until, {n: frozenset(t) for n, t in entry.types})
    assert ours == wheel
    # and the generated module holds the same
    generated: set = set()
    for (domain, op), found in kernel_api._by_op("cpu").items():
        for kernel in found:
            generated |= _expanded(domain, op, kernel.since, kernel.until, dict(kernel.types))
    assert generated == wheel


def test_merging_registrations_never_accepts_a_combination_none_registered():
    from opspec.codegen.kernel_extract import Registration

    a = Registration("ai.onnx", "X", 1, None, (("T1", ("tensor(float)",)), ("T2", ("tensor(int64)",))))
    b = Registration("ai.onnx", "X", 1, None, (("T1", ("tensor(double)",)), ("T2", ("tensor(int32)",))))
    c = Registration("ai.onnx", "X", 1, None, (("T1", ("tensor(double)",)), ("T2", ("tensor(int64)",))))
    assert len(merged([a, b])) == 2
    assert [m.types for m in merged([a, c])] == [(("T1", ("tensor(double)", "tensor(float)")), ("T2", ("tensor(int64)",)))]


def test_a_broken_table_gets_located_errors(tmp_path):
    (tmp_path / "cpu.yaml").write_text(
        "provider: cpu\nsource: here\nkernels:\n"
        "- {domain: ai.onnx, op: Add, versions: [7, 12], types: {T: [tensor(float)]}}\n"
        "- {domain: ai.onnx, op: Add, versions: [14, 13], types: {T: [tensor(float)]}}\n"
        "- {domain: ai.onnx, op: Mul, version: [14, null], types: {}}\n", encoding="utf-8")
    with pytest.raises(CompileError) as raised:
        read_tables(tmp_path, "kernels")
    shown = [str(d) for d in raised.value.diagnostics]
    assert any(text.startswith("kernels/cpu.yaml:6:") and "'version'" in text for text in shown), shown
    assert any(text.startswith("kernels/cpu.yaml:6:") and "'versions'" in text for text in shown), shown
    (tmp_path / "cpu.yaml").write_text(
        "provider: cpu\nsource: here\nkernels:\n"
        "- {domain: ai.onnx, op: Add, versions: [14, 13], types: {T: [tensor(float)]}}\n", encoding="utf-8")
    with pytest.raises(CompileError) as raised:
        read_tables(tmp_path, "kernels")
    (inverted,) = [str(d) for d in raised.value.diagnostics]
    assert inverted.startswith("kernels/cpu.yaml:4:") and "inverted" in inverted
    (tmp_path / "cpu.yaml").write_text(
        "provider: cpu\nsource: here\nkernels:\n"
        "- {domain: ai.onnx, op: Add, versions: [null, 13], types: {T: [tensor(float)]}}\n", encoding="utf-8")
    with pytest.raises(CompileError) as raised:
        read_tables(tmp_path, "kernels")
    (missing,) = [str(d) for d in raised.value.diagnostics]
    assert missing.startswith("kernels/cpu.yaml:4:") and "first version" in missing


def test_kernels_are_looked_up_by_the_models_opset():
    import opspec.onnxruntime

    (add,) = opspec.onnxruntime.kernels("Add", 14)
    assert "tensor(int8)" in add.accepted("T") and "tensor(bfloat16)" not in add.accepted("T")
    (add13,) = opspec.onnxruntime.kernels("Add", 13)  # opset 13 resolves to Add-13, not Add-14
    assert "tensor(int8)" not in add13.accepted("T")
    assert opspec.onnxruntime.kernels("Attention", 1, domain="com.microsoft")
    assert not opspec.onnxruntime.kernels("PagedAttention", 1, domain="com.microsoft")


def test_an_open_kernel_serves_only_its_first_version():
    kernel = kernel_api.Kernel("cpu", "ai.onnx", "X", 13, None, ())
    assert kernel.serves(13) and not kernel.serves(14)
    closed = kernel_api.Kernel("cpu", "ai.onnx", "X", 7, 12, ())
    assert closed.serves(7) and closed.serves(12) and not closed.serves(13)


def test_the_docs_show_each_ops_kernels_and_what_each_provider_lacks():
    from opspec.codegen.kernel_pages import KernelIndex, op_kernels_text

    (table,) = [table for table in read_tables(TABLES, "kernels") if table.provider == "cpu"]
    index = KernelIndex((table,))
    add = op_kernels_text(index, "ai.onnx", "Add")
    assert "| cpu | 14+ |" in add and "bfloat16" not in add
    assert op_kernels_text(index, "com.microsoft", "PagedAttention").startswith("No kernel")
    generated = Path(__file__).resolve().parent.parent / "generated"
    lacks = (generated / "onnxruntime" / "docs" / "kernels-cpu.md").read_text(encoding="utf-8")
    assert "| Add | 14 | T: float16, bfloat16 |" in lacks
    assert "| PagedAttention | 1 | no kernel |" in lacks
    assert "### Kernels in onnxruntime" in (generated / "docs" / "ai.onnx" / "Add.md").read_text(encoding="utf-8")


def test_the_docs_show_another_providers_kernels_beside_the_cpus_and_its_fallback(tmp_path):
    from opspec.codegen.kernel_pages import KernelIndex, op_kernels_text, provider_page

    (tmp_path / "cuda.yaml").write_text("provider: cuda\nsource: a test\nkernels:\n- {domain: ai.onnx, op: Add, "
                                        "versions: [14, null], types: {T: [tensor(bfloat16), tensor(float)]}}\n",
                                        encoding="utf-8")
    (cpu,) = [table for table in read_tables(TABLES, "kernels") if table.provider == "cpu"]
    (cuda,) = read_tables(tmp_path, "kernels")
    index = KernelIndex((cpu, cuda))
    add = op_kernels_text(index, "ai.onnx", "Add")
    assert "| cpu | 14+ |" in add and "| cuda | 14+ | T: bfloat16, float |" in add
    assert "[kernels-cpu.md](kernels-cpu.md)" in provider_page(cuda, index, ())
    assert "kernels-cpu.md" not in provider_page(cpu, index, ())


def test_what_the_registry_does_not_say_is_kept_when_the_table_is_extracted_again(tmp_path):
    from opspec.codegen.kernel_extract import KEPT_MARKER, kept_sections

    written = f"provider: cpu\nsource: here\nkernels: []\n{KEPT_MARKER}\nrefusals:\n" \
              "- {domain: ai.onnx, op: RNN, versions: [14, null], attributes: {layout: [1]}, why: batch-first}\n"
    (tmp_path / "cpu.yaml").write_text(written, encoding="utf-8")
    assert kept_sections(tmp_path / "cpu.yaml").startswith(KEPT_MARKER + "\nrefusals:")
    (table,) = read_tables(tmp_path, "kernels")
    (refusal,) = table.refusals
    assert (refusal.op, refusal.since, refusal.until, refusal.attributes) == ("RNN", 14, None, (("layout", (1,)),))
    (tmp_path / "cpu.yaml").write_text(written.replace("[14, null]", "[14, 13]"), encoding="utf-8")
    with pytest.raises(CompileError) as raised:
        read_tables(tmp_path, "kernels")
    (inverted,) = [str(d) for d in raised.value.diagnostics]
    assert inverted.startswith("kernels/cpu.yaml:6:")


def test_refusals_and_built_bodies_are_queryable():
    (refusal,) = kernel_api.refusals("RNN", 22)
    assert refusal.applies({}, lambda name: 1) and not refusal.applies({}, lambda name: 0)
    calls = kernel_api.built_body_calls("CastLike", 25)
    assert calls is not None and [call.op for call in calls] == ["Cast"]
    assert kernel_api.built_body_calls("Add", 14) is None


def test_the_coverage_picture_marks_versions_without_a_cpu_kernel_and_the_index_links_the_provider_page():
    import re

    from opspec.codegen.docs_coverage import NO_KERNEL

    generated = Path(__file__).resolve().parent.parent / "generated"
    picture = (generated / "docs" / "ai.onnx" / "coverage.svg").read_text(encoding="utf-8")

    def cell(op: str, opset: int) -> str:
        (found,) = re.findall(rf"<rect [^>]*><title>{op} version \d+ at opset {opset}: [^<]*</title></rect>[^\n]*", picture)
        return found

    assert "no CPU kernel" in cell("Mish", 18) and NO_KERNEL in cell("Mish", 18)  # expanded, never a kernel
    assert "no CPU kernel" not in cell("Add", 14) and NO_KERNEL not in cell("Add", 14)
    assert "no CPU kernel</text>" in picture  # the key names the mark
    index = (generated / "onnxruntime" / "docs" / "README.md").read_text(encoding="utf-8")
    assert "[cpu](kernels-cpu.md)" in index and (generated / "onnxruntime" / "docs" / "kernels-cpu.md").is_file()
