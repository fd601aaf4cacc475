"""The quick reader of op files' plain YAML reads every text as libyaml does, or gives up.

libyaml's event stream (the reading used when the quick reader gives up) is the reference: a
document the quick reader returns must equal libyaml's in every value, type and location.
"""
from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from opspec.codegen import source
from opspec.codegen.located import Map, Seq
from opspec.codegen.yaml_subset import read_subset

OPDEFS = Path(source.__file__).resolve().parent.parent / "opdefs"
OP_FILES = sorted(OPDEFS.rglob("*.yaml"))


def quick(text: str) -> Any:
    return read_subset(text, "f.yaml", source.MAX_DEPTH, source._plain_text)


def reference(text: str) -> Any:
    """libyaml's document of ``text`` (an exception when libyaml or the located builder refuses it)."""
    return source._build_with(source._FastLoader, text, "f.yaml")


def differences(mine: Any, theirs: Any, where: str = "$") -> str | None:
    """Where two located documents differ (values, types, order, locations), if anywhere."""
    if type(mine) is not type(theirs):
        return f"{where}: {type(mine).__name__} against {type(theirs).__name__}"
    if isinstance(mine, Map):
        for field in ("location", "key_locations", "value_locations", "quoted"):
            if getattr(mine, field) != getattr(theirs, field):
                return f"{where}: {field} {getattr(mine, field)} against {getattr(theirs, field)}"
        if list(mine) != list(theirs):
            return f"{where}: keys {list(mine)} against {list(theirs)}"
        return next((found for key in mine if (found := differences(mine[key], theirs[key], f"{where}.{key}"))), None)
    if isinstance(mine, Seq):
        if (mine.location, mine.item_locations, len(mine)) != (theirs.location, theirs.item_locations, len(theirs)):
            return f"{where}: {mine.location} {mine.item_locations} against {theirs.location} {theirs.item_locations}"
        return next((found for index, (a, b) in enumerate(zip(mine, theirs))
                     if (found := differences(a, b, f"{where}[{index}]"))), None)
    return None if mine == theirs else f"{where}: {mine!r} against {theirs!r}"


def agrees(text: str) -> None:
    """The quick reader gives up on ``text``, or reads what libyaml reads."""
    mine = quick(text)
    if mine is None:
        return
    try:
        theirs = reference(text)
    except (yaml.YAMLError, source.SourceError) as error:
        pytest.fail(f"the quick reader accepted a text libyaml refuses ({error}):\n{text}")
    found = differences(mine, theirs)
    assert found is None, f"{found}\n{text}"


def test_every_built_in_op_file_is_read_quickly_and_exactly():
    assert OP_FILES
    for path in OP_FILES:
        text = path.read_text(encoding="utf-8")
        mine = quick(text)
        assert mine is not None, f"{path} is not read by the quick reader"
        assert differences(mine, reference(text)) is None, path


@pytest.mark.parametrize("text", [
    "a: 1\nb: [1, 2.5, x, 'y', \"z\"]\nc: {d: true, e: null, f: ~}\n",
    "doc: |\n  one\n\n    two\n  # kept\n\n\nnext: x\n",
    "list:\n- a\n- b: 1\n  c: 2\n- {k: v}\nafter: 1\n",
    "top:\n  - x   # comment\n  -   y\n  - 'it''s'\n",
    "k: a:b #c\nl: x#y\nl2: 1# c\nm: -1\nn: 0x1F\no: 1_000\np: .inf\nq: on\n",
    "1: one\n2.5: two\nfalse: three\n",
    "a:\n  # comment\n\n  b:\n    c: [[1, 2], [3, {x: [4]}]]\n",
    "e: []\nf: {}\ng: [ ]\n",
])
def test_what_op_files_write_is_read_quickly_and_exactly(text):
    assert quick(text) is not None
    agrees(text)


@pytest.mark.parametrize("text", [
    "a: b\n  c\n",                      # a plain scalar continued on the next line
    "a: 'b\n  c'\n",                    # a quoted scalar over two lines
    "a: \"b\\tc\"\n",                   # an escape
    "a: |-\n  x\n",                     # chomping
    "a: >\n  x\n",                      # folding
    "a: |\n\n  x\n",                    # a leading empty line
    "a: |\n  x",                        # no final line break
    "a:\n",                             # a null value
    "a:\nb: 1\n",
    "a: &x 1\nb: *x\n",                 # an anchor and an alias
    "a: !!str 1\n",                     # a tag
    "a: 1\na: 2\n",                     # a duplicate key
    "---\na: 1\n",                      # a document marker
    "a: 1\r\nb: 2\r\n",                 # carriage returns
    "\ufeffa: 1\n",                     # a byte-order mark
    "a:\t1\n",                          # a tab
    "a: [1, 2,]\n",                     # a trailing comma
    "a: [1,\n  2]\n",                   # a flow collection over two lines
    '"a": 1\n',                         # a quoted key
    "a: 1 # c\n  b: 2\n",               # a stray line
    "a: [1]# c\n",                      # a comment not after a space
    "<<: {a: 1}\n",                     # a merge key
    "- - a\n",                          # a sequence in a sequence's item
    "a: b: c\n",                        # a mapping value where none may be
    "? a\n: b\n",                       # a complex key
    "a: 1\n...\n",
    "",
    "# only a comment\n",
])
def test_anything_else_is_left_to_libyaml(text):
    assert quick(text) is None


