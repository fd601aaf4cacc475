"""``make docs``: the reference as a static site with search (MkDocs, strict).

The site's sources are staged in ``.build/docs-src``: the site's own pages and assets (``docs/``),
the generated reference (``generated/**/*.md`` and its pictures) and the opdefs format guide, with
the repository's layout kept so every relative link of the Markdown resolves there exactly as it
does in the repository; the command-line and Python API pages are written there from the parsers
and docstrings they describe. The navigation (a section per domain listing its operators) is
written into ``.build/mkdocs.yml``, the repository's ``mkdocs.yml`` with the staged paths and the
nav added; MkDocs then builds ``.build/site`` and fails on any warning (a broken link among them).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

import yaml

REPO = Path(__file__).resolve().parent.parent
STAGE = REPO / ".build" / "docs-src"
SITE = REPO / ".build" / "site"
#: What the site is built from, relative to the repository: folders (their pages and pictures) and files.
SOURCES = ("generated", "opdefs/README.md")
#: The site's own pages and assets, copied to the top of the staged sources.
SITE_PAGES = "docs"
_SUFFIXES = (".md", ".svg", ".css", ".js")
#: The op sets with a reference of their own: their docs folder and the title of their section.
REFERENCES = (("generated/docs", "ONNX operators"), ("generated/onnxruntime/docs", "onnxruntime operators"))
#: An op set's pages beside its domains', in the order the nav lists them.
SHARED_PAGES = (("types.md", "Type sets"), ("rules.md", "Inference rules"))
#: A domain's pages beside its operators', in the order the nav lists them.
DOMAIN_PAGES = (("README.md", "Overview"), ("changelog.md", "Changes by opset"), ("coverage.md", "Coverage"),
                ("status.md", "Inference status"))
#: Pages that list every operator (so any op's name finds them): left out of search.
_LISTS_EVERY_OP = re.compile(r"(^|/)(opset-\d+|changelog|status)\.md$")
#: How much more an operator page weighs in search than other pages.
OP_PAGE_BOOST = 4

NavItem = Union[str, dict[str, Any]]


@dataclass(frozen=True)
class Staged:
    """What staging wrote: the folder and the navigation of its pages."""

    folder: Path
    nav: list[NavItem]


def stage(repo: Path = REPO, stage_dir: Path = STAGE) -> Path:
    """Copy the site's sources into ``stage_dir`` (emptied first) and write its generated pages."""
    return _stage(repo, stage_dir).folder


def _stage(repo: Path, stage_dir: Path) -> Staged:
    if stage_dir.exists():
        shutil.rmtree(stage_dir)
    for source in SOURCES:
        _copy(repo / source, stage_dir / source)
    _copy(repo / SITE_PAGES, stage_dir)
    _write_reference_pages(stage_dir)
    nav: list[NavItem] = [{"Home": "index.md"}, {"Command line": "cli.md"},
                          {"Python API": [{"opspec": "api/opspec.md"}, {"opspec.onnxruntime": "api/onnxruntime.md"}]}]
    for folder, title in REFERENCES:
        if (stage_dir / folder / "README.md").is_file():
            nav.append({title: _reference_nav(stage_dir, folder, title)})
    nav.append({"The opdefs format": "opdefs/README.md"})
    return Staged(stage_dir, nav)


def _copy(source: Path, target_root: Path) -> None:
    files = [source] if source.is_file() else sorted(p for p in source.rglob("*") if p.suffix in _SUFFIXES)
    for file in files:
        target = target_root if source.is_file() else target_root / file.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(file, target)


