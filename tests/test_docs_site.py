"""The reference site (`make docs`): built strict, once per run, with search; its generated pages
(command line, Python API, a sidebar per domain), lists, function bodies and the coverage matrix
as a reader sees them; and, where a Chromium is installed, the key pages looked at in a headless
browser (no sideways scroll at a desktop and a phone width, search order, the dark theme, nothing
loaded from another host), with screenshots left in .build/screenshots for a person to look at."""
from __future__ import annotations

import argparse
import functools
import http.server
import json
import re
import subprocess
import sys
import threading
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Iterator

import pytest

# The site is built by MkDocs and its theme, installed by the `docs` extra (not by the package alone).
pytest.importorskip("mkdocs")
pytest.importorskip("material")

import opspec
import opspec.onnxruntime as ort_ops
from opspec.cli import _parser
from opspec.codegen.docs_cli import command_names
from opspec.codegen.docs_coverage import COLOURS
from opspec.codegen.docs_function import function_listing
from opspec.codegen.docs_site import SITE, Staged, config, mkdocs_command
from opspec.codegen.generate import DEFAULT_OUT

from browser import Browser, find_chromium

REPO = Path(__file__).resolve().parent.parent
DOCS = DEFAULT_OUT / "docs"
SCREENSHOTS = REPO / ".build" / "screenshots"
_SVG = "{http://www.w3.org/2000/svg}"
ATTENTION = "generated/onnxruntime/docs/com.microsoft/Attention.html"
#: The pages looked at in the browser: the home page, an op page with a long signature, the
#: coverage picture of a domain with one opset, the command-line and API references.
KEY_PAGES = {"home": "index.html", "attention": ATTENTION,
             "coverage": "generated/onnxruntime/docs/com.microsoft/coverage.html", "cli": "cli.html",
             "api": "api/opspec.html"}
#: A desktop and a phone width, in CSS pixels.
WIDTHS = (1400, 400)


@pytest.fixture(scope="module")
def site() -> Path:
    """Build the site as `make docs` does; any MkDocs warning (a broken link, a missing anchor)
    fails the build in strict mode."""
    done = subprocess.run([sys.executable, "-m", "opspec.codegen.docs_site"], cwd=REPO,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING" not in done.stdout + done.stderr
    return SITE


@pytest.fixture(scope="module")
def search_index(site: Path) -> list[dict]:
    return json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]


def _search(index: list[dict], word: str) -> set[str]:
    """Pages whose title or text holds ``word`` as a word, as the site's search matches terms."""
    pattern = re.compile(rf"\b{re.escape(word)}\b", re.IGNORECASE)
    return {entry["location"].partition("#")[0] for entry in index
            if pattern.search(entry["title"]) or pattern.search(entry["text"])}


def _html(site: Path, page: str) -> str:
    return (site / page).read_text(encoding="utf-8")


def test_site_search_finds_an_op_by_name_and_by_a_word_of_its_summary(search_index):
    page = "generated/docs/ai.onnx/GridSample.html"
    assert page in _search(search_index, "GridSample")
    summary_words = {w for w in re.findall(r"[a-z]{6,}", opspec.get_schema("GridSample").summary.lower())}
    assert any(page in _search(search_index, word) for word in summary_words)
    assert "generated/onnxruntime/docs/com.microsoft/GroupQueryAttention.html" in _search(search_index,
                                                                                         "GroupQueryAttention")


def test_search_titles_an_op_page_by_op_and_domain_and_leaves_out_pages_listing_every_op(search_index):
    titles = {entry["location"]: entry["title"] for entry in search_index}
    assert titles["generated/docs/ai.onnx/RotaryEmbedding.html"] == "RotaryEmbedding · ai.onnx"
    assert titles["generated/onnxruntime/docs/com.microsoft/RotaryEmbedding.html"] == \
        "RotaryEmbedding · com.microsoft"
    pages = {location.partition("#")[0] for location in titles}
    assert not [page for page in pages if re.search(r"/(opset-\d+|changelog|status)\.html$", page)]


