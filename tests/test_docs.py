"""The generated docs: links resolve, examples match inference, versions carry their class."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import opspec
from opspec.codegen.compiler import compile_tree
from opspec.codegen.diagnostics import CompileError
from opspec.codegen.examples import examples_of
from opspec.codegen.generate import DEFAULT_OUT, generate
from opspec.codegen.type_names import TypeSetNames

REPO = Path(__file__).resolve().parent.parent
DOCS = DEFAULT_OUT / "docs"
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_ANCHOR = re.compile(r'<a id="([^"]+)"></a>')


def _anchors(page: Path) -> set[str]:
    text = page.read_text(encoding="utf-8")
    headings = {re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
                for line in text.splitlines() if line.startswith("#")}
    return set(_ANCHOR.findall(text)) | headings


def test_every_relative_link_in_the_docs_resolves():
    broken = []
    for page in sorted(DOCS.rglob("*.md")):
        for target in _LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"^[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page
            if not resolved.exists():
                broken.append(f"{page.relative_to(DOCS)}: {target} (no such file)")
            elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
                broken.append(f"{page.relative_to(DOCS)}: {target} (no such anchor)")
    assert broken == []


def test_docs_show_what_inference_gives_for_every_example():
    domains = compile_tree(REPO / "opdefs")
    computed = examples_of(domains, fresh=False)  # the installed registry, as users run it
    assert computed, "the built-in tree has examples"
    for (domain, op), examples in computed.items():
        page = (DOCS / domain / f"{op}.md").read_text(encoding="utf-8")
        for example in examples:
            assert f"`{example.call}` → " in page
            for name, value in example.outputs:
                assert f"`{name}: {value}`" in page, (op, example.call)


def test_a_worked_example_reads_like_the_op():
    page = (DOCS / "ai.onnx/Conv.md").read_text(encoding="utf-8")
    assert "`Conv(X: float (N, C, H, W), W: float (M, C, 3, 3))` → `Y: float (N, M, H-2, W-2)`" in page


def test_a_broken_example_is_a_located_error(tmp_path):
    tree = tmp_path / "opdefs"
    shutil.copytree(REPO / "examples/custom_ops/opdefs", tree)
    swish = tree / "com.example/activation/Swish.yaml"
    text = swish.read_text()
    lines = text.splitlines()
    last_version = max(i for i, line in enumerate(lines) if re.match(r"^  \d+:", line))
    lines.insert(last_version + 1, '    examples: [{inputs: {nope: "(N,)"}}, {inputs: {X: "(N, 3"}}]')
    swish.write_text("\n".join(lines) + "\n")
    with pytest.raises(CompileError) as raised:
        generate(tree, tmp_path / "out", with_protos=False)
    messages = [str(d) for d in raised.value.diagnostics]
    assert len(messages) == 2
    assert all(f"Swish.yaml:{last_version + 2}:" in message for message in messages)
    assert "no input named nope" in messages[0] and "write a shape such as" in messages[1]


def test_examples_of_a_users_tree_use_its_own_schemas(tmp_path):
    tree = tmp_path / "opdefs"
    shutil.copytree(REPO / "examples/custom_ops/opdefs", tree)
    swish = tree / "com.example/activation/Swish.yaml"
    lines = swish.read_text().splitlines()
    last_version = max(i for i, line in enumerate(lines) if re.match(r"^  \d+:", line))
    lines.insert(last_version + 1, '    examples: [{inputs: {X: "(B, 8)"}, attributes: {beta: 0.5}}]')
    swish.write_text("\n".join(lines) + "\n")
    generate(tree, tmp_path / "out", with_protos=False)
    page = (tmp_path / "out/docs/com.example/Swish.md").read_text()
    assert "`Swish(X: float (B, 8), beta=0.5)` → `Y: float (B, 8)`" in page
    assert not opspec.has_schema("Swish", domain="com.example")  # the registry is as it was


@pytest.mark.parametrize("op, version, change_class", [
    ("Reshape", 5, "breaking"),      # the shape attribute became an input
    ("Add", 14, "compatible"),       # more types
    ("Relu", 6, "narrowing"),        # the consumed_inputs attribute was removed
    ("Softmax", 13, "breaking"),     # the default axis changed
    ("Conv", 11, "semantic"),        # same signature, only differentiability
    ("Conv", 1, ""),                 # a first version has no class
])
def test_registry_carries_the_change_class(op, version, change_class):
    assert opspec.get_schema(op, version).change_class == change_class


def test_history_and_changelog_show_the_class():
    assert '<a id="version-5"></a>\n### Version 5 <kbd>breaking</kbd>' in (DOCS / "ai.onnx/Reshape.md").read_text()
    changelog = (DOCS / "ai.onnx/changelog.md").read_text()
    assert "- **[Reshape](Reshape.md#version-5)** <kbd>breaking</kbd> (was version [1](Reshape.md#version-1))" \
        in changelog


def test_type_lists_name_their_sets():
    names = TypeSetNames([("floats", ("tensor(float)", "tensor(double)")),
                          ("numbers", ("tensor(float)", "tensor(double)", "tensor(int64)", "tensor(int32)"))])
    assert names.parts(["tensor(int64)", "tensor(float)", "tensor(int32)", "tensor(double)"]) == (["numbers"], [])
    assert names.parts(["tensor(float)", "tensor(double)", "tensor(bool)"]) == (["floats"], ["tensor(bool)"])
    assert names.markdown(["tensor(bool)"]) == "`tensor(bool)`"
    page = (DOCS / "ai.onnx/Conv.md").read_text()
    assert "| `T` | [`float_types_bf16`](../types.md#float_types_bf16) |" in page


def test_status_page_lists_every_version_with_rule_and_suite():
    page = (DOCS / "ai.onnx/status.md").read_text()
    assert "| [Conv](Conv.md) | [22](Conv.md#version-22) | compatible | `conv` |" in page
    row = next(line for line in page.splitlines() if line.startswith("| [Conv](Conv.md) | [22]"))
    assert re.search(r"\d+ EXACT", row)


def test_a_first_generation_without_a_runtime_adds_the_examples_once_it_has_one(tmp_path, monkeypatch):
    from opspec.codegen import examples, generate as generation

    answers = iter([False, False])  # not ready before, nor while rendering; ready once written
    ready = lambda: next(answers, True)  # noqa: E731
    monkeypatch.setattr(generation, "runtime_ready", ready)
    monkeypatch.setattr(examples, "runtime_ready", ready)
    generate(REPO / "opdefs", tmp_path / "out", with_protos=False)
    assert "### Examples" in (tmp_path / "out/docs/ai.onnx/Conv.md").read_text()


def test_every_opset_of_every_domain_has_a_changelog_section_and_a_page_at_a_glance():
    for domain in compile_tree(REPO / "opdefs"):
        folder = DOCS / domain.decl.name
        index, changelog = (folder / "README.md").read_text(), (folder / "changelog.md").read_text()
        for opset in range(domain.decl.opset_min, domain.decl.opset_max + 1):
            assert f"## Opset {opset}\n\n[Every operator at opset {opset}](opset-{opset}.md)." in changelog
            assert f"[{opset}](opset-{opset}.md)" in index
            assert (folder / f"opset-{opset}.md").is_file()


def test_a_page_at_a_glance_shows_the_version_in_force_and_what_changed():
    page = (DOCS / "ai.onnx/opset-14.md").read_text()
    assert "| [Reshape](Reshape.md) | [14](Reshape.md#version-14) | <kbd>" in page
    assert "| [Abs](Abs.md) | [13](Abs.md#version-13) |  |" in page
    assert "- **[Reshape](Reshape.md#version-14)** <kbd>" in page
    assert "[Reshape]" not in (DOCS / "ai.onnx/opset-15.md").read_text().split("## Operators")[0]
