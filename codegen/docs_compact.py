"""An MkDocs hook of the reference site: each page's HTML without the indentation its templates
leave between tags (about half of a page whose sidebar lists a domain's operators).

A run of white space that holds a line break becomes one line break, outside ``<pre>`` and
``<textarea>``: the page renders the same (HTML collapses such runs anyway) and inline scripts
keep their line breaks, so their meaning is unchanged.
"""
from __future__ import annotations

import re
from typing import Any

_KEPT = re.compile(r"(<pre\b.*?</pre>|<textarea\b.*?</textarea>)", re.DOTALL | re.IGNORECASE)
_INDENTED_BREAK = re.compile(r"[ \t]*\n\s*")


def compact(html: str) -> str:
    """``html`` with every white-space run that holds a line break, outside preformatted text, as
    one line break."""
    parts = _KEPT.split(html)
    return "".join([part if index % 2 else _INDENTED_BREAK.sub("\n", part) for index, part in enumerate(parts)])


def on_post_page(output: str, **_: Any) -> str:
    """MkDocs' hook for a page's finished HTML."""
    return compact(output)


__all__ = ["compact", "on_post_page"]