def test_nesting_too_deep_is_left_to_libyaml():
    deep = "".join(f"{'  ' * level}k{level}:\n" for level in range(source.MAX_DEPTH + 1)) + "  " * 65 + "x: 1\n"
    assert quick(deep) is None
    assert quick("a: " + "[" * source.MAX_DEPTH + "]" * source.MAX_DEPTH + "\n") is None
    shallow = "".join(f"{'  ' * level}k{level}:\n" for level in range(10)) + "  " * 10 + "x: 1\n"
    agrees(shallow)


_ALPHABET = list(" \n-:#'\"[]{},|>&*!%@?~`\t\r.0123456789aeTx_\\") + ["\u00a0", "\u2028", "\ufeff", "é", "\x85"]


def _mutated(text: str, chance: random.Random) -> str:
    for _ in range(chance.randint(1, 3)):
        lines = text.split("\n")
        row = chance.randrange(len(lines))
        kind = chance.randrange(6)
        if kind == 0:  # a character inserted
            at = chance.randint(0, len(text))
            text = text[:at] + chance.choice(_ALPHABET) + text[at:]
        elif kind == 1 and text:  # a character deleted
            at = chance.randrange(len(text))
            text = text[:at] + text[at + 1:]
        elif kind == 2:  # a line indented more or less
            shift = chance.choice((-2, -1, 1, 2))
            lines[row] = " " * shift + lines[row] if shift > 0 else lines[row][-shift:]
            text = "\n".join(lines)
        elif kind == 3:  # a line repeated
            lines.insert(row, lines[row])
            text = "\n".join(lines)
        elif kind == 4:  # two lines swapped
            other = chance.randrange(len(lines))
            lines[row], lines[other] = lines[other], lines[row]
            text = "\n".join(lines)
        else:  # the text cut short
            text = text[:chance.randint(0, len(text))]
    return text


def test_mutated_op_files_are_read_as_libyaml_reads_them_or_left_to_it():
    chance = random.Random(20261127)
    texts = [path.read_text(encoding="utf-8") for path in OP_FILES]
    read = 0
    for _ in range(3000):
        text = _mutated(chance.choice(texts), chance)
        read += quick(text) is not None
        agrees(text)
    assert read > 300  # many mutants stay in the subset, so the comparison is not empty


def _generated(chance: random.Random, depth: int = 0, indent: int = 0) -> str:
    """A small block document built from the pieces op files use (and a few they do not)."""
    scalars = ["x", "T?", "int >= 1 = 1", "1", "-2", "0.5", "true", "null", "~", "'q''s'", '"a: b"', "a#b",
               "[1, 2]", "{a: b, c: [d]}", "[]", "{}", "x # note", "a:b", "on", "1e3", "'", "- y", "&a x", "*a"]
    lines = []
    for index in range(chance.randint(1, 4)):
        key = chance.choice(["k", "key_2", "3", "X", f"k{index}", "a b", "k"])
        kind = chance.randrange(6) if depth < 3 else 0
        pad = " " * indent
        if kind <= 1:
            lines.append(f"{pad}{key}: {chance.choice(scalars)}")
        elif kind == 2:
            lines.append(f"{pad}{key}: |\n{pad}  line one\n\n{pad}    two\n")
        elif kind == 3:
            lines.append(f"{pad}{key}:\n" + _generated(chance, depth + 1, indent + chance.choice((1, 2, 4))))
        elif kind == 4:
            step = chance.choice((0, 2))
            items = [f"{pad}{' ' * step}- {chance.choice(scalars)}" for _ in range(chance.randint(1, 3))]
            lines.append(f"{pad}{key}:\n" + "\n".join(items))
        else:
            inner = _generated(chance, depth + 1, indent + 4).split("\n", 1)
            lines.append(f"{pad}{key}:\n{pad}  - {inner[0].lstrip()}\n" + (inner[1] if len(inner) > 1 else ""))
        if chance.random() < 0.2:
            lines.append(f"{' ' * chance.randint(0, indent + 2)}# a comment")
    return "\n".join(line.rstrip("\n") for line in lines) + "\n"


def test_generated_documents_are_read_as_libyaml_reads_them_or_left_to_it():
    chance = random.Random(11)
    read = 0
    for _ in range(3000):
        text = _generated(chance)
        if chance.random() < 0.5:
            text = _mutated(text, chance)
        read += quick(text) is not None
        agrees(text)
    assert read > 300
