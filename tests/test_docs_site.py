"""The reference site (`make docs`): built strict with search; lists, function bodies and the
coverage matrix as a reader sees them."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

import opspec
import opspec.onnxruntime as ort_ops
from opspec.codegen.docs_coverage import COLOURS
from opspec.codegen.docs_function import function_listing
from opspec.codegen.docs_site import SITE, stage
from opspec.codegen.generate import DEFAULT_OUT

REPO = Path(__file__).resolve().parent.parent
DOCS = DEFAULT_OUT / "docs"
_SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def search_index() -> list[dict]:
    """Build the site as `make docs` does; any MkDocs warning (a broken link, a missing
    anchor) fails the build in strict mode."""
    done = subprocess.run([sys.executable, "-m", "opspec.codegen.docs_site"], cwd=REPO,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING" not in done.stdout + done.stderr
    return json.loads((SITE / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]


def _search(index: list[dict], word: str) -> set[str]:
    """Pages whose title or text holds ``word`` as a word, as the site's search matches terms."""
    pattern = re.compile(rf"\b{re.escape(word)}\b", re.IGNORECASE)
    return {entry["location"].partition("#")[0] for entry in index
            if pattern.search(entry["title"]) or pattern.search(entry["text"])}


def test_site_search_finds_an_op_by_name_and_by_a_word_of_its_summary(search_index):
    page = "generated/docs/ai.onnx/GridSample.html"
    assert page in _search(search_index, "GridSample")
    summary_words = {w for w in re.findall(r"[a-z]{6,}", opspec.get_schema("GridSample").summary.lower())}
    assert any(page in _search(search_index, word) for word in summary_words)
    assert "generated/onnxruntime/docs/com.microsoft/GroupQueryAttention.html" in _search(search_index,
                                                                                         "GroupQueryAttention")


def test_site_has_an_index_per_domain_opset_pages_changelog_types_rules_and_coverage(search_index):
    pages = {entry["location"].partition("#")[0] for entry in search_index}
    for folder in ("generated/docs/ai.onnx", "generated/onnxruntime/docs/com.microsoft"):
        for page in ("index", "changelog", "coverage", "status", "opset-1"):
            assert f"{folder}/{page}.html" in pages
    assert {"generated/docs/types.html", "generated/docs/rules.html", "opdefs/index.html"} <= pages
    assert (SITE / "generated/docs/ai.onnx/coverage.svg").is_file()


def test_a_broken_link_fails_the_site_build(tmp_path):
    source = stage(REPO, tmp_path / "src")
    (source / "generated/docs/rules.md").write_text("[gone](nowhere.md)\n", encoding="utf-8")
    config = tmp_path / "mkdocs.yml"
    config.write_text((REPO / "mkdocs.yml").read_text(encoding="utf-8").replace(
        "docs_dir: build/docs-src", f"docs_dir: {source}").replace("site_dir: build/site",
                                                                   f"site_dir: {tmp_path / 'site'}"))
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config)],
                          capture_output=True, text=True)
    assert done.returncode != 0 and "nowhere.md" in done.stderr


def test_nested_lists_are_indented_by_four_spaces():
    """Two-space nesting flattens in common Markdown renderers."""
    shallow = [f"{page.relative_to(DOCS)}:{number}" for page in DOCS.rglob("*.md")
               for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
               if re.match(r"^ {1,3}[-*] ", line)]
    assert not shallow
    assert re.search(r"^    - ", (DOCS / "ai.onnx/changelog.md").read_text(encoding="utf-8"), re.MULTILINE)


def _with_bodies():
    return [s for s in opspec.get_all_schemas() if s.functions]


def test_every_op_with_a_function_body_shows_it_on_its_page():
    schemas = _with_bodies()
    assert schemas
    for schema in schemas:
        page = (DOCS / (schema.domain or "ai.onnx") / f"{schema.name}.md").read_text(encoding="utf-8")
        for body in schema.functions:
            assert function_listing(schema, body) in page, schema.name


@pytest.mark.parametrize("schema", _with_bodies(), ids=lambda s: f"{s.name}-{s.since_version}")
def test_a_function_listing_is_onnx_text_for_onnxs_own_body(schema):
    onnx = pytest.importorskip("onnx")
    import onnx.parser

    parsed = onnx.parser.parse_function(function_listing(schema, schema.functions[-1]))
    theirs = onnx.defs.get_schema(schema.name, schema.since_version, schema.domain).function_body
    ours = onnx.FunctionProto.FromString(schema.function_body.SerializeToString())
    assert [(n.op_type, list(n.input), list(n.output)) for n in parsed.node] == \
           [(n.op_type, list(n.input), list(n.output)) for n in theirs.node] == \
           [(n.op_type, list(n.input), list(n.output)) for n in ours.node]
    assert (list(parsed.input), list(parsed.output)) == (list(theirs.input), list(theirs.output))
    assert sorted(parsed.attribute) == sorted(ours.attribute)


def _cells(svg: Path) -> list:
    return list(ElementTree.parse(svg).getroot().iter(f"{_SVG}rect"))


def test_coverage_matrix_colours_each_version_step_and_marks_versions_without_a_rule():
    picture = DEFAULT_OUT / "onnxruntime/docs/com.microsoft/coverage.svg"
    root = ElementTree.parse(picture).getroot()
    titles = [rect.find(f"{_SVG}title").text for rect in _cells(picture)]
    schema = ort_ops.get_schema("GroupQueryAttention", domain="com.microsoft")
    assert f"GroupQueryAttention version {schema.since_version} at opset {schema.since_version}: new" in titles
    unruled = [s for s in ort_ops.get_all_schemas_with_history() if s.domain == "com.microsoft" and s.inference is None]
    assert unruled
    for s in unruled:  # (a version without a CPU kernel says so after)
        said = f"{s.name} version {s.since_version} at opset {s.since_version}: {s.change_class or 'new'}, no inference rule"
        assert said in titles or f"{said}, no CPU kernel" in titles
    assert len(list(root.iter(f"{_SVG}circle"))) >= len(unruled)
    fills = {rect.get("fill") for rect in _cells(DOCS / "ai.onnx/coverage.svg")}
    assert {COLOURS["new"], COLOURS["breaking"], COLOURS["compatible"], COLOURS["unchanged"]} <= fills