def _reference_nav(stage_dir: Path, folder: str, section: str) -> list[NavItem]:
    """An op set's section: its overview and shared pages, then per domain its own pages and its
    operators by name. Pages are titled with their domain or op set (browser tabs and search
    results tell two domains' operators apart); pages that list every operator are kept out of
    search."""
    _front_matter(stage_dir / folder / "README.md", {"title": section})
    nav: list[NavItem] = [f"{folder}/README.md"]
    for name, title in SHARED_PAGES:
        if (stage_dir / folder / name).is_file():
            _front_matter(stage_dir / folder / name, {"title": f"{title} · {section}"})
            nav.append({title: f"{folder}/{name}"})
    for domain in sorted(p for p in (stage_dir / folder).iterdir() if (p / "README.md").is_file()):
        pages: list[NavItem] = []
        for name, title in DOMAIN_PAGES:
            if (domain / name).is_file():
                _front_matter(domain / name, {"title": f"{title} · {domain.name}"})
                pages.append({title: f"{folder}/{domain.name}/{name}"})
        ops = sorted((p for p in domain.glob("*.md") if p.name[:1].isupper() and p.name != "README.md"),
                     key=lambda p: p.stem.lower())
        for op in ops:
            _front_matter(op, {"title": f"{op.stem} · {domain.name}", "search": {"boost": OP_PAGE_BOOST}})
            pages.append({op.stem: f"{folder}/{domain.name}/{op.name}"})
        for page in domain.glob("*.md"):
            if _LISTS_EVERY_OP.search(page.name):
                _front_matter(page, {"search": {"exclude": True}})
        nav.append({domain.name: pages})
    return nav


def _front_matter(page: Path, meta: dict[str, Any]) -> None:
    page.write_text(f"---\n{yaml.safe_dump(meta, sort_keys=False)}---\n\n{page.read_text(encoding='utf-8')}",
                    encoding="utf-8")


def _write_reference_pages(stage_dir: Path) -> None:
    """The command-line page from the command's parser; the API pages from the modules' names."""
    import opspec
    import opspec.onnxruntime
    from opspec.cli import _parser
    from opspec.codegen.docs_api import api_page
    from opspec.codegen.docs_cli import cli_page

    (stage_dir / "cli.md").write_text(cli_page(_parser()), encoding="utf-8")
    api = stage_dir / "api"
    api.mkdir(parents=True, exist_ok=True)
    (api / "opspec.md").write_text(api_page("The opspec module", opspec, list(opspec.__all__)), encoding="utf-8")
    (api / "onnxruntime.md").write_text(api_page("The opspec.onnxruntime module", opspec.onnxruntime,
                                                 [name for name in opspec.onnxruntime.__all__
                                                  if name not in ("REGISTRY", "SchemaError")]), encoding="utf-8")


def config(repo: Path, staged: Staged, site_dir: Path) -> Path:
    """Write the build's configuration beside the staged folder: ``mkdocs.yml`` with the staged
    paths, the navigation and the hook that compacts each page (``docs_compact``)."""
    settings = yaml.safe_load((repo / "mkdocs.yml").read_text(encoding="utf-8"))
    settings.update(docs_dir=str(staged.folder), site_dir=str(site_dir), nav=staged.nav,
                    hooks=[str(Path(__file__).with_name("docs_compact.py"))])
    path = staged.folder.parent / f"{staged.folder.name}.mkdocs.yml"
    path.write_text(yaml.safe_dump(settings, sort_keys=False), encoding="utf-8")
    return path


#: The theme's notice about its successor, printed on every build, left out.
QUIET = {"NO_MKDOCS_2_WARNING": "1"}


def mkdocs_command(config_file: Path) -> list[str]:
    """The command that builds a site from ``config_file``, strict (a warning fails it)."""
    return [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config_file)]


def build(repo: Path = REPO, stage_dir: Path = STAGE, site_dir: Path = SITE) -> int:
    """Stage and build the site; MkDocs' exit status (non-zero on any warning)."""
    return subprocess.run(mkdocs_command(config(repo, _stage(repo, stage_dir), site_dir)), cwd=repo,
                          env={**os.environ, **QUIET}).returncode


__all__ = ["SITE", "STAGE", "Staged", "build", "config", "mkdocs_command", "stage"]


if __name__ == "__main__":
    sys.exit(build())