def test_site_has_an_index_per_domain_opset_pages_changelog_types_rules_and_coverage(site):
    for folder in ("generated/docs/ai.onnx", "generated/onnxruntime/docs/com.microsoft"):
        for page in ("index", "changelog", "coverage", "status", "opset-1"):
            assert (site / f"{folder}/{page}.html").is_file()
    for page in ("generated/docs/types", "generated/docs/rules", "opdefs/index", "cli", "api/opspec",
                 "api/onnxruntime"):
        assert (site / f"{page}.html").is_file()
    assert (site / "generated/docs/ai.onnx/coverage.svg").is_file()


def test_the_two_op_sets_and_their_pages_have_titles_of_their_own(site):
    def title(page: str) -> str:
        found = re.search(r"<title>(.*?)</title>", _html(site, page))
        assert found, page
        return found.group(1)

    pages = ["generated/docs/index.html", "generated/onnxruntime/docs/index.html",
             "generated/docs/ai.onnx/index.html", "generated/onnxruntime/docs/com.microsoft/index.html",
             "generated/docs/rules.html", "generated/onnxruntime/docs/rules.html", ATTENTION]
    titles = [title(page) for page in pages]
    assert len(set(titles)) == len(titles), titles
    assert not [t for t in titles if t.lower().startswith(("index", "readme"))]


def test_an_op_pages_sidebar_lists_the_other_ops_of_its_domain(site):
    sidebar = _html(site, ATTENTION).partition("md-sidebar--secondary")[0]
    for name in ("GroupQueryAttention", "RotaryEmbedding", "SkipLayerNormalization"):
        assert f'href="{name}.html"' in sidebar


def test_the_command_line_page_has_every_command_and_option(site):
    page = _html(site, "cli.html")
    parser = _parser()
    for name in command_names(parser):
        assert f'id="opspec-{name}"' in page, name
    commands = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    for action in commands.choices["infer"]._actions:
        for spelling in [] if isinstance(action, argparse._HelpAction) else action.option_strings:
            assert f"<code>{spelling}" in page, spelling


def test_the_api_pages_have_every_public_name_with_its_docstring(site):
    page = _html(site, "api/opspec.html")
    for name in opspec.__all__:
        assert f'id="{name}"' in page or f"<code>opspec.{name}</code>" in page, name
    assert "overridable_initializers" in page  # a keyword-only parameter of opspec.infer
    assert 'id="get_schema"' in _html(site, "api/onnxruntime.html")


def test_the_home_page_has_install_quick_start_and_the_ways_in(site):
    page = _html(site, "index.html")
    for heading in ("Install", "Quick start", "Three ways in"):
        assert f">{heading}<" in page
    for link in ("cli.html", "api/opspec.html", "opdefs/index.html", "generated/docs/index.html"):
        assert f'href="{link}' in page


def test_no_page_loads_anything_from_another_host(site):
    external = re.compile(r'<(?:script|link|img)\b[^>]*(?:src|href)="(?:https?:)?//', re.IGNORECASE)
    pages = ["index.html", ATTENTION, "cli.html", "generated/docs/ai.onnx/Conv.html"]
    assert not [page for page in pages if external.search(_html(site, page))]
    assert not list(site.rglob("*.woff2"))  # the system's fonts, none downloaded by the theme


