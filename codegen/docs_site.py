"""``make docs``: the generated reference as a static site with search (MkDocs, strict).

The site's sources are staged in ``.build/docs-src`` with the repository's layout kept
(``generated/**/*.md`` and the opdefs format guide), so every relative link of the
Markdown resolves there exactly as it does in the repository; MkDocs then builds
``.build/site`` from ``mkdocs.yml`` and fails on any warning (a broken link among them).
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
STAGE = REPO / ".build" / "docs-src"
SITE = REPO / ".build" / "site"
#: What the site is built from, relative to the repository: folders (their pages and pictures) and files.
SOURCES = ("generated", "opdefs/README.md")
_SUFFIXES = (".md", ".svg")
HOME = """# opspec reference

- [Operator reference](generated/docs/README.md): every domain, operator, opset, type set and rule.
- [onnxruntime's operators](generated/onnxruntime/docs/README.md), layered over the standard set.
- [The opdefs format](opdefs/README.md): how an operator is written in YAML.

Search (at the top of every page) finds an operator by its name or by a word of its summary.
"""


def stage(repo: Path = REPO, stage_dir: Path = STAGE) -> Path:
    """Copy the site's sources into ``stage_dir`` (emptied first) and write its home page."""
    if stage_dir.exists():
        shutil.rmtree(stage_dir)
    for source in SOURCES:
        path = repo / source
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.suffix in _SUFFIXES)
        for file in files:
            target = stage_dir / file.relative_to(repo)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(file, target)
    (stage_dir / "index.md").write_text(HOME, encoding="utf-8")
    return stage_dir


def build(repo: Path = REPO) -> int:
    """Stage and build the site; MkDocs' exit status (non-zero on any warning)."""
    stage(repo)
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict",
                           "--config-file", str(repo / "mkdocs.yml")], cwd=repo).returncode


if __name__ == "__main__":
    sys.exit(build())
