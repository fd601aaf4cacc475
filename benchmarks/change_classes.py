"""Compare opspec's computed change classes with the version-conversion adapters onnx
writes by hand (``onnx/version_converter/convert.h`` in the installed onnx package).

``.venv/bin/python benchmarks/change_classes.py`` prints, for every upgrade step of a
built-in operator (version N-1 -> N, where N is a since-version), what onnx registers
(a CompatibleAdapter that keeps the node as it is, a rewriting adapter, or nothing) next
to our class, then the counts.
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

_COMPATIBLE = re.compile(r'make_unique<CompatibleAdapter>\(\s*"(\w+)",\s*OpSetID\((\d+)\),\s*OpSetID\((\d+)\)')
_NAMED = re.compile(r'make_unique<(\w+)>\(\s*"(\w+)",\s*OpSetID\((\d+)\),\s*OpSetID\((\d+)\)')
_CLASS = re.compile(r'make_unique<([A-Za-z]+)_(\d+)_(\d+)>\(\s*(?:"(\w+)")?\s*\)')
_FUNCTION = re.compile(r'registerAdapter\(\s*"(\w+)",\s*(\d+),\s*(\d+),')
_KEEP, _REWRITE = "keeps the node", "rewrites the node"


def onnx_adapters() -> dict[tuple[str, int], str]:
    """Upgrade adapters by (op, target version): keeps the node, or rewrites it."""
    import onnx

    text = (Path(onnx.__file__).parent / "version_converter" / "convert.h").read_text()
    found: dict[tuple[str, int], str] = {}
    for op, low, high in _COMPATIBLE.findall(text):
        if int(high) == int(low) + 1:
            found[op, int(high)] = _KEEP
    for kind, op, low, high in _NAMED.findall(text):
        if kind != "CompatibleAdapter" and int(high) == int(low) + 1:
            found[op, int(high)] = _REWRITE
    named = [(op or kind, low, high) for kind, low, high, op in _CLASS.findall(text)]
    for op, low, high in [*named, *_FUNCTION.findall(text)]:
        if int(high) == int(low) + 1:
            found[op, int(high)] = _REWRITE
    return found


def main() -> None:
    import opspec

    adapters = onnx_adapters()
    table: Counter[tuple[str, str]] = Counter()
    examples: dict[tuple[str, str], list[str]] = {}
    for schema in opspec.get_all_schemas_with_history():
        if schema.domain != "" or not schema.change_class:
            continue
        adapter = adapters.get((schema.name, schema.since_version), "no adapter")
        key = (adapter, schema.change_class)
        table[key] += 1
        examples.setdefault(key, []).append(f"{schema.name}-{schema.since_version}")
    print("| onnx adapter | opspec class | steps | examples |\n|---|---|---|---|")
    for (adapter, cls), count in sorted(table.items()):
        print(f"| {adapter} | {cls} | {count} | {', '.join(examples[adapter, cls][:6])} |")


if __name__ == "__main__":
    main()
