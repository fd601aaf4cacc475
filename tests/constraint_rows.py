"""How many attribute rows of the ai.onnx operator pages show a value constraint.

Each page of ``generated/docs/ai.onnx`` has one attribute table, for the operator's newest
version; a row counts when its Constraint cell is not empty. Run as a script to print the
counts: ``python tests/constraint_rows.py``.
"""
from __future__ import annotations

from pathlib import Path

PAGES = Path(__file__).resolve().parent.parent / "generated" / "docs" / "ai.onnx"
_HEADER = "| Name | Type | Default | Constraint | Description |"


def attribute_rows(page: str) -> list[tuple[str, str]]:
    """The (attribute, constraint cell) of every row of a page's attribute table."""
    rows: list[tuple[str, str]] = []
    lines = page.splitlines()
    for start, line in enumerate(lines):
        if line.strip() != _HEADER:
            continue
        for row in lines[start + 2:]:
            if not row.startswith("| `"):
                break
            cells = [cell.strip() for cell in row.strip().strip("|").split(" | ")]
            rows.append((cells[0].strip("`"), cells[3]))
    return rows


def count_rows(folder: Path = PAGES) -> tuple[int, int]:
    """(rows with a constraint, all attribute rows) over the pages in ``folder``."""
    cells = [cell for page in sorted(folder.glob("*.md")) for _, cell in attribute_rows(page.read_text())]
    return sum(1 for cell in cells if cell), len(cells)


if __name__ == "__main__":
    constrained, total = count_rows()
    print(f"{constrained} of {total} attribute rows on the ai.onnx op pages show a constraint")