def test_a_broken_link_fails_the_site_build(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    (source / "index.md").write_text("# Home\n\n[gone](nowhere.md)\n", encoding="utf-8")
    settings = config(REPO, Staged(source, [{"Home": "index.md"}]), tmp_path / "site")
    done = subprocess.run(mkdocs_command(settings), capture_output=True, text=True)
    assert done.returncode != 0 and "nowhere.md" in done.stderr


def test_nested_lists_are_indented_by_four_spaces():
    """Two-space nesting flattens in common Markdown renderers."""
    shallow = [f"{page.relative_to(DOCS)}:{number}" for page in DOCS.rglob("*.md")
               for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
               if re.match(r"^ {1,3}[-*] ", line)]
    assert not shallow
    assert re.search(r"^    - ", (DOCS / "ai.onnx/changelog.md").read_text(encoding="utf-8"), re.MULTILINE)


def test_link_texts_are_words_not_file_names():
    named = [f"{page.relative_to(DEFAULT_OUT)}: {text}" for page in DEFAULT_OUT.rglob("*.md")
             for text in re.findall(r"\[([^\]]*\.(?:md|svg|yaml))\]\(", page.read_text(encoding="utf-8"))]
    assert not named


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


def test_a_domain_with_one_opset_draws_its_ops_in_several_columns_wider_than_tall():
    root = ElementTree.parse(DEFAULT_OUT / "onnxruntime/docs/com.microsoft/coverage.svg").getroot()
    labels = [text for text in root.iter(f"{_SVG}text") if text.get("text-anchor") == "end"]
    assert len({label.get("x") for label in labels}) >= 3
    assert int(root.get("height", "0")) < len(labels) * 14 // 2


# --- In a browser -------------------------------------------------------------------------------


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    """The built site over HTTP on a free local port (search runs in a worker, which a page
    opened from a file may not start)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = find_chromium()
    if executable is None:
        pytest.skip("no chromium on PATH (`apt-get install chromium`; .ci/run installs it as root)")
    opened = Browser(executable)
    yield opened
    opened.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_key_pages_do_not_scroll_sideways(browser, served, width):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    wide = []
    for name, page in KEY_PAGES.items():
        browser.open(served + page, width)
        scroll, client = browser.evaluate("[document.documentElement.scrollWidth, "
                                          "document.documentElement.clientWidth]")
        if scroll > client:
            wide.append(f"{page}: {scroll} > {client}")
        browser.screenshot(SCREENSHOTS / f"{name}-{width}.png")
    assert not wide


def test_a_long_signature_wraps_inside_its_block(browser, served):
    browser.open(served + ATTENTION, 1400)
    block = browser.evaluate("(() => { const code = document.querySelector('#signature ~ div pre code, "
                             "#signature ~ .highlight pre code'); return [code.scrollWidth, code.clientWidth, "
                             "code.textContent.length]; })()")
    scroll, client, length = block
    assert length > 200 and scroll <= client


def test_search_for_the_start_of_a_name_finds_that_op_first(browser, served):
    browser.open(served + "index.html?q=rotary", 1400)
    browser.wait_for("document.querySelectorAll('.md-search-result__item').length > 0")
    # Each result is a page: its link and title first, the matching sections of the page within it.
    results = browser.evaluate("[...document.querySelectorAll('.md-search-result__item')].map(item => "
                               "item.querySelector('a')).map(a => [a.getAttribute('href'), "
                               "a.querySelector('h1, h2').textContent.trim()])")
    browser.screenshot(SCREENSHOTS / "search-rotary-1400.png")
    first_page, first_title = results[0]
    assert re.search(r"/RotaryEmbedding\.html", first_page) and first_title.startswith("RotaryEmbedding ·")
    titles = [title for _, title in results]
    assert len(titles) == len(set(titles))
    assert not {"Inputs", "Outputs", "Attributes"} & set(titles)


def test_the_palette_toggle_switches_to_the_dark_theme(browser, served):
    browser.open(served + ATTENTION, 1400)
    before = browser.evaluate("getComputedStyle(document.body).backgroundColor")
    browser.evaluate("[...document.querySelectorAll('[data-md-component=palette] label')]"
                     ".find(label => label.offsetParent !== null).click()")
    browser.wait_for("document.body.getAttribute('data-md-color-scheme') === 'slate'")
    after = browser.evaluate("getComputedStyle(document.body).backgroundColor")
    browser.screenshot(SCREENSHOTS / "attention-dark-1400.png")
    browser.evaluate("localStorage.clear()")
    assert before != after


def test_pages_load_nothing_from_another_host(browser, served):
    browser.open(served + ATTENTION, 1400)
    others = browser.evaluate("performance.getEntriesByType('resource').map(entry => entry.name)"
                              ".filter(name => !name.startsWith(location.origin))")
    assert not others
