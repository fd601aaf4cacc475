"""The scan's report as one self-contained HTML page: a table of every model, sorted by a click
on a column's heading and narrowed by a text filter and a status menu. Nothing is fetched from
the network; the page works from a file."""
from __future__ import annotations

from html import escape
from typing import Any, Iterable

from opspec.batch.records import Status

#: Columns: heading, and whether it sorts as a number.
COLUMNS = (("Model", False), ("Status", False), ("Problems", True), ("Codes", False), ("Nodes", True),
           ("Values", True), ("Unknown ops", False), ("Opsets", False), ("Runs", False), ("Seconds", True))

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.3em; }
.controls { margin: 0.8em 0; display: flex; gap: 1em; align-items: center; flex-wrap: wrap; }
input[type=search] { width: 22em; padding: 0.3em; }
table { border-collapse: collapse; width: 100%; }
th, td { border-bottom: 1px solid #ddd; padding: 0.3em 0.5em; text-align: left; vertical-align: top; }
th { cursor: pointer; user-select: none; background: #f4f4f4; position: sticky; top: 0; }
th[aria-sort=ascending]::after { content: " \\25B2"; }
th[aria-sort=descending]::after { content: " \\25BC"; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
td.path { word-break: break-all; }
.ok { color: #17692b; } .problems { color: #9a5b00; } .failed { color: #b00020; font-weight: bold; }
.message { color: #555; font-size: 0.9em; }
"""

_SCRIPT = """
(function () {
  const table = document.getElementById("models");
  const body = table.tBodies[0];
  const filter = document.getElementById("filter");
  const status = document.getElementById("status");
  const shown = document.getElementById("shown");
  function apply() {
    const words = filter.value.toLowerCase().split(/\\s+/).filter(Boolean);
    const wanted = status.value;
    let count = 0;
    for (const row of body.rows) {
      const text = row.textContent.toLowerCase();
      const visible = (!wanted || row.dataset.status === wanted) && words.every(word => text.includes(word));
      row.hidden = !visible;
      if (visible) count += 1;
    }
    shown.textContent = count + " of " + body.rows.length + " models shown";
  }
  function sortBy(heading) {
    const column = heading.cellIndex;
    const numeric = heading.dataset.numeric === "1";
    const ascending = heading.getAttribute("aria-sort") !== "ascending";
    for (const other of table.tHead.rows[0].cells) other.removeAttribute("aria-sort");
    heading.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    const key = row => {
      const cell = row.cells[column];
      return numeric ? Number(cell.dataset.value) : cell.textContent.toLowerCase();
    };
    const rows = Array.from(body.rows);
    rows.sort((a, b) => {
      const x = key(a), y = key(b);
      return (x < y ? -1 : x > y ? 1 : 0) * (ascending ? 1 : -1);
    });
    body.append(...rows);
  }
  for (const heading of table.tHead.rows[0].cells) heading.addEventListener("click", () => sortBy(heading));
  filter.addEventListener("input", apply);
  status.addEventListener("change", apply);
  apply();
})();
"""


def render(records: Iterable[dict[str, Any]], title: str = "opspec scan") -> str:
    """The page for the report's lines."""
    rows = [_row(record) for record in records]
    options = "".join(f'<option value="{status.value}">{status.value}</option>' for status in Status)
    headings = "".join(f'<th data-numeric="{int(numeric)}">{escape(name)}</th>' for name, numeric in COLUMNS)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><style>{_STYLE}</style></head>'
            f'<body><h1>{escape(title)}</h1><div class="controls">'
            '<input type="search" id="filter" placeholder="Filter: words in any column" aria-label="Filter">'
            f'<select id="status" aria-label="Status"><option value="">every status</option>{options}</select>'
            f'<span id="shown">{len(rows)} models</span></div>'
            f'<table id="models"><thead><tr>{headings}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
            f"<script>{_SCRIPT}</script></body></html>\n")


def _row(record: dict[str, Any]) -> str:
    status = str(record.get("status", ""))
    runtime = record.get("runtime")
    runs = "" if runtime is None else ("yes" if runtime.get("will_run") else "no")
    codes = ", ".join(f"{code} ({count})" for code, count in record.get("problems", {}).items())
    if status == Status.FAILED.value:
        codes = f'{escape(str(record.get("failure", "")))}: <span class="message">{escape(str(record.get("message", "")))}</span>'
    else:
        codes = escape(codes)
    opsets = ", ".join(f"{domain} {version}" for domain, version in record.get("opsets", {}).items())
    seconds = sum(record.get("timings", {}).values())
    cells = [f'<td class="path">{escape(str(record.get("path", "")))}</td>',
             f'<td class="{escape(status)}">{escape(status)}</td>',
             _number(record.get("problem_count")), f"<td>{codes}</td>", _number(record.get("nodes")),
             _number(record.get("values")), f'<td>{escape(", ".join(record.get("unknown_ops", [])))}</td>',
             f"<td>{escape(opsets)}</td>", f"<td>{runs}</td>", _number(seconds, f"{seconds:.3f}")]
    return f'<tr data-status="{escape(status)}">{"".join(cells)}</tr>'


def _number(value: Any, text: str | None = None) -> str:
    if not isinstance(value, (int, float)):
        return '<td class="number" data-value="-1"></td>'
    return f'<td class="number" data-value="{value}">{escape(text if text is not None else f"{value:,}")}</td>'


__all__ = ["COLUMNS", "render"]
